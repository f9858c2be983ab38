/*
 * podutil.h - small pure helpers on objects that several built-in
 * controllers share: pod states, template hashes, times, label selectors.
 *
 * All functions are pure (no I/O, no locks): any thread. Arguments are
 * borrowed.
 */
#ifndef KC_PODUTIL_H
#define KC_PODUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* ---- pods ---- */

/* status.conditions[type=Ready].status == "True". */
bool kc__pod_ready(const json_t *pod);
/* Ready, and for at least min_ready_s seconds at wall time now_wall_ns
 * (the Ready condition's lastTransitionTime); min_ready_s 0 = ready. */
bool kc__pod_available(const json_t *pod, int64_t min_ready_s, int64_t now_wall_ns);
/* The Ready condition's lastTransitionTime in wall ns, or -1 when there is
 * none or it is malformed. */
int64_t kc__pod_ready_since(const json_t *pod);
/* Not Succeeded or Failed, and not being deleted (controller.IsPodActive). */
bool kc__pod_active(const json_t *pod);
/* status.phase, or "Pending" when unset. */
const char *kc__pod_phase(const json_t *pod);
/* The condition of that type in obj's status.conditions (borrowed), or NULL. */
json_t *kc__condition(const json_t *obj, const char *type);

/* ---- hashes ---- */

/*
 * The pod-template-hash of a template (as the Deployment controller
 * computes ComputeHash: FNV-1a 32 over the template, plus the collision
 * count when non-negative), written into out (at least 11 bytes) in
 * Kubernetes' safe alphabet (no vowels, no look-alikes). The template is
 * serialised as compact JSON with sorted keys, so equal templates hash
 * equal whatever their key order.
 */
void kc__template_hash(const json_t *tmpl, int64_t collision_count, char *out, size_t len);
/* FNV-1a 32 of a byte string, for other derived names and choices. */
uint32_t kc__fnv32(const void *data, size_t len, uint32_t seed);

/* ---- times ---- */

/* RFC 3339 in UTC with seconds ("2026-01-02T03:04:05Z"), as metav1.Time
 * writes it, from wall nanoseconds; out holds at least 21 bytes. */
void kc__rfc3339(int64_t wall_ns, char *out, size_t len);
/* The inverse (also with fractional seconds and offsets); -1 if malformed. */
int64_t kc__parse_time(const char *s);

/* ---- label selectors (metav1.LabelSelector) ---- */

/*
 * Does labels (an object of strings; NULL = none) match sel (a
 * LabelSelector: matchLabels and matchExpressions with In, NotIn, Exists,
 * DoesNotExist)? 1 yes, 0 no, -1 malformed. An empty selector matches
 * everything; a NULL one matches nothing (as LabelSelectorAsSelector).
 */
int kc__selector_matches(const json_t *sel, const json_t *labels);
/* Does labels match every key=value of a plain map (a Service's selector,
 * a nodeSelector)? An empty or NULL map matches everything. */
bool kc__map_matches(const json_t *map, const json_t *labels);
/* The selector in the string form list and watch take ("a=b,c in (d,e)"),
 * a new string the caller frees, or NULL if malformed or out of memory. */
char *kc__selector_string(const json_t *sel);

#endif
