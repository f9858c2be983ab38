/*
 * scn_parse.c - helpers of the scenario parser (see scn_parse.h): errors
 * that name the file, line and field; typed getters that check as they
 * read; durations ("90s", "1h30m", numbers of seconds); manifests inline
 * or from files (relative to the scenario's directory); object references.
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

/* ---- errors and small helpers ---- */

__attribute__((format(printf, 3, 4))) void scn__sub(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

int scn__line_of(const scn__parser *p, const json_t *v)
{
    int line = kh_yaml_mark_line(p->marks, v);

    return line ? line : p->hint;
}

/* Makes v's line the one errors inside it fall back on; returns the old. */
int scn__enter(scn__parser *p, const json_t *v)
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
__attribute__((format(printf, 4, 5))) int scn__fail(scn__parser *p, const json_t *node,
                                                    const char *field, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    set_error(p->err, SCN_ERR_INPUT, p->file, scn__line_of(p, node), field, fmt, ap);
    va_end(ap);
    return SCN_ERR_INPUT;
}

int scn__oom(scn__parser *p)
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
const char *scn__keep(scn__parser *p, const char *s)
{
    json_t *str = json_string(s);

    if (!str || json_array_append_new(p->pv->pool, str) != 0)
        return NULL;
    return json_string_value(str);
}

/* Compact JSON of v, kept; "" if it cannot be printed. */
const char *scn__keep_text(scn__parser *p, const json_t *v)
{
    char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    const char *kept = scn__keep(p, text ? text : "");

    free(text);
    return kept;
}

/* "a string", "an integer", ... for "expected X, found Y". */
const char *scn__type_name(const json_t *v)
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

int scn__join_keys(const char *const *keys, char *buf, size_t len)
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

bool scn__is_one_of(const char *s, const char *const *keys)
{
    for (; *keys; keys++) {
        if (strcmp(s, *keys) == 0)
            return true;
    }
    return false;
}

/* Every key of obj is one of allowed. */
int scn__check_keys(scn__parser *p, const json_t *obj, const char *field,
                    const char *const *allowed)
{
    const char *key;
    json_t *v;
    char f[FIELD_LEN], list[256];

    json_object_foreach((json_t *)obj, key, v)
    {
        if (scn__is_one_of(key, allowed))
            continue;
        scn__join_keys(allowed, list, sizeof list);
        scn__sub(f, sizeof f, "%s.%s", field, key);
        return scn__fail(p, v, f, "unknown field; expected one of: %s", list);
    }
    return 0;
}

int scn__need_type(scn__parser *p, const json_t *v, const char *field, json_type type,
                   const char *what)
{
    if (v && json_typeof(v) == type)
        return 0;
    return scn__fail(p, v, field, "expected %s, found %s", what, scn__type_name(v));
}

/* obj.key as a string into *out (untouched when absent and optional). */
int scn__get_string(scn__parser *p, const json_t *obj, const char *key, const char *field,
                    bool required, const char **out)
{
    json_t *v = json_object_get(obj, key);
    char f[FIELD_LEN];

    scn__sub(f, sizeof f, "%s.%s", field, key);
    if (!v) {
        if (required)
            return scn__fail(p, obj, f, "required field is missing");
        return 0;
    }
    if (!json_is_string(v))
        return scn__fail(p, v, f, "expected a string, found %s", scn__type_name(v));
    if (json_string_length(v) == 0)
        return scn__fail(p, v, f, "must not be empty");
    *out = json_string_value(v);
    return 0;
}

/* obj.key as an integer in [lo, hi] into *out (untouched when absent). */
int scn__get_int(scn__parser *p, const json_t *obj, const char *key, const char *field, long lo,
                 long hi, long *out)
{
    json_t *v = json_object_get(obj, key);
    char f[FIELD_LEN];

    if (!v)
        return 0;
    scn__sub(f, sizeof f, "%s.%s", field, key);
    if (!json_is_integer(v))
        return scn__fail(p, v, f, "expected an integer, found %s", scn__type_name(v));
    if (json_integer_value(v) < lo || json_integer_value(v) > hi)
        return scn__fail(p, v, f, "%" JSON_INTEGER_FORMAT " is out of range [%ld, %ld]",
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

int scn__get_duration(scn__parser *p, const json_t *v, const char *field, int64_t *out)
{
    char *text;
    int rc;

    if (scn_parse_duration(v, out) == 0)
        return 0;
    text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    rc = scn__fail(p, v, field, "not a duration: %s (write 500ms, 10s, 5m, 24h, 1h30m or seconds)",
                   text ? text : "?");
    free(text);
    return rc;
}

/* ---- manifests ---- */

/* "fixtures/x.yaml" resolved against the scenario's directory, kept. */
static const char *resolve(scn__parser *p, const char *path)
{
    char *full;
    const char *kept;

    if (path[0] == '/' || p->dir[0] == '\0')
        return scn__keep(p, path);
    if (asprintf(&full, "%s/%s", p->dir, path) < 0)
        return NULL;
    kept = scn__keep(p, full);
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
int scn__add_object(scn__parser *p, json_t *obj, const json_t *node, const char *field,
                    const char *where, int depth, json_t *into)
{
    json_t *meta, *item;
    size_t i;
    const char *missing = NULL;

    if (!where)
        node = obj;
    if (!json_is_object(obj))
        return scn__fail(p, node, field, "%s%sexpected an object (a mapping), found %s",
                         where ? where : "", where ? ": " : "", scn__type_name(obj));
    if (list_kind(obj)) {
        if (depth >= MAX_LIST_DEPTH)
            return scn__fail(p, node, field, "%s%sLists nested too deep", where ? where : "",
                             where ? ": " : "");
        json_array_foreach(json_object_get(obj, "items"), i, item)
        {
            char f[FIELD_LEN];
            scn__sub(f, sizeof f, "%s.items[%zu]", field, i);
            int rc = scn__add_object(p, item, node, where ? field : f, where, depth + 1, into);
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
        return scn__fail(p, node, field, "%s%sobject has no %s", where ? where : "",
                         where ? ": " : "", missing);
    return json_array_append(into, obj) == 0 ? 0 : scn__oom(p);
}

/* Objects (an object, a List, or a list of them) inline at v. */
int scn__add_inline(scn__parser *p, json_t *v, const char *field, json_t *into)
{
    size_t i;
    json_t *item;
    char f[FIELD_LEN];

    if (!json_is_array(v))
        return scn__add_object(p, v, v, field, NULL, 0, into);
    json_array_foreach(v, i, item)
    {
        scn__sub(f, sizeof f, "%s[%zu]", field, i);
        int rc = scn__add_object(p, item, item, f, NULL, 0, into);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The objects of the manifest file named by node (a string), YAML or JSON. */
int scn__add_file(scn__parser *p, const json_t *node, const char *field, json_t *into)
{
    kh_yaml_error yerr = {0};
    const char *name = json_string_value(node), *path;
    json_t *docs = NULL, *doc;
    size_t i, before = json_array_size(into);
    int rc = 0;

    if (!name || !name[0])
        return scn__fail(p, node, field, "expected a file name, found %s", scn__type_name(node));
    path = resolve(p, name);
    if (!path)
        return scn__oom(p);
    if (kh_yaml_load_file(path, &docs, &yerr) != 0) {
        if (yerr.line == 0) /* the message names the path and says why */
            return scn__fail(p, node, field, "cannot read manifest: %s", yerr.message);
        return scn__fail(p, node, field, "%s:%d:%d: %s", path, yerr.line, yerr.column,
                         yerr.message);
    }
    json_array_foreach(docs, i, doc)
    {
        char where[300];
        if (json_is_null(doc))
            continue;
        scn__sub(where, sizeof where, "%s: document %zu", path, i + 1);
        rc = scn__add_object(p, doc, node, field, where, 0, into);
        if (rc != 0)
            break;
    }
    json_decref(docs);
    if (rc == 0 && json_array_size(into) == before)
        rc = scn__fail(p, node, field, "%s holds no objects", path);
    return rc;
}

/* ---- object references ---- */

int scn__get_ref(scn__parser *p, const json_t *obj, const char *field, bool need_name, scn__ref *r)
{
    int rc;

    if ((rc = scn__get_string(p, obj, "apiVersion", field, true, &r->api_version)) != 0 ||
        (rc = scn__get_string(p, obj, "kind", field, true, &r->kind)) != 0 ||
        (rc = scn__get_string(p, obj, "namespace", field, false, &r->ns)) != 0 ||
        (rc = scn__get_string(p, obj, "name", field, need_name, &r->name)) != 0)
        return rc;
    return 0;
}
