/*
 * scenario_cond.c - conditions in scenario files (exists, absent, field,
 * count, all; comparisons with values or with other objects' fields),
 * checked as they are read: paths, regular expressions and selectors.
 */
#include "scn_parse.h"
#include "scenario_int.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- conditions ---- */

void scn__cond_free(scn_cond *c)
{
    if (!c)
        return;
    json_decref(c->value);
    scn__cond_free(c->value_from);
    for (size_t i = 0; i < c->n_all; i++)
        scn__cond_free(c->all[i]);
    free(c->all);
    free(c);
}

int scn__parse_cond(scn__parser *p, json_t *v, const char *field, scn_cond **out);

static const char *const cond_kinds[] = {"exists", "absent", "field",        "count", "all",
                                         "any",    "not",    "singleLeader", NULL};
static const char *const leader_keys[] = {"namespace", "name", "leaseDuration", NULL};
static const char *const presence_keys[] = {"apiVersion", "kind", "namespace", "name", NULL};
static const char *const field_keys[] = {
    "apiVersion", "kind",    "namespace", "name",        "path",         "equals",      "atLeast",
    "atMost",     "matches", "exists",    "equalsField", "atLeastField", "atMostField", NULL};
static const char *const count_keys[] = {"apiVersion",   "kind",        "namespace", "selector",
                                         "equals",       "atLeast",     "atMost",    "equalsField",
                                         "atLeastField", "atMostField", NULL};
static const char *const from_keys[] = {"apiVersion", "kind", "namespace", "name", "path", NULL};

static const struct {
    const char *key;
    scn_cmp cmp;
    bool from; /* the value is another object's field */
} comparisons[] = {
    {"equals", SCN_CMP_EQUALS, false},        {"atLeast", SCN_CMP_AT_LEAST, false},
    {"atMost", SCN_CMP_AT_MOST, false},       {"matches", SCN_CMP_MATCHES, false},
    {"exists", SCN_CMP_EXISTS, false},        {"equalsField", SCN_CMP_EQUALS, true},
    {"atLeastField", SCN_CMP_AT_LEAST, true}, {"atMostField", SCN_CMP_AT_MOST, true},
};

static int get_path(scn__parser *p, const json_t *obj, const char *field, const char **out)
{
    char f[FIELD_LEN], why[128];
    int rc = scn__get_string(p, obj, "path", field, true, out);

    if (rc != 0)
        return rc;
    if (scn__path_check(*out, why, sizeof why) == 0)
        return 0;
    scn__sub(f, sizeof f, "%s.path", field);
    return scn__fail(p, json_object_get(obj, "path"), f, "not a path: \"%s\": %s", *out, why);
}

/* {apiVersion, kind, namespace, name, path}: another object's field. */
static int parse_from(scn__parser *p, json_t *v, const char *field, scn_cond **out)
{
    scn_cond *c;
    scn__ref r = {0};
    int rc, saved = scn__enter(p, v);

    if ((rc = scn__need_type(p, v, field, JSON_OBJECT,
                             "a mapping {apiVersion, kind, namespace, "
                             "name, path}")) != 0 ||
        (rc = scn__check_keys(p, v, field, from_keys)) != 0 ||
        (rc = scn__get_ref(p, v, field, true, &r)) != 0)
        goto out;
    c = calloc(1, sizeof *c);
    if (!c) {
        rc = scn__oom(p);
        goto out;
    }
    c->kind = SCN_COND_FIELD;
    c->api_version = r.api_version;
    c->kind_name = r.kind;
    c->ns = r.ns;
    c->name = r.name;
    c->line = scn__line_of(p, v);
    c->text = scn__keep_text(p, v);
    if ((rc = get_path(p, v, field, &c->path)) != 0) {
        scn__cond_free(c);
        goto out;
    }
    *out = c;
out:
    p->hint = saved;
    return rc;
}

