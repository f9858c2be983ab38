/*
 * ctrl/conditions.h - status conditions as apimachinery's meta package
 * handles them (SetStatusCondition, FindStatusCondition, ...), on a JSON
 * array of metav1.Condition objects:
 *
 *     {"type": "Available", "status": "True", "reason": "Ready",
 *      "message": "...", "observedGeneration": 3,
 *      "lastTransitionTime": "2026-01-01T00:00:00Z"}
 *
 * lastTransitionTime moves only when a condition's status changes; times
 * are the caller's clock (ctrl_ctx_now: virtual in scenarios), so runs stay
 * deterministic.
 *
 * Threads: reentrant; an array belongs to one thread at a time.
 */
#ifndef CTRL_CONDITIONS_H
#define CTRL_CONDITIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A condition to set. Strings are copied. */
typedef struct ctrl_condition {
    const char *type;   /* required, e.g. "Available" */
    const char *status; /* "True", "False" or "Unknown" (NULL = "Unknown") */
    const char *reason; /* CamelCase; NULL = "" */
    const char *message;
    int64_t observed_generation; /* the .metadata.generation acted on; 0 = not written */
    /* When the status changed; NULL = now_ns (the argument below). */
    const char *last_transition_time;
} ctrl_condition;

/*
 * SetStatusCondition: add cond to conditions (an array), or change the
 * entry of that type: status (and lastTransitionTime, to cond's or now_ns
 * as RFC 3339) only when the status differs, reason, message and
 * observedGeneration when they differ. Returns true when the array
 * changed: write the status back then. False for a NULL array or type.
 */
bool ctrl_condition_set(json_t *conditions, const ctrl_condition *cond, int64_t now_ns);

/* FindStatusCondition: the entry of that type (borrowed), or NULL. */
json_t *ctrl_condition_find(const json_t *conditions, const char *type);

/* RemoveStatusCondition: true when an entry was removed. */
bool ctrl_condition_remove(json_t *conditions, const char *type);

/* IsStatusConditionTrue / False / PresentAndEqual. */
bool ctrl_condition_is_true(const json_t *conditions, const char *type);
bool ctrl_condition_is_false(const json_t *conditions, const char *type);
bool ctrl_condition_is_present_and_equal(const json_t *conditions, const char *type,
                                         const char *status);

/*
 * obj's status.conditions (borrowed), created empty (with status) when
 * missing, so that ctrl_condition_set(ctrl_obj_conditions(obj), ...) works
 * on any object. NULL when obj is not an object or status.conditions is not
 * an array.
 */
json_t *ctrl_obj_conditions(json_t *obj);

#ifdef __cplusplus
}
#endif

#endif
