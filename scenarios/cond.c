/*
 * cond.c - conditions on the store: evaluation through the caller's lookup
 * callbacks, and the messages that say what was expected and what was there.
 *
 * Nothing here reads the store directly: get and list are the caller's
 * (the scenario engine reads the fakeapi store; tests use an in-memory
 * fake). A COUNT's selector goes to list unparsed, so the store's own
 * label-selector code decides what matches.
 */
#include "scn/scenario.h"
#include "scenario_int.h"

#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_SHOWN 160 /* a value in a message is cut after this many bytes */

/* ---- paths ---- */

typedef struct seg {
    const char *key; /* NULL for an index */
    size_t klen;
    size_t index;
} seg;

__attribute__((format(printf, 3, 4))) static int path_fail(char *msg, size_t len, const char *fmt,
                                                           ...)
{
    va_list ap;

    if (msg && len) {
        va_start(ap, fmt);
        vsnprintf(msg, len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The segment at *p: 1 and *s, 0 at the end, -1 on a syntax error. */
static int path_next(const char **p, seg *s, char *msg, size_t len)
{
    const char *c = *p;

    if (*c == '\0')
        return 0;
    if (*c == '.') {
        size_t n = strcspn(c + 1, ".[");
        if (n == 0)
            return path_fail(msg, len, "empty key after '.'");
        s->key = c + 1;
        s->klen = n;
        *p = c + 1 + n;
        return 1;
    }
    if (*c != '[')
        return path_fail(msg, len, "expected '.' or '[' at \"%s\"", c);
    c++;
    if (*c == '\'' || *c == '"') {
        const char *end = strchr(c + 1, *c);
        if (!end || end[1] != ']')
            return path_fail(msg, len, "unterminated quoted key at \"%s\"", c);
        s->key = c + 1;
        s->klen = (size_t)(end - c - 1);
        *p = end + 2;
        return 1;
    }
    if (*c < '0' || *c > '9')
        return path_fail(msg, len, "expected an index or a quoted key after '['");
    s->key = NULL;
    s->index = 0;
    for (; *c >= '0' && *c <= '9'; c++) {
        if (s->index > 100000000)
            return path_fail(msg, len, "index too large");
        s->index = s->index * 10 + (size_t)(*c - '0');
    }
    if (*c != ']')
        return path_fail(msg, len, "expected ']' after the index");
    *p = c + 1;
    return 1;
}

int scn__path_check(const char *path, char *msg, size_t len)
{
    seg s;
    int r;

    if (!path || (path[0] != '.' && path[0] != '['))
        return path_fail(msg, len, "a path starts with '.' or '['");
    if (strcmp(path, ".") == 0)
        return 0;
    while ((r = path_next(&path, &s, msg, len)) == 1) {
    }
    return r;
}

json_t *scn__path_get(const json_t *v, const char *path)
{
    json_t *cur = (json_t *)v; /* jansson's getters take non-const */
    seg s;
    int r;

    if (!v || scn__path_check(path, NULL, 0) != 0)
        return NULL;
    if (strcmp(path, ".") == 0)
        return cur;
    while (cur && (r = path_next(&path, &s, NULL, 0)) == 1) {
        if (s.key)
            cur = json_is_object(cur) ? json_object_getn(cur, s.key, s.klen) : NULL;
        else
            cur = json_is_array(cur) ? json_array_get(cur, s.index) : NULL;
    }
    return cur;
}

/* ---- messages ---- */

typedef struct out {
    char *buf;
    size_t len;
    size_t used;
} out;

__attribute__((format(printf, 2, 3))) static void put(out *o, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!o->buf || o->len == 0 || o->used >= o->len - 1)
        return;
    va_start(ap, fmt);
    n = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->used += (size_t)n < o->len - o->used ? (size_t)n : o->len - o->used - 1;
}

/* A value as compact JSON ("3", "\"web\"", "{...}"), cut if long. */
static void put_value(out *o, const json_t *v)
{
    char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

    if (!text) {
        put(o, "(unprintable)");
        return;
    }
    if (strlen(text) > MAX_SHOWN)
        put(o, "%.*s...", MAX_SHOWN, text);
    else
        put(o, "%s", text);
    free(text);
}

/* ---- Secret values ---- */

/*
 * A failure message quotes values, and scenario reports end up in CI logs:
 * a Secret's data and stringData values are never shown, nor an expected
 * value written for one. Keys are kept, so a message still says what was
 * there.
 */
#define REDACTED "(redacted)"

typedef enum secret_part {
    NOT_SECRET = 0,
    SECRET_OBJECT, /* the whole Secret (path ".") */
    SECRET_MAP,    /* .data or .stringData */
    SECRET_VALUE,  /* inside one of them */
} secret_part;

static bool is_secret_kind(const char *api_version, const char *kind)
{
    return kind && (!api_version || !strcmp(api_version, "v1")) &&
           (!strcasecmp(kind, "Secret") || !strcasecmp(kind, "secrets"));
}

/* Which part of an object of this kind path names, as far as secrets go. */
static secret_part secret_part_of(const char *api_version, const char *kind, const char *path)
{
    seg s;

    if (!is_secret_kind(api_version, kind) || !path)
        return NOT_SECRET;
    if (!strcmp(path, "."))
        return SECRET_OBJECT;
    if (path_next(&path, &s, NULL, 0) != 1 || !s.key)
        return NOT_SECRET;
    if (!((s.klen == 4 && !strncmp(s.key, "data", 4)) ||
          (s.klen == 10 && !strncmp(s.key, "stringData", 10))))
        return NOT_SECRET;
    return *path ? SECRET_VALUE : SECRET_MAP;
}

/* Every value of a data map replaced (in place); anything else as a whole. */
static void redact_map(json_t *parent, const char *key)
{
    json_t *m = json_object_get(parent, key);
    const char *k;
    json_t *v;

    if (!m)
        return;
    if (!json_is_object(m)) {
        json_object_set_new(parent, key, json_string(REDACTED));
        return;
    }
    json_object_foreach(m, k, v)
    {
        json_object_set_new(m, k, json_string(REDACTED));
    }
}

/* A value read at path from an object of this kind, shown redacted. */
static void put_value_of(out *o, const char *api_version, const char *kind, const char *path,
                         const json_t *v)
{
    secret_part part = secret_part_of(api_version, kind, path);
    json_t *copy, *holder;

    if (part == NOT_SECRET || (part == SECRET_OBJECT && !json_is_object(v))) {
        put_value(o, v);
        return;
    }
    if (part == SECRET_VALUE || (part == SECRET_MAP && !json_is_object(v))) {
        put(o, REDACTED);
        return;
    }
    holder = json_object();
    copy = json_deep_copy(v);
    if (!holder || !copy || json_object_set_new(holder, "v", copy) < 0) {
        json_decref(holder);
        put(o, REDACTED);
        return;
    }
    if (part == SECRET_MAP) {
        redact_map(holder, "v");
    } else {
        redact_map(copy, "data");
        redact_map(copy, "stringData");
    }
    put_value(o, json_object_get(holder, "v"));
    json_decref(holder);
}

/* "ReplicaSet default/web", or "Namespace web" for cluster-scoped ones. */
static void put_object(out *o, const scn_cond *c)
{
    if (c->ns && c->ns[0])
        put(o, "%s %s/%s", c->kind_name, c->ns, c->name ? c->name : "");
    else
        put(o, "%s %s", c->kind_name, c->name ? c->name : "");
}

static void put_field_of(out *o, const scn_cond *c)
{
    put(o, "%s of ", c->path);
    put_object(o, c);
}

static const char *cmp_words(scn_cmp cmp, bool count)
{
    switch (cmp) {
    case SCN_CMP_EQUALS:
        return count ? "be" : "equal";
    case SCN_CMP_AT_LEAST:
        return "be at least";
    case SCN_CMP_AT_MOST:
        return "be at most";
    case SCN_CMP_MATCHES:
        return "match";
    case SCN_CMP_EXISTS:
        break;
    }
    return "exist";
}

/* ---- comparisons ---- */

static bool values_equal(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b))
        return json_integer_value(a) == json_integer_value(b);
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    return json_equal((json_t *)a, (json_t *)b);
}

