/*
 * conditions.c - see ctrl/conditions.h. Reentrant.
 */
#include "ctrl/conditions.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctrl/clock.h"

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

/* Set member k of c to the string v when it differs: true when it did. */
static bool set_str(json_t *c, const char *k, const char *v)
{
    if (!strcmp(or_empty(json_string_value(json_object_get(c, k))), v) &&
        json_is_string(json_object_get(c, k)))
        return false;
    json_object_set_new(c, k, json_string(v));
    return true;
}

static void rfc3339(int64_t ns, char *buf, size_t len)
{
    time_t secs = (time_t)(ns / CTRL_SECOND);
    if (ns < 0 && ns % CTRL_SECOND)
        secs--;
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

json_t *ctrl_condition_find(const json_t *conditions, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(conditions, i, c)
    {
        if (type && !strcmp(or_empty(json_string_value(json_object_get(c, "type"))), type))
            return c;
    }
    return NULL;
}

bool ctrl_condition_set(json_t *conditions, const ctrl_condition *cond, int64_t now_ns)
{
    if (!json_is_array(conditions) || !cond || !cond->type || !*cond->type)
        return false;
    const char *status = cond->status ? cond->status : "Unknown";
    char now[32];
    const char *when = cond->last_transition_time;
    if (!when) {
        rfc3339(now_ns, now, sizeof now);
        when = now;
    }
    json_t *c = ctrl_condition_find(conditions, cond->type);
    if (!c) {
        c = json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", cond->type, "status", status,
                      "lastTransitionTime", when, "reason", or_empty(cond->reason), "message",
                      or_empty(cond->message));
        if (!c)
            return false;
        if (cond->observed_generation)
            json_object_set_new(c, "observedGeneration", json_integer(cond->observed_generation));
        return json_array_append_new(conditions, c) == 0;
    }
    bool changed = false;
    if (set_str(c, "status", status)) {
        json_object_set_new(c, "lastTransitionTime", json_string(when));
        changed = true;
    }
    changed |= set_str(c, "reason", or_empty(cond->reason));
    changed |= set_str(c, "message", or_empty(cond->message));
    json_t *gen = json_object_get(c, "observedGeneration");
    if (cond->observed_generation &&
        (!json_is_integer(gen) || json_integer_value(gen) != cond->observed_generation)) {
        json_object_set_new(c, "observedGeneration", json_integer(cond->observed_generation));
        changed = true;
    }
    return changed;
}

bool ctrl_condition_remove(json_t *conditions, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(conditions, i, c)
    {
        if (type && !strcmp(or_empty(json_string_value(json_object_get(c, "type"))), type))
            return json_array_remove(conditions, i) == 0;
    }
    return false;
}

bool ctrl_condition_is_present_and_equal(const json_t *conditions, const char *type,
                                         const char *status)
{
    json_t *c = ctrl_condition_find(conditions, type);
    return c && status && !strcmp(or_empty(json_string_value(json_object_get(c, "status"))), status);
}

bool ctrl_condition_is_true(const json_t *conditions, const char *type)
{
    return ctrl_condition_is_present_and_equal(conditions, type, "True");
}

bool ctrl_condition_is_false(const json_t *conditions, const char *type)
{
    return ctrl_condition_is_present_and_equal(conditions, type, "False");
}

json_t *ctrl_obj_conditions(json_t *obj)
{
    if (!json_is_object(obj))
        return NULL;
    json_t *status = json_object_get(obj, "status");
    if (!status || json_is_null(status)) {
        status = json_object();
        if (json_object_set_new(obj, "status", status) < 0)
            return NULL;
    }
    if (!json_is_object(status))
        return NULL;
    json_t *conds = json_object_get(status, "conditions");
    if (!conds || json_is_null(conds)) {
        conds = json_array();
        if (json_object_set_new(status, "conditions", conds) < 0)
            return NULL;
    }
    return json_is_array(conds) ? conds : NULL;
}
