/*
 * scenario.c - scenario files (YAML or JSON) into a checked scn_scenario.
 *
 * Everything is checked before anything runs: field names and types, paths,
 * regular expressions, durations, replica indexes, fault names, and the
 * fixture and manifest files, which are read here (relative to the
 * scenario's directory), so a run never meets a malformed input half way.
 * Every error names the file, the line (from kh_yaml's position table) and
 * the field ("steps[3].wait.timeout").
 *
 * Ownership: the parsed document stays alive in the scenario (priv->doc);
 * names and paths point into it. Strings made here (texts, selectors, file
 * names) live in priv->pool. Every json_t a step or condition holds is its
 * own reference.
 */
#include "scn/scenario.h"
#include "scenario_int.h"

#include "kh/yaml.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_WAIT_NS (5 * 60 * INT64_C(1000000000))
#define DEFAULT_MAX_VIRTUAL_NS (24 * 3600 * INT64_C(1000000000))
#define MAX_REPLICAS 16
#define MAX_LIST_DEPTH 8 /* a List inside a List ... */
#define FIELD_LEN 128

typedef struct priv {
    json_t *doc;  /* the scenario document */
    json_t *pool; /* strings made while parsing */
} priv;

typedef struct parser {
    const char *file; /* as the caller named it, for messages */
    char *dir;        /* fixture paths are relative to it; "" for the cwd */
    kh_yaml_marks *marks;
    scn_error *err;
    scn_scenario *s;
    priv *pv;
    int hint;       /* line of the innermost mapping being read */
    json_t *faults; /* names of the fault rules in force at this step */
    int n_replicas; /* manager replicas: the most any controller asks for */
} parser;

const char *scn_strerror(int code)
{
    switch (code) {
    case SCN_OK:
        return "ok";
    case SCN_ERR_NOMEM:
        return "out of memory";
    case SCN_ERR_INPUT:
        return "malformed scenario";
    case SCN_ERR_IO:
        return "cannot read file";
    case SCN_ERR_FAILED:
        return "scenario failed";
    case SCN_ERR_SETUP:
        return "cannot start the server or a manager";
    case SCN_ERR_INTERNAL:
        return "internal error";
    default:
        return "unknown error";
    }
}

int scn_error_format(const scn_error *e, char *buf, size_t len)
{
    int n;

    if (!e || !buf || len == 0)
        return -1;
    n = snprintf(buf, len, "%s", e->file[0] ? e->file : "<input>");
    if (e->line > 0 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ":%d", e->line);
    if (e->field[0] && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ": %s", e->field);
    if (n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ": %s", e->message);
    return n;
}

/* ---- errors and small helpers ---- */

__attribute__((format(printf, 3, 4))) static void sub(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

static int line_of(const parser *p, const json_t *v)
{
    int line = kh_yaml_mark_line(p->marks, v);

    return line ? line : p->hint;
}

/* Makes v's line the one errors inside it fall back on; returns the old. */
static int enter(parser *p, const json_t *v)
{
    int old = p->hint, line = kh_yaml_mark_line(p->marks, v);

    if (line)
        p->hint = line;
    return old;
}

static void set_error(scn_error *err, int code, const char *file, int line, const char *field,
                      const char *fmt, va_list ap)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    err->code = code;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "<input>");
    err->line = line;
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
    vsnprintf(err->message, sizeof err->message, fmt, ap);
}

/* An input error at node (or the innermost mapping, for nodes without a line). */
__attribute__((format(printf, 4, 5))) static int fail(parser *p, const json_t *node,
                                                      const char *field, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    set_error(p->err, SCN_ERR_INPUT, p->file, line_of(p, node), field, fmt, ap);
    va_end(ap);
    return SCN_ERR_INPUT;
}

static int oom(parser *p)
{
    if (p->err) {
        memset(p->err, 0, sizeof *p->err);
        p->err->code = SCN_ERR_NOMEM;
        snprintf(p->err->file, sizeof p->err->file, "%s", p->file);
        snprintf(p->err->message, sizeof p->err->message, "out of memory");
    }
    return SCN_ERR_NOMEM;
}

/* A string that lives as long as the scenario. */
static const char *keep(parser *p, const char *s)
{
    json_t *str = json_string(s);

    if (!str || json_array_append_new(p->pv->pool, str) != 0)
        return NULL;
    return json_string_value(str);
}

/* Compact JSON of v, kept; "" if it cannot be printed. */
static const char *keep_text(parser *p, const json_t *v)
{
    char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    const char *kept = keep(p, text ? text : "");

    free(text);
    return kept;
}

/* "a string", "an integer", ... for "expected X, found Y". */
static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "a mapping";
    case JSON_ARRAY:
        return "a list";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

static int join_keys(const char *const *keys, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; keys[i] && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", keys[i]);
        if (n < 0)
            return -1;
        used += (size_t)n;
    }
    return 0;
}

static bool is_one_of(const char *s, const char *const *keys)
{
    for (; *keys; keys++) {
        if (strcmp(s, *keys) == 0)
            return true;
    }
    return false;
}

/* Every key of obj is one of allowed. */
static int check_keys(parser *p, const json_t *obj, const char *field, const char *const *allowed)
{
    const char *key;
    json_t *v;
    char f[FIELD_LEN], list[256];

    json_object_foreach((json_t *)obj, key, v)
    {
        if (is_one_of(key, allowed))
            continue;
        join_keys(allowed, list, sizeof list);
        sub(f, sizeof f, "%s.%s", field, key);
        return fail(p, v, f, "unknown field; expected one of: %s", list);
    }
    return 0;
}

static int need_type(parser *p, const json_t *v, const char *field, json_type type,
                     const char *what)
{
    if (v && json_typeof(v) == type)
        return 0;
    return fail(p, v, field, "expected %s, found %s", what, type_name(v));
}