/* The one comparison of a field or count condition. */
static int parse_comparison(scn__parser *p, json_t *body, const char *field, bool count,
                            scn_cond *c)
{
    const char *found = NULL;
    json_t *v = NULL;
    char f[FIELD_LEN];
    bool from = false;

    for (size_t i = 0; i < sizeof comparisons / sizeof comparisons[0]; i++) {
        json_t *x = json_object_get(body, comparisons[i].key);
        if (!x)
            continue;
        if (found) {
            scn__sub(f, sizeof f, "%s.%s", field, comparisons[i].key);
            return scn__fail(p, x, f, "more than one comparison (%s and %s)", found,
                             comparisons[i].key);
        }
        found = comparisons[i].key;
        c->cmp = comparisons[i].cmp;
        from = comparisons[i].from;
        v = x;
    }
    if (!found)
        return scn__fail(p, body, field,
                         count ? "no comparison: expected one of equals, atLeast, atMost, "
                                 "equalsField, atLeastField, atMostField"
                               : "no comparison: expected one of equals, atLeast, atMost, matches, "
                                 "exists, equalsField, atLeastField, atMostField");
    scn__sub(f, sizeof f, "%s.%s", field, found);
    if (from)
        return parse_from(p, v, f, &c->value_from);
    if (count && (!json_is_integer(v) || json_integer_value(v) < 0))
        return scn__fail(p, v, f, "expected a count (an integer >= 0), found %s",
                         scn__type_name(v));
    if ((c->cmp == SCN_CMP_AT_LEAST || c->cmp == SCN_CMP_AT_MOST) && !json_is_number(v))
        return scn__fail(p, v, f, "expected a number, found %s", scn__type_name(v));
    if (c->cmp == SCN_CMP_EXISTS && !json_is_boolean(v))
        return scn__fail(p, v, f, "expected true or false, found %s", scn__type_name(v));
    if (c->cmp == SCN_CMP_MATCHES) {
        regex_t re;
        char why[128];
        int rc;
        if (!json_is_string(v))
            return scn__fail(p, v, f, "expected a regular expression (a string), found %s",
                             scn__type_name(v));
        rc = regcomp(&re, json_string_value(v), REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            regerror(rc, &re, why, sizeof why);
            return scn__fail(p, v, f, "not a regular expression: \"%s\": %s", json_string_value(v),
                             why);
        }
        regfree(&re);
    }
    c->value = json_incref(v);
    return 0;
}

/* selector: "app=web,tier!=db", or a mapping of labels {app: web}. */
static int parse_selector(scn__parser *p, json_t *body, const char *field, scn_cond *c)
{
    json_t *v = json_object_get(body, "selector"), *label;
    const char *key;
    char f[FIELD_LEN];
    char *text = NULL;
    size_t size = 0;
    FILE *mem;

    if (!v)
        return 0;
    scn__sub(f, sizeof f, "%s.selector", field);
    if (json_is_string(v)) {
        c->selector = json_string_value(v);
        return 0;
    }
    if (!json_is_object(v))
        return scn__fail(p, v, f, "expected a label selector (\"app=web\" or {app: web}), found %s",
                         scn__type_name(v));
    mem = open_memstream(&text, &size);
    if (!mem)
        return scn__oom(p);
    json_object_foreach(v, key, label)
    {
        if (json_is_string(label)) {
            fprintf(mem, "%s%s=%s", ftell(mem) ? "," : "", key, json_string_value(label));
        } else if (json_is_integer(label)) {
            fprintf(mem, "%s%s=%" JSON_INTEGER_FORMAT, ftell(mem) ? "," : "", key,
                    json_integer_value(label));
        } else if (json_is_boolean(label)) {
            fprintf(mem, "%s%s=%s", ftell(mem) ? "," : "", key,
                    json_is_true(label) ? "true" : "false");
        } else {
            fclose(mem);
            free(text);
            scn__sub(f, sizeof f, "%s.selector.%s", field, key);
            return scn__fail(p, label, f, "expected a label value, found %s",
                             scn__type_name(label));
        }
    }
    fclose(mem);
    c->selector = scn__keep(p, text ? text : "");
    free(text);
    return c->selector ? 0 : scn__oom(p);
}

/* singleLeader: {namespace, name, leaseDuration}: the Lease, and how long
 * a write of it counts as holding it. */
static int parse_single_leader(scn__parser *p, json_t *body, const char *field, scn_cond *c)
{
    json_t *v;
    char f[FIELD_LEN];
    int rc;

    if (!p->history_ok)
        return scn__fail(p, body, field,
                         "singleLeader is checked over the run's history: it can only be one of "
                         "the invariants (not in wait, expect or all)");
    if ((rc = scn__need_type(p, body, field, JSON_OBJECT,
                             "a mapping {namespace, name, leaseDuration}")) != 0 ||
        (rc = scn__check_keys(p, body, field, leader_keys)) != 0 ||
        (rc = scn__get_string(p, body, "namespace", field, true, &c->ns)) != 0 ||
        (rc = scn__get_string(p, body, "name", field, true, &c->name)) != 0)
        return rc;
    c->kind = SCN_COND_SINGLE_LEADER;
    c->api_version = "coordination.k8s.io/v1";
    c->kind_name = "Lease";
    c->lease_ns = 15 * INT64_C(1000000000); /* controller-runtime's LeaseDuration */
    v = json_object_get(body, "leaseDuration");
    scn__sub(f, sizeof f, "%s.leaseDuration", field);
    if (v && (rc = scn__get_duration(p, v, f, &c->lease_ns)) != 0)
        return rc;
    if (c->lease_ns <= 0)
        return scn__fail(p, v, f, "must be above 0");
    return 0;
}

