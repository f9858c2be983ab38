/*
 * stages.c - pod lifecycle rules (stages.h): parsing, with errors that
 * name the rule and the key, and matching a pod to its rule.
 */
#include "stages.h"

#include "cluster_int.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/clock.h"
#include "ctrl/object.h"
#include "podutil.h"

#define MAX_RULES 1000
#define MAX_DURATION (365LL * 24 * CTRL_HOUR)

struct kc_stages {
    kc_stage_rule *rules;
    size_t n;
};

static const char *const rule_keys[] = {
    "name",  "match",    "scheduledToRunning", "readyAfter", "outcome",
    "after", "exitCode", "terminationDelay",   NULL};
static const char *const match_keys[] = {"namespaces", "labels", "images", "ownerKind", NULL};

static const kc_stage_rule job_rule = {
    .name = "built-in: pods of Jobs", .outcome = KC_OUTCOME_SUCCEED, .after_ns = CTRL_SECOND};
static const kc_stage_rule run_rule = {.name = "built-in: every pod", .outcome = KC_OUTCOME_RUN};

__attribute__((format(printf, 3, 4))) static int fail(char *errbuf, size_t errlen, const char *fmt,
                                                      ...)
{
    if (errbuf && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errlen, fmt, ap);
        va_end(ap);
    }
    return KC_ERR_INPUT;
}

/* ---- durations ---- */

bool kc__duration_parse(const json_t *v, int64_t *ns)
{
    if (json_is_integer(v)) {
        json_int_t s = json_integer_value(v);
        if (s < 0 || s > MAX_DURATION / CTRL_SECOND)
            return false;
        *ns = (int64_t)s * CTRL_SECOND;
        return true;
    }
    if (json_is_real(v)) {
        double s = json_real_value(v);
        if (!(s >= 0) || s > (double)(MAX_DURATION / CTRL_SECOND))
            return false;
        *ns = (int64_t)(s * (double)CTRL_SECOND);
        return true;
    }
    const char *p = json_string_value(v);
    if (!p || !*p)
        return false;
    if (!strcmp(p, "0")) {
        *ns = 0;
        return true;
    }
    static const struct {
        const char *unit;
        int64_t ns;
    } units[] = {
        {"ns", 1},          {"us", 1000},       {"\xc2\xb5s", 1000}, {"ms", CTRL_MILLISECOND},
        {"s", CTRL_SECOND}, {"m", CTRL_MINUTE}, {"h", CTRL_HOUR}};
    long double total = 0;
    while (*p) {
        const char *start = p;
        while (isdigit((unsigned char)*p) || *p == '.')
            p++;
        if (p == start)
            return false;
        char num[32];
        if ((size_t)(p - start) >= sizeof num)
            return false;
        memcpy(num, start, (size_t)(p - start));
        num[p - start] = 0;
        char *end;
        long double x = strtold(num, &end);
        if (*end)
            return false;
        size_t best = sizeof units / sizeof units[0];
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            size_t l = strlen(units[i].unit);
            /* "ms" before "m": take the longest unit that fits. */
            if (!strncmp(p, units[i].unit, l) &&
                (best == sizeof units / sizeof units[0] || l > strlen(units[best].unit)))
                best = i;
        }
        if (best == sizeof units / sizeof units[0])
            return false;
        total += x * (long double)units[best].ns;
        p += strlen(units[best].unit);
    }
    if (total > (long double)MAX_DURATION)
        return false;
    *ns = (int64_t)total;
    return true;
}

/* ---- parsing ---- */

static void rule_clear(kc_stage_rule *r)
{
    free((void *)r->name);
    json_decref(r->namespaces);
    json_decref(r->selector);
    json_decref(r->images);
    free(r->owner_kind);
}

void kc__stages_free(kc_stages *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->n; i++)
        rule_clear(&st->rules[i]);
    free(st->rules);
    free(st);
}

static bool known(const char *key, const char *const *keys)
{
    for (; *keys; keys++)
        if (!strcmp(key, *keys))
            return true;
    return false;
}

static int check_keys(const json_t *obj, const char *const *keys, const char *where,
                      const char *prefix, char *errbuf, size_t errlen)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (!known(k, keys))
            return fail(errbuf, errlen, "%s: unknown key \"%s%s\"", where, prefix, k);
    }
    return 0;
}