/* obj.key as a string into *out (untouched when absent and optional). */
static int get_string(parser *p, const json_t *obj, const char *key, const char *field,
                      bool required, const char **out)
{
    json_t *v = json_object_get(obj, key);
    char f[FIELD_LEN];

    sub(f, sizeof f, "%s.%s", field, key);
    if (!v) {
        if (required)
            return fail(p, obj, f, "required field is missing");
        return 0;
    }
    if (!json_is_string(v))
        return fail(p, v, f, "expected a string, found %s", type_name(v));
    if (json_string_length(v) == 0)
        return fail(p, v, f, "must not be empty");
    *out = json_string_value(v);
    return 0;
}

/* obj.key as an integer in [lo, hi] into *out (untouched when absent). */
static int get_int(parser *p, const json_t *obj, const char *key, const char *field, long lo,
                   long hi, long *out)
{
    json_t *v = json_object_get(obj, key);
    char f[FIELD_LEN];

    if (!v)
        return 0;
    sub(f, sizeof f, "%s.%s", field, key);
    if (!json_is_integer(v))
        return fail(p, v, f, "expected an integer, found %s", type_name(v));
    if (json_integer_value(v) < lo || json_integer_value(v) > hi)
        return fail(p, v, f, "%" JSON_INTEGER_FORMAT " is out of range [%ld, %ld]",
                    json_integer_value(v), lo, hi);
    *out = (long)json_integer_value(v);
    return 0;
}

/* ---- durations ---- */

static int64_t unit_ns(const char *s, size_t *n)
{
    static const struct {
        const char *name;
        int64_t ns;
    } units[] = {{"ns", 1},
                 {"us", 1000},
                 {"\xC2\xB5s", 1000}, /* µs */
                 {"ms", 1000000},
                 {"s", INT64_C(1000000000)},
                 {"m", 60 * INT64_C(1000000000)},
                 {"h", 3600 * INT64_C(1000000000)}};

    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t len = strlen(units[i].name);
        /* "ms" is tried before "m", so "5ms" is not 5 minutes and garbage */
        if (strncmp(s, units[i].name, len) == 0) {
            *n = len;
            return units[i].ns;
        }
    }
    return 0;
}

/* A decimal number at s: its length, 0 if none. */
static size_t span_number(const char *s)
{
    size_t i = strspn(s, "0123456789"), frac = 0;

    if (s[i] == '.')
        frac = strspn(s + i + 1, "0123456789");
    if (i == 0 && frac == 0)
        return 0;
    return s[i] == '.' ? i + 1 + frac : i;
}

static int seconds_to_ns(double secs, int64_t *ns)
{
    if (!isfinite(secs) || secs < 0 || secs * 1e9 >= 9.2e18)
        return SCN_ERR_INPUT;
    *ns = (int64_t)llround(secs * 1e9);
    return 0;
}

/* Go's time.ParseDuration without signs: "1h30m", "1.5s", "500ms". */
static int parse_duration_text(const char *s, int64_t *out)
{
    double total = 0;
    size_t n = span_number(s);

    if (n > 0 && s[n] == '\0') /* a bare number: seconds */
        return seconds_to_ns(strtod(s, NULL), out);
    if (*s == '\0')
        return SCN_ERR_INPUT;
    while (*s) {
        size_t ulen = 0;
        int64_t unit;
        double d;
        n = span_number(s);
        if (n == 0)
            return SCN_ERR_INPUT;
        d = strtod(s, NULL);
        unit = unit_ns(s + n, &ulen);
        if (unit == 0)
            return SCN_ERR_INPUT;
        total += d * (double)unit;
        if (total >= 9.2e18)
            return SCN_ERR_INPUT;
        s += n + ulen;
    }
    *out = (int64_t)llround(total);
    return 0;
}

int scn_parse_duration(const json_t *v, int64_t *ns)
{
    int64_t d = 0;
    int rc;

    if (!ns)
        return SCN_ERR_INPUT;
    if (json_is_integer(v)) {
        if (json_integer_value(v) < 0 || json_integer_value(v) > INT64_MAX / 1000000000)
            return SCN_ERR_INPUT;
        d = (int64_t)json_integer_value(v) * 1000000000;
        rc = 0;
    } else if (json_is_real(v)) {
        rc = seconds_to_ns(json_real_value(v), &d);
    } else if (json_is_string(v)) {
        rc = parse_duration_text(json_string_value(v), &d);
    } else {
        rc = SCN_ERR_INPUT;
    }
    if (rc == 0)
        *ns = d;
    return rc;
}

static int get_duration(parser *p, const json_t *v, const char *field, int64_t *out)
{
    char *text;
    int rc;

    if (scn_parse_duration(v, out) == 0)
        return 0;
    text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    rc = fail(p, v, field, "not a duration: %s (write 500ms, 10s, 5m, 24h, 1h30m or seconds)",
              text ? text : "?");
    free(text);
    return rc;
}

/* ---- manifests ---- */

/* "fixtures/x.yaml" resolved against the scenario's directory, kept. */
static const char *resolve(parser *p, const char *path)
{
    char *full;
    const char *kept;

    if (path[0] == '/' || p->dir[0] == '\0')
        return keep(p, path);
    if (asprintf(&full, "%s/%s", p->dir, path) < 0)
        return NULL;
    kept = keep(p, full);
    free(full);
    return kept;
}

static bool list_kind(const json_t *obj)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    size_t n = kind ? strlen(kind) : 0;

    return n >= 4 && strcmp(kind + n - 4, "List") == 0 &&
           json_is_array(json_object_get(obj, "items"));
}

/*
 * Appends obj to into, expanding a List (kind List or FooList with items,
 * as kubectl does). where names it in messages: the field of an inline
 * object, or the file and document of a loaded one (then field and node
 * are where the file is named).
 */
