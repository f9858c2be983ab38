/*
 * podutil.c - pod states, template hashes, times and label selectors
 * (podutil.h).
 */
#include "podutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- pods ---- */

json_t *kc__condition(const json_t *obj, const char *type)
{
    json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && !strcmp(t, type))
            return c;
    }
    return NULL;
}

bool kc__pod_ready(const json_t *pod)
{
    const char *s = json_string_value(json_object_get(kc__condition(pod, "Ready"), "status"));
    return s && !strcmp(s, "True");
}

bool kc__pod_available(const json_t *pod, int64_t min_ready_s, int64_t now_wall_ns)
{
    if (!kc__pod_ready(pod))
        return false;
    if (min_ready_s <= 0)
        return true;
    const char *t =
        json_string_value(json_object_get(kc__condition(pod, "Ready"), "lastTransitionTime"));
    int64_t since = t ? kc__parse_time(t) : -1;
    return since >= 0 && since + min_ready_s * 1000000000LL <= now_wall_ns;
}

int64_t kc__pod_ready_since(const json_t *pod)
{
    const char *t =
        json_string_value(json_object_get(kc__condition(pod, "Ready"), "lastTransitionTime"));
    return t ? kc__parse_time(t) : -1;
}

const char *kc__pod_phase(const json_t *pod)
{
    const char *p = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    return p && *p ? p : "Pending";
}

bool kc__pod_active(const json_t *pod)
{
    const char *p = kc__pod_phase(pod);
    return strcmp(p, "Succeeded") && strcmp(p, "Failed") &&
           !json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp");
}

/* ---- hashes ---- */

uint32_t kc__fnv32(const void *data, size_t len, uint32_t seed)
{
    const unsigned char *p = data;
    uint32_t h = seed ? seed : 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

void kc__template_hash(const json_t *tmpl, int64_t collision_count, char *out, size_t len)
{
    /* Kubernetes' rand.SafeEncodeString alphabet. */
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    char *text = json_dumps(tmpl, JSON_COMPACT | JSON_SORT_KEYS);
    uint32_t h = kc__fnv32(text ? text : "", text ? strlen(text) : 0, 0);
    free(text);
    if (collision_count >= 0) {
        /* The collision count goes in as the bytes of its decimal value, so
         * a new count gives a new hash. */
        char c[24];
        int n = snprintf(c, sizeof c, "%lld", (long long)collision_count);
        h = kc__fnv32(c, (size_t)n, h);
    }
    char digits[16];
    int n = snprintf(digits, sizeof digits, "%u", h);
    size_t i;
    for (i = 0; i < (size_t)n && i + 1 < len; i++)
        out[i] = alphabet[(unsigned char)digits[i] % (sizeof alphabet - 1)];
    if (len)
        out[i] = 0;
}

/* ---- times ---- */

void kc__rfc3339(int64_t wall_ns, char *out, size_t len)
{
    time_t s = (time_t)(wall_ns / 1000000000LL);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int64_t kc__parse_time(const char *s)
{
    struct tm tm = {0};
    const char *p = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!p)
        return -1;
    int64_t frac = 0;
    if (*p == '.') {
        int64_t scale = 100000000;
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    int64_t off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int hh, mm;
        if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2)
            return -1;
        off = (hh * 3600 + mm * 60) * (*p == '+' ? 1 : -1);
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    time_t t = timegm(&tm);
    return ((int64_t)t - off) * 1000000000LL + frac;
}

/* ---- label selectors ---- */

static bool in_values(const json_t *values, const char *v)
{
    size_t i;
    json_t *x;
    json_array_foreach(values, i, x)
    {
        if (json_is_string(x) && !strcmp(json_string_value(x), v))
            return true;
    }
    return false;
}

bool kc__map_matches(const json_t *map, const json_t *labels)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)map, k, v)
    {
        const char *have = json_string_value(json_object_get(labels, k));
        if (!have || !json_is_string(v) || strcmp(have, json_string_value(v)))
            return false;
    }
    return true;
}

int kc__selector_matches(const json_t *sel, const json_t *labels)
{
    if (!json_is_object(sel))
        return 0;
    const json_t *ml = json_object_get(sel, "matchLabels");
    if (ml && !json_is_object(ml))
        return -1;
    bool ok = kc__map_matches(ml, labels);
    const json_t *exprs = json_object_get(sel, "matchExpressions");
    size_t i;
    json_t *e;
    json_array_foreach(exprs, i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        const json_t *values = json_object_get(e, "values");
        if (!key || !op)
            return -1;
        const char *have = json_string_value(json_object_get(labels, key));
        if (!strcmp(op, "In"))
            ok &= have && in_values(values, have);
        else if (!strcmp(op, "NotIn"))
            ok &= !have || !in_values(values, have);
        else if (!strcmp(op, "Exists"))
            ok &= have != NULL;
        else if (!strcmp(op, "DoesNotExist"))
            ok &= have == NULL;
        else
            return -1;
    }
    return ok;
}

/* Append to a bounded buffer; false when it would overflow. */
static bool put(char *buf, size_t cap, size_t *n, const char *s)
{
    size_t l = strlen(s);
    if (*n + l + 1 > cap)
        return false;
    memcpy(buf + *n, s, l + 1);
    *n += l;
    return true;
}

char *kc__selector_string(const json_t *sel)
{
    enum { CAP = 8192 };
    char *buf = malloc(CAP);
    size_t n = 0;
    bool ok = buf != NULL;
    if (ok)
        buf[0] = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)json_object_get(sel, "matchLabels"), k, v)
    {
        ok = ok && json_is_string(v) && (!n || put(buf, CAP, &n, ",")) && put(buf, CAP, &n, k) &&
             put(buf, CAP, &n, "=") && put(buf, CAP, &n, json_string_value(v));
    }
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        ok = ok && key && op && (!n || put(buf, CAP, &n, ","));
        if (!ok)
            break;
        if (!strcmp(op, "Exists")) {
            ok = put(buf, CAP, &n, key);
        } else if (!strcmp(op, "DoesNotExist")) {
            ok = put(buf, CAP, &n, "!") && put(buf, CAP, &n, key);
        } else if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
            ok = put(buf, CAP, &n, key) &&
                 put(buf, CAP, &n, !strcmp(op, "In") ? " in (" : " notin (");
            size_t j;
            json_t *x;
            json_array_foreach(json_object_get(e, "values"), j, x)
            {
                ok = ok && json_is_string(x) && (!j || put(buf, CAP, &n, ",")) &&
                     put(buf, CAP, &n, json_string_value(x));
            }
            ok = ok && put(buf, CAP, &n, ")");
        } else {
            ok = false;
        }
    }
    if (!ok) {
        free(buf);
        return NULL;
    }
    return buf;
}