static int string_list(const json_t *v, const char *where, const char *key, json_t **out,
                       char *errbuf, size_t errlen)
{
    size_t i;
    json_t *x;
    if (!json_is_array(v) || json_array_size(v) == 0)
        return fail(errbuf, errlen, "%s: match.%s: a non-empty list of strings", where, key);
    json_array_foreach(v, i, x)
    {
        if (!json_is_string(x) || !json_string_length(x))
            return fail(errbuf, errlen, "%s: match.%s[%zu]: a non-empty string", where, key, i);
    }
    *out = json_deep_copy(v);
    return *out ? 0 : KC_ERR_NOMEM;
}

static int duration(const json_t *rule, const char *key, const char *where, int64_t *ns,
                    char *errbuf, size_t errlen)
{
    const json_t *v = json_object_get(rule, key);
    if (!v)
        return 0;
    if (!kc__duration_parse(v, ns)) {
        char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        int rc = fail(errbuf, errlen,
                      "%s: %s: a duration such as \"500ms\", \"2s\" or \"1m30s\", or a "
                      "number of seconds, not %s",
                      where, key, text ? text : "this");
        free(text);
        return rc;
    }
    return 0;
}

static int parse_match(kc_stage_rule *r, const json_t *m, const char *where, char *errbuf,
                       size_t errlen)
{
    if (!json_is_object(m))
        return fail(errbuf, errlen, "%s: match: a mapping of namespaces, labels, images, ownerKind",
                    where);
    int rc = check_keys(m, match_keys, where, "match.", errbuf, errlen);
    const json_t *v;
    if (!rc && (v = json_object_get(m, "namespaces")))
        rc = string_list(v, where, "namespaces", &r->namespaces, errbuf, errlen);
    if (!rc && (v = json_object_get(m, "images")))
        rc = string_list(v, where, "images", &r->images, errbuf, errlen);
    if (!rc && (v = json_object_get(m, "labels"))) {
        /* Checked against no labels: -1 means malformed. */
        json_t *none = json_object();
        int ok = none ? kc__selector_matches(v, none) : -1;
        json_decref(none);
        const json_t *ml = json_object_get(v, "matchLabels");
        const char *k;
        json_t *x;
        bool strings = true;
        json_object_foreach((json_t *)ml, k, x) strings &= json_is_string(x);
        if (!json_is_object(v) || ok < 0 || !strings ||
            (json_object_get(v, "matchExpressions") &&
             !json_is_array(json_object_get(v, "matchExpressions"))))
            return fail(errbuf, errlen,
                        "%s: match.labels: a label selector {matchLabels: {k: v}, "
                        "matchExpressions: [{key, operator: In|NotIn|Exists|DoesNotExist, "
                        "values}]}",
                        where);
        r->selector = json_deep_copy(v);
        if (!r->selector)
            return KC_ERR_NOMEM;
    }
    if (!rc && (v = json_object_get(m, "ownerKind"))) {
        if (!json_is_string(v) || !json_string_length(v))
            return fail(errbuf, errlen, "%s: match.ownerKind: a kind such as Job", where);
        if (!(r->owner_kind = strdup(json_string_value(v))))
            return KC_ERR_NOMEM;
    }
    return rc;
}

static int parse_rule(kc_stage_rule *r, const json_t *rule, size_t i, char *errbuf, size_t errlen)
{
    char where[160];
    const char *name = json_string_value(json_object_get(rule, "name"));
    if (name)
        snprintf(where, sizeof where, "stages[%zu] (%s)", i, name);
    else
        snprintf(where, sizeof where, "stages[%zu]", i);
    if (!json_is_object(rule))
        return fail(errbuf, errlen, "%s: a mapping", where);
    int rc = check_keys(rule, rule_keys, where, "", errbuf, errlen);
    if (rc)
        return rc;
    const json_t *v = json_object_get(rule, "name");
    if (v && (!json_is_string(v) || !json_string_length(v)))
        return fail(errbuf, errlen, "%s: name: a non-empty string", where);
    r->name = strdup(name ? name : where);
    if (!r->name)
        return KC_ERR_NOMEM;
    if ((v = json_object_get(rule, "match")) && (rc = parse_match(r, v, where, errbuf, errlen)))
        return rc;
    if ((rc = duration(rule, "scheduledToRunning", where, &r->scheduled_to_running_ns, errbuf,
                       errlen)) ||
        (rc = duration(rule, "readyAfter", where, &r->ready_after_ns, errbuf, errlen)) ||
        (rc = duration(rule, "after", where, &r->after_ns, errbuf, errlen)) ||
        (rc = duration(rule, "terminationDelay", where, &r->termination_ns, errbuf, errlen)))
        return rc;
    v = json_object_get(rule, "outcome");
    const char *o = json_string_value(v);
    if (v && (!o || (strcmp(o, "Run") && strcmp(o, "Succeed") && strcmp(o, "Fail"))))
        return fail(errbuf, errlen, "%s: outcome: one of Run, Succeed, Fail, not \"%s\"", where,
                    o ? o : "(not a string)");
    r->outcome = !o || !strcmp(o, "Run") ? KC_OUTCOME_RUN
                 : !strcmp(o, "Succeed") ? KC_OUTCOME_SUCCEED
                                         : KC_OUTCOME_FAIL;
    if (json_object_get(rule, "after") && r->outcome == KC_OUTCOME_RUN)
        return fail(errbuf, errlen, "%s: after: only with outcome Succeed or Fail", where);
    r->exit_code = r->outcome == KC_OUTCOME_FAIL ? 1 : 0;
    if ((v = json_object_get(rule, "exitCode"))) {
        if (r->outcome != KC_OUTCOME_FAIL)
            return fail(errbuf, errlen, "%s: exitCode: only with outcome Fail", where);
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 255)
            return fail(errbuf, errlen, "%s: exitCode: an integer from 1 to 255", where);
        r->exit_code = (int)json_integer_value(v);
    }
    return 0;
}