/* -1, 0, 1; both numbers. Integers compare exactly, beyond a double's 53 bits. */
static int number_cmp(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        return (x > y) - (x < y);
    }
    double x = json_number_value(a), y = json_number_value(b);
    return (x > y) - (x < y);
}

/* The text a regex sees: a string as it is, anything else as compact JSON. */
static bool regex_matches(const char *pattern, const json_t *v, bool *bad)
{
    regex_t re;
    char *text = NULL;
    const char *s;
    bool ok;

    if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0) {
        *bad = true;
        return false;
    }
    if (json_is_string(v)) {
        s = json_string_value(v);
    } else {
        text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        s = text ? text : "";
    }
    ok = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    free(text);
    return ok;
}

/* The value to compare with: the literal, or another object's field (a new
 * reference in *owned). false, with the reason in o, if that is missing. */
static bool target_value(const scn_cond *c, const scn_lookup *lk, const json_t **target,
                         json_t **owned, out *o)
{
    const scn_cond *f = c->value_from;
    json_t *obj = NULL;

    *owned = NULL;
    if (!f) {
        *target = c->value;
        return true;
    }
    if (lk->get(lk->ud, f->api_version, f->kind_name, f->ns, f->name, &obj) < 0 || !obj) {
        put(o, "%s of ", f->path);
        put_object(o, f);
        put(o, ", found no ");
        put_object(o, f);
        return false;
    }
    *target = scn__path_get(obj, f->path);
    if (!*target) {
        put_field_of(o, f);
        put(o, ", found no such field");
        json_decref(obj);
        return false;
    }
    *owned = obj;
    return true;
}