static int add_object(parser *p, json_t *obj, const json_t *node, const char *field,
                      const char *where, int depth, json_t *into)
{
    json_t *meta, *item;
    size_t i;
    const char *missing = NULL;

    if (!where)
        node = obj;
    if (!json_is_object(obj))
        return fail(p, node, field, "%s%sexpected an object (a mapping), found %s",
                    where ? where : "", where ? ": " : "", type_name(obj));
    if (list_kind(obj)) {
        if (depth >= MAX_LIST_DEPTH)
            return fail(p, node, field, "%s%sLists nested too deep", where ? where : "",
                        where ? ": " : "");
        json_array_foreach(json_object_get(obj, "items"), i, item)
        {
            char f[FIELD_LEN];
            sub(f, sizeof f, "%s.items[%zu]", field, i);
            int rc = add_object(p, item, node, where ? field : f, where, depth + 1, into);
            if (rc != 0)
                return rc;
        }
        return 0;
    }
    meta = json_object_get(obj, "metadata");
    if (!json_is_string(json_object_get(obj, "apiVersion")))
        missing = "apiVersion (a string)";
    else if (!json_is_string(json_object_get(obj, "kind")))
        missing = "kind (a string)";
    else if (!json_is_string(json_object_get(meta, "name")) &&
             !json_is_string(json_object_get(meta, "generateName")))
        missing = "metadata.name or metadata.generateName";
    if (missing)
        return fail(p, node, field, "%s%sobject has no %s", where ? where : "", where ? ": " : "",
                    missing);
    return json_array_append(into, obj) == 0 ? 0 : oom(p);
}

/* Objects (an object, a List, or a list of them) inline at v. */
static int add_inline(parser *p, json_t *v, const char *field, json_t *into)
{
    size_t i;
    json_t *item;
    char f[FIELD_LEN];

    if (!json_is_array(v))
        return add_object(p, v, v, field, NULL, 0, into);
    json_array_foreach(v, i, item)
    {
        sub(f, sizeof f, "%s[%zu]", field, i);
        int rc = add_object(p, item, item, f, NULL, 0, into);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The objects of the manifest file named by node (a string), YAML or JSON. */
static int add_file(parser *p, const json_t *node, const char *field, json_t *into)
{
    kh_yaml_error yerr = {0};
    const char *name = json_string_value(node), *path;
    json_t *docs = NULL, *doc;
    size_t i, before = json_array_size(into);
    int rc = 0;

    if (!name || !name[0])
        return fail(p, node, field, "expected a file name, found %s", type_name(node));
    path = resolve(p, name);
    if (!path)
        return oom(p);
    if (kh_yaml_load_file(path, &docs, &yerr) != 0) {
        if (yerr.line == 0) /* the message names the path and says why */
            return fail(p, node, field, "cannot read manifest: %s", yerr.message);
        return fail(p, node, field, "%s:%d:%d: %s", path, yerr.line, yerr.column, yerr.message);
    }
    json_array_foreach(docs, i, doc)
    {
        char where[300];
        if (json_is_null(doc))
            continue;
        sub(where, sizeof where, "%s: document %zu", path, i + 1);
        rc = add_object(p, doc, node, field, where, 0, into);
        if (rc != 0)
            break;
    }
    json_decref(docs);
    if (rc == 0 && json_array_size(into) == before)
        rc = fail(p, node, field, "%s holds no objects", path);
    return rc;
}

/* ---- object references ---- */

typedef struct ref {
    const char *api_version, *kind, *ns, *name;
} ref;

static int get_ref(parser *p, const json_t *obj, const char *field, bool need_name, ref *r)
{
    int rc;

    if ((rc = get_string(p, obj, "apiVersion", field, true, &r->api_version)) != 0 ||
        (rc = get_string(p, obj, "kind", field, true, &r->kind)) != 0 ||
        (rc = get_string(p, obj, "namespace", field, false, &r->ns)) != 0 ||
        (rc = get_string(p, obj, "name", field, need_name, &r->name)) != 0)
        return rc;
    return 0;
}

/* ---- conditions ---- */

static void cond_free(scn_cond *c)
{
    if (!c)
        return;
    json_decref(c->value);
    cond_free(c->value_from);
    for (size_t i = 0; i < c->n_all; i++)
        cond_free(c->all[i]);
    free(c->all);
    free(c);
}

static int parse_cond(parser *p, json_t *v, const char *field, scn_cond **out);

static const char *const cond_kinds[] = {"exists", "absent", "field", "count", "all", NULL};
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

static int get_path(parser *p, const json_t *obj, const char *field, const char **out)
{
    char f[FIELD_LEN], why[128];
    int rc = get_string(p, obj, "path", field, true, out);

    if (rc != 0)
        return rc;
    if (scn__path_check(*out, why, sizeof why) == 0)
        return 0;
    sub(f, sizeof f, "%s.path", field);
    return fail(p, json_object_get(obj, "path"), f, "not a path: \"%s\": %s", *out, why);
}

/* {apiVersion, kind, namespace, name, path}: another object's field. */
static int parse_from(parser *p, json_t *v, const char *field, scn_cond **out)
{
    scn_cond *c;
    ref r = {0};
    int rc, saved = enter(p, v);

    if ((rc = need_type(p, v, field, JSON_OBJECT,
                        "a mapping {apiVersion, kind, namespace, "
                        "name, path}")) != 0 ||
        (rc = check_keys(p, v, field, from_keys)) != 0 ||
        (rc = get_ref(p, v, field, true, &r)) != 0)
        goto out;
    c = calloc(1, sizeof *c);
    if (!c) {
        rc = oom(p);
        goto out;
    }
    c->kind = SCN_COND_FIELD;
    c->api_version = r.api_version;
    c->kind_name = r.kind;
    c->ns = r.ns;
    c->name = r.name;
    c->line = line_of(p, v);
    c->text = keep_text(p, v);
    if ((rc = get_path(p, v, field, &c->path)) != 0) {
        cond_free(c);
        goto out;
    }
    *out = c;
out:
    p->hint = saved;
    return rc;
}

/* The one comparison of a field or count condition. */
static int parse_comparison(parser *p, json_t *body, const char *field, bool count, scn_cond *c)
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
            sub(f, sizeof f, "%s.%s", field, comparisons[i].key);
            return fail(p, x, f, "more than one comparison (%s and %s)", found, comparisons[i].key);
        }
        found = comparisons[i].key;
        c->cmp = comparisons[i].cmp;
        from = comparisons[i].from;
        v = x;
    }
    if (!found)
        return fail(p, body, field,
                    count ? "no comparison: expected one of equals, atLeast, atMost, "
                            "equalsField, atLeastField, atMostField"
                          : "no comparison: expected one of equals, atLeast, atMost, matches, "
                            "exists, equalsField, atLeastField, atMostField");
    sub(f, sizeof f, "%s.%s", field, found);
    if (from)
        return parse_from(p, v, f, &c->value_from);
    if (count && (!json_is_integer(v) || json_integer_value(v) < 0))
        return fail(p, v, f, "expected a count (an integer >= 0), found %s", type_name(v));
    if ((c->cmp == SCN_CMP_AT_LEAST || c->cmp == SCN_CMP_AT_MOST) && !json_is_number(v))
        return fail(p, v, f, "expected a number, found %s", type_name(v));
    if (c->cmp == SCN_CMP_EXISTS && !json_is_boolean(v))
        return fail(p, v, f, "expected true or false, found %s", type_name(v));
    if (c->cmp == SCN_CMP_MATCHES) {
        regex_t re;
        char why[128];
        int rc;
        if (!json_is_string(v))
            return fail(p, v, f, "expected a regular expression (a string), found %s",
                        type_name(v));
        rc = regcomp(&re, json_string_value(v), REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            regerror(rc, &re, why, sizeof why);
            return fail(p, v, f, "not a regular expression: \"%s\": %s", json_string_value(v), why);
        }
        regfree(&re);
    }
    c->value = json_incref(v);
    return 0;
}