int kc__stages_parse(const json_t *rules, kc_stages **out, char *errbuf, size_t errlen)
{
    if (rules && !json_is_array(rules))
        return fail(errbuf, errlen, "stages: a list of rules");
    size_t n = json_array_size(rules);
    if (n > MAX_RULES)
        return fail(errbuf, errlen, "stages: at most %d rules, not %zu", MAX_RULES, n);
    kc_stages *st = calloc(1, sizeof *st);
    if (!st || !(st->rules = calloc(n ? n : 1, sizeof *st->rules))) {
        free(st);
        return KC_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        st->n = i + 1;
        int rc = parse_rule(&st->rules[i], json_array_get(rules, i), i, errbuf, errlen);
        if (rc) {
            kc__stages_free(st);
            return rc;
        }
    }
    *out = st;
    return 0;
}

size_t kc__stages_count(const kc_stages *st)
{
    return st ? st->n : 0;
}

const kc_stage_rule *kc__stages_rule(const kc_stages *st, size_t i)
{
    return st && i < st->n ? &st->rules[i] : NULL;
}

/* ---- matching ---- */

static bool has_owner_kind(const json_t *pod, const char *kind)
{
    size_t i;
    json_t *o;
    json_array_foreach(ctrl_obj_get(pod, "metadata.ownerReferences"), i, o)
    {
        const char *k = json_string_value(json_object_get(o, "kind"));
        if (k && !strcmp(k, kind))
            return true;
    }
    return false;
}

static bool in_strings(const json_t *list, const char *s)
{
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        if (s && !strcmp(json_string_value(x), s))
            return true;
    }
    return false;
}

static bool image_matches(const json_t *globs, const json_t *pod)
{
    const char *lists[] = {"spec.containers", "spec.initContainers"};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(ctrl_obj_get(pod, lists[l]), i, c)
        {
            const char *image = json_string_value(json_object_get(c, "image"));
            size_t j;
            json_t *g;
            json_array_foreach(globs, j, g)
            {
                if (image && fnmatch(json_string_value(g), image, 0) == 0)
                    return true;
            }
        }
    }
    return false;
}

static bool rule_matches(const kc_stage_rule *r, const json_t *pod)
{
    if (r->namespaces && !in_strings(r->namespaces, ctrl_obj_namespace(pod)))
        return false;
    if (r->selector && kc__selector_matches(r->selector, ctrl_obj_get(pod, "metadata.labels")) != 1)
        return false;
    if (r->images && !image_matches(r->images, pod))
        return false;
    if (r->owner_kind && !has_owner_kind(pod, r->owner_kind))
        return false;
    return true;
}

const kc_stage_rule *kc__stages_match(const kc_stages *st, const json_t *pod)
{
    for (size_t i = 0; st && i < st->n; i++)
        if (rule_matches(&st->rules[i], pod))
            return &st->rules[i];
    if (has_owner_kind(pod, "Job") || ctrl_obj_label(pod, "job-name") ||
        ctrl_obj_label(pod, "batch.kubernetes.io/job-name"))
        return &job_rule;
    return &run_rule;
}