static void put_target(out *o, const scn_cond *c, const json_t *target)
{
    const scn_cond *f = c->value_from;

    if (f) {
        put_field_of(o, f);
        put(o, " (");
        put_value_of(o, f->api_version, f->kind_name, f->path, target);
        put(o, ")");
    } else {
        /* An expected value written for a Secret's data is as secret. */
        put_value_of(o, c->api_version, c->kind_name, c->path, target);
    }
}

/* ---- the kinds ---- */

static bool eval_presence(const scn_cond *c, const scn_lookup *lk, out *o)
{
    json_t *obj = NULL;
    bool present = lk->get(lk->ud, c->api_version, c->kind_name, c->ns, c->name, &obj) >= 0 && obj;
    bool want = c->kind == SCN_COND_EXISTS;

    put(o, "expected ");
    put_object(o, c);
    put(o, want ? " to exist, found " : " to be absent, found ");
    if (!present) {
        put(o, "none");
    } else {
        const json_t *rv = scn__path_get(obj, ".metadata.resourceVersion");
        put(o, "it");
        if (json_is_string(rv))
            put(o, " (resourceVersion %s)", json_string_value(rv));
    }
    json_decref(obj);
    return present == want;
}

static bool compare(const scn_cond *c, const json_t *val, const json_t *target, bool *bad)
{
    switch (c->cmp) {
    case SCN_CMP_EQUALS:
        return val && values_equal(val, target);
    case SCN_CMP_AT_LEAST:
        return json_is_number(val) && json_is_number(target) && number_cmp(val, target) >= 0;
    case SCN_CMP_AT_MOST:
        return json_is_number(val) && json_is_number(target) && number_cmp(val, target) <= 0;
    case SCN_CMP_MATCHES:
        return val && json_is_string(target) && regex_matches(json_string_value(target), val, bad);
    case SCN_CMP_EXISTS:
        return (val != NULL) == !json_is_false(target);
    }
    return false;
}

static bool eval_field(const scn_cond *c, const scn_lookup *lk, out *o)
{
    json_t *obj = NULL, *owned = NULL;
    const json_t *val, *target = NULL;
    bool ok, bad = false;

    put(o, "expected ");
    put_field_of(o, c);
    if (c->cmp == SCN_CMP_EXISTS) {
        put(o, json_is_false(c->value) ? " to be absent" : " to exist");
    } else {
        put(o, " to %s ", cmp_words(c->cmp, false));
        if (!target_value(c, lk, &target, &owned, o))
            return false;
        put_target(o, c, target);
    }
    if (lk->get(lk->ud, c->api_version, c->kind_name, c->ns, c->name, &obj) < 0 || !obj) {
        put(o, ", found no ");
        put_object(o, c);
        json_decref(owned);
        return false;
    }
    val = scn__path_get(obj, c->path);
    ok = compare(c, val, target ? target : c->value, &bad);
    put(o, ", found ");
    if (val)
        put_value_of(o, c->api_version, c->kind_name, c->path, val);
    else
        put(o, "no such field");
    if (val && !ok && (c->cmp == SCN_CMP_AT_LEAST || c->cmp == SCN_CMP_AT_MOST)) {
        if (!json_is_number(val))
            put(o, " (not a number)");
        else if (!json_is_number(target))
            put(o, " (the value to compare with is not a number)");
    }
    if (bad)
        put(o, " (invalid regular expression)");
    json_decref(obj);
    json_decref(owned);
    return ok;
}