/* selector: "app=web,tier!=db", or a mapping of labels {app: web}. */
static int parse_selector(parser *p, json_t *body, const char *field, scn_cond *c)
{
    json_t *v = json_object_get(body, "selector"), *label;
    const char *key;
    char f[FIELD_LEN];
    char *text = NULL;
    size_t size = 0;
    FILE *mem;

    if (!v)
        return 0;
    sub(f, sizeof f, "%s.selector", field);
    if (json_is_string(v)) {
        c->selector = json_string_value(v);
        return 0;
    }
    if (!json_is_object(v))
        return fail(p, v, f, "expected a label selector (\"app=web\" or {app: web}), found %s",
                    type_name(v));
    mem = open_memstream(&text, &size);
    if (!mem)
        return oom(p);
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
            sub(f, sizeof f, "%s.selector.%s", field, key);
            return fail(p, label, f, "expected a label value, found %s", type_name(label));
        }
    }
    fclose(mem);
    c->selector = keep(p, text ? text : "");
    free(text);
    return c->selector ? 0 : oom(p);
}

static int parse_cond_body(parser *p, const char *kind, json_t *body, const char *field,
                           scn_cond *c)
{
    ref r = {0};
    int rc;

    if (strcmp(kind, "all") == 0) {
        json_t *item;
        size_t i;
        if ((rc = need_type(p, body, field, JSON_ARRAY, "a list of conditions")) != 0)
            return rc;
        if (json_array_size(body) == 0)
            return fail(p, body, field, "an empty list of conditions");
        c->kind = SCN_COND_ALL;
        c->all = calloc(json_array_size(body), sizeof *c->all);
        if (!c->all)
            return oom(p);
        json_array_foreach(body, i, item)
        {
            char f[FIELD_LEN];
            sub(f, sizeof f, "%s[%zu]", field, i);
            if ((rc = parse_cond(p, item, f, &c->all[i])) != 0)
                return rc;
            c->n_all++;
        }
        return 0;
    }
    if ((rc = need_type(p, body, field, JSON_OBJECT, "a mapping")) != 0)
        return rc;
    if (strcmp(kind, "exists") == 0 || strcmp(kind, "absent") == 0) {
        c->kind = kind[0] == 'e' ? SCN_COND_EXISTS : SCN_COND_ABSENT;
        rc = check_keys(p, body, field, presence_keys);
        if (rc == 0)
            rc = get_ref(p, body, field, true, &r);
    } else if (strcmp(kind, "field") == 0) {
        c->kind = SCN_COND_FIELD;
        rc = check_keys(p, body, field, field_keys);
        if (rc == 0)
            rc = get_ref(p, body, field, true, &r);
        if (rc == 0)
            rc = get_path(p, body, field, &c->path);
        if (rc == 0)
            rc = parse_comparison(p, body, field, false, c);
    } else {
        c->kind = SCN_COND_COUNT;
        rc = check_keys(p, body, field, count_keys);
        if (rc == 0)
            rc = get_ref(p, body, field, false, &r);
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

static int parse_cond(parser *p, json_t *v, const char *field, scn_cond **out)
{
    scn_cond *c = NULL;
    const char *kind;
    json_t *body;
    char f[FIELD_LEN], list[128];
    int rc, saved = enter(p, v);

    join_keys(cond_kinds, list, sizeof list);
    if (!json_is_object(v) || json_object_size(v) != 1) {
        if (json_is_object(v))
            rc = fail(p, v, field, "a condition has exactly one of: %s; found %zu keys", list,
                      json_object_size(v));
        else
            rc = fail(p, v, field, "a condition is a mapping with one of: %s; found %s", list,
                      type_name(v));
        goto out;
    }
    kind = json_object_iter_key(json_object_iter(v));
    body = json_object_iter_value(json_object_iter(v));
    sub(f, sizeof f, "%s.%s", field, kind);
    if (!is_one_of(kind, cond_kinds)) {
        rc = fail(p, body, f, "unknown condition; expected one of: %s", list);
        goto out;
    }
    c = calloc(1, sizeof *c);
    if (!c) {
        rc = oom(p);
        goto out;
    }
    c->line = line_of(p, v);
    c->text = keep_text(p, v);
    rc = parse_cond_body(p, kind, body, f, c);
    if (rc == 0 && !c->text)
        rc = oom(p);
out:
    p->hint = saved;
    if (rc != 0) {
        cond_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* ---- steps ---- */

static const char *const step_kinds[] = {"apply",   "patch",     "delete", "scale",  "fault",
                                         "compact", "advance",   "wait",   "expect", "crash",
                                         "restart", "partition", "heal",   NULL};

static int parse_replica(parser *p, const json_t *body, const char *field, int *out)
{
    long r = 0;
    int rc = get_int(p, body, "replica", field, 0, MAX_REPLICAS - 1, &r);
    char f[FIELD_LEN];

    if (rc != 0)
        return rc;
    if (r >= p->n_replicas) {
        sub(f, sizeof f, "%s.replica", field);
        return fail(p, json_object_get(body, "replica"), f,
                    "replica %ld does not exist: the controllers run %d replica%s (0..%d)", r,
                    p->n_replicas, p->n_replicas == 1 ? "" : "s", p->n_replicas - 1);
    }
    *out = (int)r;
    return 0;
}

static int step_apply(parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const keys[] = {"file", "manifest", NULL};
    json_t *file, *manifest;
    char f[FIELD_LEN];
    int rc;

    st->manifest = json_array();
    if (!st->manifest)
        return oom(p);
    if (json_is_array(body) || (json_is_object(body) && json_object_get(body, "kind")))
        return add_inline(p, body, field, st->manifest);
    if (!json_is_object(body))
        return fail(p, body, field,
                    "expected {file: PATH}, {manifest: ...} or a list of objects, found %s",
                    type_name(body));
    if ((rc = check_keys(p, body, field, keys)) != 0)
        return rc;
    file = json_object_get(body, "file");
    manifest = json_object_get(body, "manifest");
    if (!file == !manifest)
        return fail(p, body, field, "expected exactly one of file and manifest");
    if (file) {
        sub(f, sizeof f, "%s.file", field);
        return add_file(p, file, f, st->manifest);
    }
    sub(f, sizeof f, "%s.manifest", field);
    rc = add_inline(p, manifest, f, st->manifest);
    if (rc == 0 && json_array_size(st->manifest) == 0)
        rc = fail(p, manifest, f, "no objects");
    return rc;
}

static int step_patch(parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const keys[] = {"apiVersion", "kind",  "namespace", "name",
                                       "type",       "patch", NULL};
    static const char *const types[] = {"merge", "json", "strategic", NULL};
    ref r = {0};
    json_t *patch;
    char f[FIELD_LEN];
    int rc;

    st->patch_type = "merge";
    if ((rc = check_keys(p, body, field, keys)) != 0 || (rc = get_ref(p, body, field, true, &r)) ||
        (rc = get_string(p, body, "type", field, false, &st->patch_type)) != 0)
        return rc;
    if (!is_one_of(st->patch_type, types)) {
        sub(f, sizeof f, "%s.type", field);
        return fail(p, json_object_get(body, "type"), f,
                    "unknown patch type \"%s\"; expected merge, json or strategic", st->patch_type);
    }
    sub(f, sizeof f, "%s.patch", field);
    patch = json_object_get(body, "patch");
    if (!patch)
        return fail(p, body, f, "required field is missing");
    if (strcmp(st->patch_type, "json") == 0) {
        json_t *op;
        size_t i;
        if ((rc = need_type(p, patch, f, JSON_ARRAY, "a list of JSON patch operations")) != 0)
            return rc;
        json_array_foreach(patch, i, op)
        {
            if (!json_is_string(json_object_get(op, "op")) ||
                !json_is_string(json_object_get(op, "path"))) {
                char fi[FIELD_LEN];
                sub(fi, sizeof fi, "%s[%zu]", f, i);
                return fail(p, op, fi, "a JSON patch operation needs op and path");
            }
        }
    } else if ((rc = need_type(p, patch, f, JSON_OBJECT, "a mapping")) != 0) {
        return rc;
    }
    st->manifest = json_incref(patch);
    st->api_version = r.api_version;
    st->kind_name = r.kind;
    st->ns = r.ns;
    st->name = r.name;
    return 0;
}

static int step_target(parser *p, json_t *body, const char *field, scn_step *st, bool scale)
{
    static const char *const del_keys[] = {"apiVersion", "kind", "namespace", "name", NULL};
    static const char *const scale_keys[] = {"apiVersion", "kind",     "namespace",
                                             "name",       "replicas", NULL};
    ref r = {0};
    char f[FIELD_LEN];
    int rc;

    if ((rc = check_keys(p, body, field, scale ? scale_keys : del_keys)) != 0 ||
        (rc = get_ref(p, body, field, true, &r)) != 0)
        return rc;
    if (scale) {
        st->replicas = -1;
        if ((rc = get_int(p, body, "replicas", field, 0, 1000000, &st->replicas)) != 0)
            return rc;
        sub(f, sizeof f, "%s.replicas", field);
        if (st->replicas < 0)
            return fail(p, body, f, "required field is missing");
    }
    st->api_version = r.api_version;
    st->kind_name = r.kind;
    st->ns = r.ns;
    st->name = r.name;
    return 0;
}

static int step_fault(parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const add_keys[] = {"name", "rule", NULL};
    static const char *const remove_keys[] = {"remove", NULL};
    json_t *rule;
    char f[FIELD_LEN];
    int rc;

    if (json_object_get(body, "remove")) {
        if ((rc = check_keys(p, body, field, remove_keys)) != 0 ||
            (rc = get_string(p, body, "remove", field, true, &st->fault_name)) != 0)
            return rc;
        st->fault_remove = true;
        if (!json_object_get(p->faults, st->fault_name)) {
            sub(f, sizeof f, "%s.remove", field);
            return fail(p, json_object_get(body, "remove"), f,
                        "no fault named \"%s\" is in force here", st->fault_name);
        }
        json_object_del(p->faults, st->fault_name);
        return 0;
    }
    if ((rc = check_keys(p, body, field, add_keys)) != 0 ||
        (rc = get_string(p, body, "name", field, true, &st->fault_name)) != 0)
        return rc;
    if (json_object_get(p->faults, st->fault_name)) {
        sub(f, sizeof f, "%s.name", field);
        return fail(p, json_object_get(body, "name"), f,
                    "a fault named \"%s\" is already in force (remove it first)", st->fault_name);
    }
    sub(f, sizeof f, "%s.rule", field);
    rule = json_object_get(body, "rule");
    if (!rule)
        return fail(p, body, f, "required field is missing");
    if ((rc = need_type(p, rule, f, JSON_OBJECT, "a fault rule (a mapping, docs/faults.md)")) != 0)
        return rc;
    st->rule = json_incref(rule);
    return json_object_set(p->faults, st->fault_name, json_true()) == 0 ? 0 : oom(p);
}

static int step_crash(parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const keys[] = {"replica", "atWrite", "after", NULL};
    static const char *const match_keys[] = {"verb",      "subresource", "group", "resource",
                                             "namespace", "name",        NULL};
    json_t *after, *v;
    const char *key;
    char f[FIELD_LEN];
    int rc;

    if (json_is_string(body) && strcmp(json_string_value(body), "now") == 0)
        return 0;
    if (!json_is_object(body))
        return fail(p, body, field,
                    "expected now, {replica: N}, {replica: N, atWrite: N} or "
                    "{replica: N, after: {verb, resource, ...}}");
    if ((rc = check_keys(p, body, field, keys)) != 0 ||
        (rc = parse_replica(p, body, field, &st->replica)) != 0 ||
        (rc = get_int(p, body, "atWrite", field, 1, 1000000000, &st->crash_at_write)) != 0)
        return rc;
    after = json_object_get(body, "after");
    if (!after)
        return 0;
    sub(f, sizeof f, "%s.after", field);
    if (json_object_get(body, "atWrite"))
        return fail(p, after, f, "atWrite and after cannot both be given");
    if ((rc = need_type(p, after, f, JSON_OBJECT, "a request match {verb, resource, ...}")) != 0 ||
        (rc = check_keys(p, after, f, match_keys)) != 0)
        return rc;
    if (json_object_size(after) == 0)
        return fail(p, after, f, "an empty match would crash at the next request; write now");
    json_object_foreach(after, key, v)
    {
        if (!json_is_string(v)) {
            char fk[FIELD_LEN];
            sub(fk, sizeof fk, "%s.%s", f, key);
            return fail(p, v, fk, "expected a string, found %s", type_name(v));
        }
    }
    st->crash_after = json_incref(after);
    return 0;
}

static int step_replica_only(parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const keys[] = {"replica", NULL};
    int rc;

    if (json_is_null(body))
        return 0;
    if ((rc = need_type(p, body, field, JSON_OBJECT, "{replica: N}")) != 0 ||
        (rc = check_keys(p, body, field, keys)) != 0)
        return rc;
    return parse_replica(p, body, field, &st->replica);
}

static int step_wait(parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const keys[] = {"for", "timeout", NULL};
    json_t *v;
    char f[FIELD_LEN];
    int rc;

    if ((rc = need_type(p, body, field, JSON_OBJECT, "{for: CONDITION, timeout: DURATION}")) != 0 ||
        (rc = check_keys(p, body, field, keys)) != 0)
        return rc;
    st->duration_ns = DEFAULT_WAIT_NS;
    v = json_object_get(body, "timeout");
    sub(f, sizeof f, "%s.timeout", field);
    if (v && (rc = get_duration(p, v, f, &st->duration_ns)) != 0)
        return rc;
    if (v && st->duration_ns == 0)
        return fail(p, v, f, "a wait needs a timeout above 0 (use expect to check now)");
    sub(f, sizeof f, "%s.for", field);
    v = json_object_get(body, "for");
    if (!v)
        return fail(p, body, f, "required field is missing");
    return parse_cond(p, v, f, &st->cond);
}

static int parse_step_body(parser *p, const char *kind, json_t *body, const char *field,
                           scn_step *st)
{
    bool needs_mapping = strcmp(kind, "patch") == 0 || strcmp(kind, "delete") == 0 ||
                         strcmp(kind, "scale") == 0 || strcmp(kind, "fault") == 0;
    int rc;

    if (needs_mapping && (rc = need_type(p, body, field, JSON_OBJECT, "a mapping")) != 0)
        return rc;
    switch (st->kind) {
    case SCN_STEP_APPLY:
        return step_apply(p, body, field, st);
    case SCN_STEP_PATCH:
        return step_patch(p, body, field, st);
    case SCN_STEP_DELETE:
        return step_target(p, body, field, st, false);
    case SCN_STEP_SCALE:
        return step_target(p, body, field, st, true);
    case SCN_STEP_FAULT:
        return step_fault(p, body, field, st);
    case SCN_STEP_COMPACT:
        if (json_is_null(body) || (json_is_object(body) && json_object_size(body) == 0))
            return 0;
        return fail(p, body, field, "compact takes no options (write compact: {})");
    case SCN_STEP_ADVANCE:
        return get_duration(p, body, field, &st->duration_ns);
    case SCN_STEP_WAIT:
        return step_wait(p, body, field, st);
    case SCN_STEP_EXPECT:
        return parse_cond(p, body, field, &st->cond);
    case SCN_STEP_CRASH:
        return step_crash(p, body, field, st);
    case SCN_STEP_RESTART:
    case SCN_STEP_PARTITION:
    case SCN_STEP_HEAL:
        return step_replica_only(p, body, field, st);
    }
    return fail(p, body, field, "internal: step kind %d", (int)st->kind);
}

static int parse_step(parser *p, json_t *item, size_t index, scn_step *st)
{
    char field[FIELD_LEN], f[FIELD_LEN], list[256];
    const char *kind;
    json_t *body;
    int rc, saved = enter(p, item);

    sub(field, sizeof field, "steps[%zu]", index);
    join_keys(step_kinds, list, sizeof list);
    st->line = line_of(p, item);
    if (!json_is_object(item) || json_object_size(item) != 1) {
        rc = fail(p, item, field, "a step is a mapping with exactly one of: %s; found %s", list,
                  json_is_object(item) ? "other keys" : type_name(item));
        goto out;
    }
    kind = json_object_iter_key(json_object_iter(item));
    body = json_object_iter_value(json_object_iter(item));
    sub(f, sizeof f, "%s.%s", field, kind);
    for (size_t i = 0; step_kinds[i]; i++) {
        if (strcmp(kind, step_kinds[i]) == 0)
            st->kind = (scn_step_kind)(SCN_STEP_APPLY + (int)i);
    }
    if (!st->kind) {
        rc = fail(p, item, f, "unknown step \"%s\"; expected one of: %s", kind, list);
        goto out;
    }
    st->text = keep_text(p, item);
    rc = st->text ? parse_step_body(p, kind, body, f, st) : oom(p);
out:
    p->hint = saved;
    return rc;
}

/* ---- the scenario ---- */

static int parse_controllers(parser *p, json_t *v)
{
    static const char *const keys[] = {"name", "replicas", "config", NULL};
    scn_scenario *s = p->s;
    json_t *item;
    size_t i;
    int rc;

    if ((rc = need_type(p, v, "controllers", JSON_ARRAY, "a list of controllers")) != 0)
        return rc;
    s->controllers = calloc(json_array_size(v) + 1, sizeof *s->controllers);
    if (!s->controllers)
        return oom(p);
    json_array_foreach(v, i, item)
    {
        scn_controller_ref *c = &s->controllers[i];
        char f[FIELD_LEN];
        long replicas = 1;
        sub(f, sizeof f, "controllers[%zu]", i);
        if (json_is_string(item) && json_string_length(item) > 0) {
            c->name = json_string_value(item);
        } else if (json_is_object(item)) {
            json_t *config = json_object_get(item, "config");
            if ((rc = check_keys(p, item, f, keys)) != 0 ||
                (rc = get_string(p, item, "name", f, true, &c->name)) != 0 ||
                (rc = get_int(p, item, "replicas", f, 1, MAX_REPLICAS, &replicas)) != 0)
                return rc;
            c->config = json_incref(config);
        } else {
            return fail(p, item, f, "expected a controller name or {name, replicas, config}");
        }
        c->replicas = (int)replicas;
        s->n_controllers++;
        for (size_t j = 0; j < i; j++) {
            if (strcmp(s->controllers[j].name, c->name) == 0)
                return fail(p, item, f, "controller \"%s\" is named twice", c->name);
        }
        if (c->replicas > p->n_replicas)
            p->n_replicas = c->replicas;
    }
    return 0;
}

static int parse_fixtures(parser *p, json_t *v)
{
    json_t *item;
    size_t i;
    int rc;

    p->s->fixtures = json_array();
    if (!p->s->fixtures)
        return oom(p);
    if (!v)
        return 0;
    if ((rc = need_type(p, v, "fixtures", JSON_ARRAY, "a list of files or objects")) != 0)
        return rc;
    json_array_foreach(v, i, item)
    {
        char f[FIELD_LEN];
        sub(f, sizeof f, "fixtures[%zu]", i);
        if (json_is_string(item))
            rc = add_file(p, item, f, p->s->fixtures);
        else if (json_is_object(item) && json_object_get(item, "file") &&
                 json_object_size(item) == 1)
            rc = add_file(p, json_object_get(item, "file"), f, p->s->fixtures);
        else if (json_is_object(item))
            rc = add_object(p, item, item, f, NULL, 0, p->s->fixtures);
        else
            rc = fail(p, item, f, "expected a file name or an object, found %s", type_name(item));
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int parse_steps(parser *p, json_t *v)
{
    json_t *item;
    size_t i;
    int rc;

    if (!v)
        return 0;
    if ((rc = need_type(p, v, "steps", JSON_ARRAY, "a list of steps")) != 0)
        return rc;
    p->s->steps = calloc(json_array_size(v) + 1, sizeof *p->s->steps);
    if (!p->s->steps)
        return oom(p);
    json_array_foreach(v, i, item)
    {
        /* counted first, so that scn_scenario_free frees a half-parsed step */
        p->s->n_steps++;
        if ((rc = parse_step(p, item, i, &p->s->steps[i])) != 0)
            return rc;
    }
    return 0;
}

static int parse_invariants(parser *p, json_t *v)
{
    json_t *item;
    size_t i;
    int rc;

    if (!v)
        return 0;
    if ((rc = need_type(p, v, "invariants", JSON_ARRAY, "a list of conditions")) != 0)
        return rc;
    p->s->invariants = calloc(json_array_size(v) + 1, sizeof *p->s->invariants);
    if (!p->s->invariants)
        return oom(p);
    json_array_foreach(v, i, item)
    {
        char f[FIELD_LEN];
        sub(f, sizeof f, "invariants[%zu]", i);
        if ((rc = parse_cond(p, item, f, &p->s->invariants[i])) != 0)
            return rc;
        p->s->n_invariants++;
    }
    return 0;
}

static int parse_top(parser *p, json_t *doc)
{
    static const char *const keys[] = {"name",        "description", "seed",
                                       "controllers", "fixtures",    "maxVirtualTime",
                                       "steps",       "invariants",  NULL};
    scn_scenario *s = p->s;
    json_t *v;
    int rc;

    p->hint = kh_yaml_mark_line(p->marks, doc);
    if (!p->hint)
        p->hint = 1;
    if (!json_is_object(doc))
        return fail(p, doc, "", "a scenario is a mapping (name, controllers, steps, ...), found %s",
                    type_name(doc));
    if ((rc = check_keys(p, doc, "", keys)) != 0)
        return rc;
    if ((rc = get_string(p, doc, "name", "", true, &s->name)) != 0)
        return rc;
    v = json_object_get(doc, "description");
    if (v && !json_is_string(v))
        return fail(p, v, "description", "expected a string, found %s", type_name(v));
    v = json_object_get(doc, "seed");
    if (v) {
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return fail(p, v, "seed", "expected an integer >= 0, found %s", type_name(v));
        s->has_seed = true;
        s->seed = (uint64_t)json_integer_value(v);
    }
    v = json_object_get(doc, "maxVirtualTime");
    if (v && (rc = get_duration(p, v, "maxVirtualTime", &s->max_virtual_ns)) != 0)
        return rc;
    if (v && s->max_virtual_ns == 0)
        return fail(p, v, "maxVirtualTime", "must be above 0");
    v = json_object_get(doc, "controllers");
    if (v && (rc = parse_controllers(p, v)) != 0)
        return rc;
    if ((rc = parse_fixtures(p, json_object_get(doc, "fixtures"))) != 0 ||
        (rc = parse_steps(p, json_object_get(doc, "steps"))) != 0 ||
        (rc = parse_invariants(p, json_object_get(doc, "invariants"))) != 0)
        return rc;
    return 0;
}

/* check_keys names a top-level key "x" as ".x"; drop the leading dot. */
static void tidy_field(scn_error *err)
{
    if (err && err->field[0] == '.')
        memmove(err->field, err->field + 1, strlen(err->field));
}

static char *dir_of(const char *file)
{
    const char *slash = file ? strrchr(file, '/') : NULL;

    if (!slash)
        return strdup("");
    if (slash == file)
        return strdup("/");
    return strndup(file, (size_t)(slash - file));
}

int scn_scenario_parse(const char *file, const char *text, size_t len, scn_scenario **out,
                       scn_error *err)
{
    parser p = {.file = file ? file : "<input>", .err = err, .n_replicas = 1};
    kh_yaml_error yerr = {0};
    json_t *docs = NULL;
    int rc;

    if (!out || (!text && len > 0))
        return SCN_ERR_INPUT;
    p.s = calloc(1, sizeof *p.s);
    p.pv = calloc(1, sizeof *p.pv);
    p.dir = dir_of(file);
    p.faults = json_object();
    if (p.s)
        p.s->priv_ = p.pv;
    if (!p.s || !p.pv || !p.dir || !p.faults || !(p.pv->pool = json_array())) {
        if (!p.s)
            free(p.pv);
        rc = oom(&p);
        goto out;
    }
    p.s->max_virtual_ns = DEFAULT_MAX_VIRTUAL_NS;
    p.s->file = keep(&p, p.file);
    if (kh_yaml_load_marked(text, len, &docs, &p.marks, &yerr) != 0) {
        p.hint = yerr.line;
        rc = fail(&p, NULL, "", "%s", yerr.message);
        goto out;
    }
    if (json_array_size(docs) != 1) {
        p.hint = 1;
        rc = fail(&p, NULL, "", "expected one YAML document, found %zu", json_array_size(docs));
        goto out;
    }
    p.pv->doc = json_incref(json_array_get(docs, 0));
    rc = parse_top(&p, p.pv->doc);
out:
    tidy_field(err);
    json_decref(docs);
    json_decref(p.faults);
    kh_yaml_marks_free(p.marks);
    free(p.dir);
    if (rc != 0) {
        scn_scenario_free(p.s);
        return rc;
    }
    *out = p.s;
    return 0;
}

static int io_error(scn_error *err, const char *path, const char *why)
{
    if (err) {
        memset(err, 0, sizeof *err);
        err->code = SCN_ERR_IO;
        snprintf(err->file, sizeof err->file, "%s", path);
        snprintf(err->message, sizeof err->message, "cannot read: %s", why);
    }
    return SCN_ERR_IO;
}

int scn_scenario_load(const char *path, scn_scenario **out, scn_error *err)
{
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    FILE *f;
    int rc;

    if (!path || !out)
        return SCN_ERR_INPUT;
    f = fopen(path, "rbe");
    if (!f)
        return io_error(err, path, strerror(errno));
    do {
        if (len == cap) {
            char *grown;
            if (cap > KH_YAML_MAX_FILE_SIZE) {
                fclose(f);
                free(buf);
                return io_error(err, path, "file too large");
            }
            cap = cap ? cap * 2 : 16384;
            grown = realloc(buf, cap);
            if (!grown) {
                fclose(f);
                free(buf);
                return io_error(err, path, "out of memory");
            }
            buf = grown;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    if (ferror(f)) {
        fclose(f);
        free(buf);
        return io_error(err, path, strerror(errno ? errno : EIO));
    }
    fclose(f);
    rc = scn_scenario_parse(path, buf, len, out, err);
    free(buf);
    return rc;
}

void scn_scenario_free(scn_scenario *s)
{
    priv *pv;

    if (!s)
        return;
    for (size_t i = 0; i < s->n_controllers; i++)
        json_decref(s->controllers[i].config);
    free(s->controllers);
    json_decref(s->fixtures);
    for (size_t i = 0; i < s->n_steps; i++) {
        json_decref(s->steps[i].manifest);
        json_decref(s->steps[i].rule);
        json_decref(s->steps[i].crash_after);
        cond_free(s->steps[i].cond);
    }
    free(s->steps);
    for (size_t i = 0; i < s->n_invariants; i++)
        cond_free(s->invariants[i]);
    free(s->invariants);
    pv = s->priv_;
    if (pv) {
        json_decref(pv->doc);
        json_decref(pv->pool);
        free(pv);
    }
    free(s);
}