static int parse_cond_body(scn__parser *p, const char *kind, json_t *body, const char *field,
                           scn_cond *c)
{
    scn__ref r = {0};
    int rc;

    if (strcmp(kind, "singleLeader") == 0)
        return parse_single_leader(p, body, field, c);
    if (strcmp(kind, "not") == 0) {
        bool saved = p->history_ok;
        c->kind = SCN_COND_NOT;
        c->all = calloc(1, sizeof *c->all);
        if (!c->all)
            return scn__oom(p);
        p->history_ok = false;
        if ((rc = scn__parse_cond(p, body, field, &c->all[0])) == 0)
            c->n_all = 1;
        p->history_ok = saved;
        return rc;
    }
    if (strcmp(kind, "all") == 0 || strcmp(kind, "any") == 0) {
        json_t *item;
        size_t i;
        bool saved = p->history_ok;
        if ((rc = scn__need_type(p, body, field, JSON_ARRAY, "a list of conditions")) != 0)
            return rc;
        if (json_array_size(body) == 0)
            return scn__fail(p, body, field, "an empty list of conditions");
        c->kind = kind[1] == 'l' ? SCN_COND_ALL : SCN_COND_ANY;
        c->all = calloc(json_array_size(body), sizeof *c->all);
        if (!c->all)
            return scn__oom(p);
        p->history_ok = false;
        rc = 0;
        json_array_foreach(body, i, item)
        {
            char f[FIELD_LEN];
            scn__sub(f, sizeof f, "%s[%zu]", field, i);
            if ((rc = scn__parse_cond(p, item, f, &c->all[i])) != 0)
                break;
            c->n_all++;
        }
        p->history_ok = saved;
        return rc;
    }
    if ((rc = scn__need_type(p, body, field, JSON_OBJECT, "a mapping")) != 0)
        return rc;
    if (strcmp(kind, "exists") == 0 || strcmp(kind, "absent") == 0) {
        c->kind = kind[0] == 'e' ? SCN_COND_EXISTS : SCN_COND_ABSENT;
        rc = scn__check_keys(p, body, field, presence_keys);
        if (rc == 0)
            rc = scn__get_ref(p, body, field, true, &r);
    } else if (strcmp(kind, "field") == 0) {
        c->kind = SCN_COND_FIELD;
        rc = scn__check_keys(p, body, field, field_keys);
        if (rc == 0)
            rc = scn__get_ref(p, body, field, true, &r);
        if (rc == 0)
            rc = get_path(p, body, field, &c->path);
        if (rc == 0)
            rc = parse_comparison(p, body, field, false, c);
    } else {
        c->kind = SCN_COND_COUNT;
        rc = scn__check_keys(p, body, field, count_keys);
        if (rc == 0)
            rc = scn__get_ref(p, body, field, false, &r);
        if (rc == 0)
            rc = parse_selector(p, body, field, c);
        if (rc == 0)
            rc = parse_comparison(p, body, field, true, c);
    }
    c->api_version = r.api_version;
    c->kind_name = r.kind;
    c->ns = r.ns;
    c->name = r.name;
    return rc;
}

int scn__parse_cond(scn__parser *p, json_t *v, const char *field, scn_cond **out)
{
    scn_cond *c = NULL;
    const char *kind;
    json_t *body;
    char f[FIELD_LEN], list[128];
    int rc, saved = scn__enter(p, v);

    scn__join_keys(cond_kinds, list, sizeof list);
    if (!json_is_object(v) || json_object_size(v) != 1) {
        if (json_is_object(v))
            rc = scn__fail(p, v, field, "a condition has exactly one of: %s; found %zu keys", list,
                           json_object_size(v));
        else
            rc = scn__fail(p, v, field, "a condition is a mapping with one of: %s; found %s", list,
                           scn__type_name(v));
        goto out;
    }
    kind = json_object_iter_key(json_object_iter(v));
    body = json_object_iter_value(json_object_iter(v));
    scn__sub(f, sizeof f, "%s.%s", field, kind);
    if (!scn__is_one_of(kind, cond_kinds)) {
        rc = scn__fail(p, body, f, "unknown condition; expected one of: %s", list);
        goto out;
    }
    c = calloc(1, sizeof *c);
    if (!c) {
        rc = scn__oom(p);
        goto out;
    }
    c->line = scn__line_of(p, v);
    c->text = scn__keep_text(p, v);
    rc = parse_cond_body(p, kind, body, f, c);
    if (rc == 0 && !c->text)
        rc = scn__oom(p);
out:
    p->hint = saved;
    if (rc != 0) {
        scn__cond_free(c);
        return rc;
    }
    *out = c;
    return 0;
}