static bool eval_count(const scn_cond *c, const scn_lookup *lk, out *o)
{
    json_t *items = NULL, *owned = NULL, *n = NULL;
    const json_t *target = NULL;
    bool ok = false, bad = false;

    put(o, "expected count of %s", c->kind_name);
    if (c->ns && c->ns[0])
        put(o, " in %s", c->ns);
    else
        put(o, " in all namespaces");
    if (c->selector && c->selector[0])
        put(o, " with %s", c->selector);
    put(o, " to %s ", cmp_words(c->cmp, true));
    if (!target_value(c, lk, &target, &owned, o))
        return false;
    put_target(o, c, target);
    size_t found = 0;
    if (lk->count) {
        if (lk->count(lk->ud, c->api_version, c->kind_name, c->ns, c->selector, &found) < 0) {
            put(o, ", but the list failed");
            goto out;
        }
    } else if (!lk->list ||
               lk->list(lk->ud, c->api_version, c->kind_name, c->ns, c->selector, &items) < 0 ||
               !json_is_array(items)) {
        put(o, ", but the list failed");
        goto out;
    } else {
        found = json_array_size(items);
    }
    n = json_integer((json_int_t)found);
    if (!n) {
        put(o, ", but out of memory");
        goto out;
    }
    ok = compare(c, n, target, &bad);
    put(o, ", found %zu", found);
    if (!ok && !json_is_number(target))
        put(o, " (the value to compare with is not a number)");
out:
    json_decref(n);
    json_decref(items);
    json_decref(owned);
    return ok;
}

static bool eval(const scn_cond *c, const scn_lookup *lk, out *o);

static bool eval_all(const scn_cond *c, const scn_lookup *lk, out *o)
{
    size_t start = o->used;

    for (size_t i = 0; i < c->n_all; i++) {
        o->used = start;
        if (o->buf && o->len)
            o->buf[start] = '\0';
        if (!eval(c->all[i], lk, o))
            return false;
    }
    o->used = start;
    if (o->buf && o->len)
        o->buf[start] = '\0';
    put(o, "all %zu conditions hold", c->n_all);
    return true;
}

/* The first sub-condition that holds, else the last one's message. */
static bool eval_any(const scn_cond *c, const scn_lookup *lk, out *o)
{
    size_t start = o->used;
    for (size_t i = 0; i < c->n_all; i++) {
        o->used = start;
        if (o->buf && o->len)
            o->buf[start] = '\0';
        if (eval(c->all[i], lk, o))
            return true;
    }
    if (c->n_all > 1) {
        /* Keep the last failure's words, and say none held. */
        char last[512];
        snprintf(last, sizeof last, "%s", o->buf && o->len > start ? o->buf + start : "");
        o->used = start;
        if (o->buf && o->len)
            o->buf[start] = '\0';
        put(o, "none of %zu conditions holds (the last: %s)", c->n_all, last);
    }
    return false;
}

static bool eval_not(const scn_cond *c, const scn_lookup *lk, out *o)
{
    size_t start = o->used;
    bool held = eval(c->all[0], lk, o);
    char inner[512];
    snprintf(inner, sizeof inner, "%s", o->buf && o->len > start ? o->buf + start : "");
    o->used = start;
    if (o->buf && o->len)
        o->buf[start] = '\0';
    if (held)
        put(o, "expected this not to hold: %s", inner);
    else
        put(o, "as expected, %s", inner);
    return !held;
}

static bool eval(const scn_cond *c, const scn_lookup *lk, out *o)
{
    switch (c->kind) {
    case SCN_COND_ANY:
        return eval_any(c, lk, o);
    case SCN_COND_NOT:
        return eval_not(c, lk, o);
    case SCN_COND_EXISTS:
    case SCN_COND_ABSENT:
        return eval_presence(c, lk, o);
    case SCN_COND_FIELD:
        return eval_field(c, lk, o);
    case SCN_COND_COUNT:
        return eval_count(c, lk, o);
    case SCN_COND_ALL:
        return eval_all(c, lk, o);
    case SCN_COND_SINGLE_LEADER:
        put(o, "singleLeader is checked over a run's trace, by the runner");
        return false;
    }
    put(o, "unknown condition kind %d", (int)c->kind);
    return false;
}

bool scn_cond_eval(const scn_cond *c, const scn_lookup *lk, char *msg, size_t len)
{
    out o = {msg, len, 0};

    if (msg && len)
        msg[0] = '\0';
    if (!c || !lk || !lk->get) {
        put(&o, "no condition or no lookup");
        return false;
    }
    return eval(c, lk, &o);
}
