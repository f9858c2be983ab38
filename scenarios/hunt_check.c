/*
 * hunt_check.c - the API server's handling of a custom resource, simulated
 * for the input generator: prune unknown fields, prune the nulls the schema
 * neither allows nor defaults (apiextensions-apiserver's
 * PruneNonNullableNullsWithoutDefaults), apply defaults, validate. The
 * keywords are those fakeapi's schema.h lists; a change the generator
 * labels is labelled by this check of the whole object, and the
 * integration test (tests/integration/scenarios/test_hunt_gen.c) holds it
 * to fakeapi's answers.
 */
#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hunt_gen.h"
#include "hunt_gen_int.h"

/* ---- schema helpers ------------------------------------------------------ */

static bool flag(const json_t *s, const char *key)
{
    return json_is_true(json_object_get(s, key));
}

static bool is_meta_key(const char *k)
{
    return !strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata");
}

const json_t *scn__gen_child_schema(const json_t *s, const char *k)
{
    const json_t *prop = json_object_get(json_object_get(s, "properties"), k);
    const json_t *addl = json_object_get(s, "additionalProperties");
    if (prop)
        return prop;
    return json_is_object(addl) ? addl : NULL;
}

size_t scn__gen_utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            n++;
    return n;
}

/* ---- patterns ------------------------------------------------------------ */

/* RE2's shorthands in POSIX ERE, outside and inside a bracket expression. */
static const char *shorthand(char ch, bool in_class)
{
    switch (ch) {
    case 'd':
        return in_class ? "0-9" : "[0-9]";
    case 'w':
        return in_class ? "[:alnum:]_" : "[[:alnum:]_]";
    case 's':
        return in_class ? "[:space:]" : "[[:space:]]";
    case 'D':
        return in_class ? NULL : "[^0-9]";
    case 'W':
        return in_class ? NULL : "[^[:alnum:]_]";
    case 'S':
        return in_class ? NULL : "[^[:space:]]";
    default:
        return NULL;
    }
}

/* The pattern as POSIX ERE into buf; false if it does not fit. */
static bool to_ere(const char *re, char *buf, size_t len)
{
    size_t o = 0;
    bool in_class = false;
#define PUT(str)                                                                                   \
    do {                                                                                           \
        size_t l_ = strlen(str);                                                                   \
        if (o + l_ + 1 > len)                                                                      \
            return false;                                                                          \
        memcpy(buf + o, str, l_);                                                                  \
        o += l_;                                                                                   \
    } while (0)
    for (const char *p = re; *p; p++) {
        char one[3] = {p[0], '\0', '\0'};
        const char *sh = p[0] == '\\' && p[1] ? shorthand(p[1], in_class) : NULL;
        if (sh) {
            PUT(sh);
            p++;
        } else if (p[0] == '\\' && p[1]) {
            /* in a bracket expression a backslash is itself: keep only the character */
            one[0] = in_class ? p[1] : '\\';
            one[1] = in_class ? '\0' : p[1];
            PUT(one);
            p++;
        } else if (!in_class && !strncmp(p, "(?:", 3)) {
            PUT("(");
            p += 2;
        } else if (!in_class && p[0] == '[') {
            size_t n = 1 + (p[1] == '^');
            n += p[n] == ']';
            char open[4] = {0};
            memcpy(open, p, n);
            PUT(open);
            p += n - 1;
            in_class = true;
        } else if (in_class && p[0] == '[' && p[1] == ':' && strstr(p, ":]")) {
            const char *end = strstr(p, ":]") + 2;
            if (o + (size_t)(end - p) + 1 > len)
                return false;
            memcpy(buf + o, p, (size_t)(end - p));
            o += (size_t)(end - p);
            p = end - 1;
        } else {
            if (p[0] == ']')
                in_class = false;
            PUT(one);
        }
    }
#undef PUT
    buf[o] = '\0';
    return true;
}

#define RE_CACHE_MAX 64

struct scn__re_cache {
    char *pattern[RE_CACHE_MAX];
    regex_t re[RE_CACHE_MAX];
    bool ok[RE_CACHE_MAX];
    size_t n;
};

scn__re_cache *scn__gen_re_cache_new(void)
{
    return calloc(1, sizeof(scn__re_cache));
}

void scn__gen_re_cache_free(scn__re_cache *c)
{
    for (size_t i = 0; c && i < c->n; i++) {
        if (c->ok[i])
            regfree(&c->re[i]);
        free(c->pattern[i]);
    }
    free(c);
}

int scn__gen_re_match_cached(scn__re_cache *c, const char *pattern, const char *s)
{
    size_t i;
    for (i = 0; c && i < c->n; i++)
        if (!strcmp(c->pattern[i], pattern))
            break;
    if (!c || i == c->n) {
        char ere[2048];
        if (!c || c->n == RE_CACHE_MAX || !(c->pattern[i] = strdup(pattern)))
            return scn__gen_re_match(pattern, s);
        c->ok[i] = to_ere(pattern, ere, sizeof ere) &&
                   regcomp(&c->re[i], ere, REG_EXTENDED | REG_NOSUB) == 0;
        c->n++;
    }
    if (!c->ok[i])
        return -1;
    return regexec(&c->re[i], s, 0, NULL, 0) == 0;
}

int scn__gen_re_match(const char *pattern, const char *s)
{
    char ere[2048];
    regex_t re;
    if (!to_ere(pattern, ere, sizeof ere) || regcomp(&re, ere, REG_EXTENDED | REG_NOSUB) != 0)
        return -1;
    int rc = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return rc;
}

/* ---- validation ---------------------------------------------------------- */

typedef struct {
    char path[512];
    char *why;
    size_t len;
    bool failed;
    scn__re_cache *cache;
} vstate;

static bool fail(vstate *st, const char *what)
{
    if (!st->failed && st->why && st->len)
        snprintf(st->why, st->len, "%s: %s", st->path[0] ? st->path : "<root>", what);
    st->failed = true;
    return false;
}

static size_t push(vstate *st, const char *key, size_t index, bool is_index)
{
    size_t mark = strlen(st->path);
    if (is_index)
        snprintf(st->path + mark, sizeof st->path - mark, "[%zu]", index);
    else
        snprintf(st->path + mark, sizeof st->path - mark, "%s%s", mark ? "." : "", key);
    return mark;
}

static const char *expected_type(const json_t *s)
{
    if (flag(s, "x-kubernetes-int-or-string"))
        return "integer,string";
    return json_string_value(json_object_get(s, "type"));
}

static bool type_matches(const char *want, const json_t *v)
{
    if (!strcmp(want, "integer,string"))
        return json_is_integer(v) || json_is_string(v);
    if (!strcmp(want, "number"))
        return json_is_number(v);
    if (!strcmp(want, "integer"))
        return json_is_integer(v);
    if (!strcmp(want, "string"))
        return json_is_string(v);
    if (!strcmp(want, "boolean"))
        return json_is_boolean(v);
    if (!strcmp(want, "object"))
        return json_is_object(v);
    if (!strcmp(want, "array"))
        return json_is_array(v);
    return true;
}

static bool get_int(const json_t *s, const char *key, long long *out)
{
    const json_t *n = json_object_get(s, key);
    if (!json_is_number(n))
        return false;
    *out = json_is_integer(n) ? (long long)json_integer_value(n) : (long long)json_real_value(n);
    return true;
}

static bool digits(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

static bool is_date(const char *s)
{
    return digits(s, 4) && s[4] == '-' && digits(s + 5, 2) && s[7] == '-' && digits(s + 8, 2);
}

static bool is_date_time(const char *s)
{
    if (!is_date(s) || !s[10] || !strchr("Tt ", s[10]))
        return false;
    s += 11;
    if (!(digits(s, 2) && s[2] == ':' && digits(s + 3, 2) && s[5] == ':' && digits(s + 6, 2)))
        return false;
    s += 8;
    if (*s == '.' && digits(s + 1, 1))
        for (s++; *s >= '0' && *s <= '9'; s++) {
        }
    if ((*s == 'Z' || *s == 'z') && !s[1])
        return true;
    return (*s == '+' || *s == '-') && digits(s + 1, 2) && s[3] == ':' && digits(s + 4, 2) && !s[6];
}

static bool check_string(vstate *st, const json_t *s, const json_t *v)
{
    const char *str = json_string_value(v);
    size_t len = scn__gen_utf8_len(str);
    long long lim;
    bool ok = true;
    if (get_int(s, "maxLength", &lim) && (long long)len > lim)
        ok = fail(st, "maxLength");
    if (get_int(s, "minLength", &lim) && (long long)len < lim)
        ok = fail(st, "minLength");
    const char *pattern = json_string_value(json_object_get(s, "pattern"));
    if (pattern && scn__gen_re_match_cached(st->cache, pattern, str) != 1)
        ok = fail(st, "pattern");
    const char *format = json_string_value(json_object_get(s, "format"));
    if (format && !strcmp(format, "date-time") && !is_date_time(str))
        ok = fail(st, "format date-time");
    if (format && !strcmp(format, "date") && !(is_date(str) && str[10] == '\0'))
        ok = fail(st, "format date");
    return ok;
}

static int num_cmp(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        return (x > y) - (x < y);
    }
    double x = json_number_value(a), y = json_number_value(b);
    return (x > y) - (x < y);
}

static bool check_number(vstate *st, const json_t *s, const json_t *v)
{
    bool ok = true;
    const json_t *m = json_object_get(s, "multipleOf");
    if (json_is_number(m) && json_number_value(m) > 0) {
        bool mult;
        if (json_is_integer(v) && json_is_integer(m))
            mult = json_integer_value(v) % json_integer_value(m) == 0;
        else {
            double q = json_number_value(v) / json_number_value(m);
            mult = isfinite(q) && q == floor(q);
        }
        if (!mult)
            ok = fail(st, "multipleOf");
    }
    const json_t *max = json_object_get(s, "maximum"), *min = json_object_get(s, "minimum");
    if (json_is_number(max)) {
        int c = num_cmp(v, max);
        if (c > 0 || (flag(s, "exclusiveMaximum") && c == 0))
            ok = fail(st, "maximum");
    }
    if (json_is_number(min)) {
        int c = num_cmp(v, min);
        if (c < 0 || (flag(s, "exclusiveMinimum") && c == 0))
            ok = fail(st, "minimum");
    }
    const char *format = json_string_value(json_object_get(s, "format"));
    json_int_t i = json_integer_value(v);
    if (format && !strcmp(format, "int32") && json_is_integer(v) &&
        (i < INT32_MIN || i > INT32_MAX))
        ok = fail(st, "format int32");
    return ok;
}

static bool check_count(vstate *st, const json_t *s, size_t n, const char *max_key,
                        const char *min_key)
{
    long long lim;
    bool ok = true;
    if (get_int(s, max_key, &lim) && (long long)n > lim)
        ok = fail(st, max_key);
    if (get_int(s, min_key, &lim) && (long long)n < lim)
        ok = fail(st, min_key);
    return ok;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* x-kubernetes-list-type set/map: no two items (or key objects) alike. */
static bool check_list_type(vstate *st, const json_t *s, const json_t *v)
{
    const char *type = json_string_value(json_object_get(s, "x-kubernetes-list-type"));
    bool set = type && !strcmp(type, "set"), map = type && !strcmp(type, "map");
    size_t n = json_array_size(v), i, made = 0;
    bool ok = true;
    if ((!set && !map) || n < 2)
        return true;
    char **texts = calloc(n, sizeof *texts);
    if (!texts)
        return true;
    for (i = 0; i < n; i++, made++) {
        const json_t *el = json_array_get(v, i);
        json_t *key = json_object();
        if (map && json_is_object(el)) {
            size_t j;
            const json_t *name;
            json_array_foreach(json_object_get(s, "x-kubernetes-list-map-keys"), j, name)
            {
                const json_t *kv = json_object_get(el, json_string_value(name));
                if (json_string_value(name) && kv)
                    json_object_set(key, json_string_value(name), (json_t *)kv);
            }
        }
        texts[i] = json_dumps(map ? key : el, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        json_decref(key);
        if (!texts[i])
            break;
    }
    if (made == n) {
        qsort(texts, n, sizeof *texts, str_cmp);
        for (i = 1; i < n && ok; i++)
            if (!strcmp(texts[i], texts[i - 1]))
                ok = fail(st, "duplicate item");
    }
    for (i = 0; i < made; i++)
        free(texts[i]);
    free(texts);
    return ok;
}

static bool node(vstate *st, const json_t *s, const json_t *v, bool root, int depth);

/* A branch checked quietly: its failures do not name the first failure. */
static bool branch(vstate *st, const json_t *s, const json_t *v, bool root, int depth)
{
    vstate sub = {.why = NULL, .len = 0, .failed = false, .cache = st->cache};
    memcpy(sub.path, st->path, sizeof sub.path);
    return node(&sub, s, v, root, depth);
}

static bool check_composites(vstate *st, const json_t *s, const json_t *v, bool root, int depth)
{
    bool ok = true;
    size_t i, n_ok = 0;
    const json_t *b;
    const json_t *any = json_object_get(s, "anyOf"), *one = json_object_get(s, "oneOf");
    if (json_array_size(any) > 0) {
        json_array_foreach(any, i, b)
        {
            n_ok += branch(st, b, v, root, depth);
        }
        if (n_ok == 0)
            ok = fail(st, "anyOf");
    }
    n_ok = 0;
    if (json_array_size(one) > 0) {
        json_array_foreach(one, i, b)
        {
            n_ok += branch(st, b, v, root, depth);
        }
        if (n_ok != 1)
            ok = fail(st, "oneOf");
    }
    json_array_foreach(json_object_get(s, "allOf"), i, b)
    {
        if (!branch(st, b, v, root, depth))
            ok = fail(st, "allOf");
    }
    const json_t *neg = json_object_get(s, "not");
    if (json_is_object(neg) && branch(st, neg, v, root, depth))
        ok = fail(st, "not");
    return ok;
}

static bool check_enum(vstate *st, const json_t *s, const json_t *v)
{
    const json_t *e = json_object_get(s, "enum"), *a;
    size_t i;
    if (json_array_size(e) == 0)
        return true;
    json_array_foreach(e, i, a)
    {
        if (json_equal(a, v))
            return true;
    }
    return fail(st, "enum");
}

static bool check_object(vstate *st, const json_t *s, const json_t *v, bool root, int depth)
{
    bool ok = check_count(st, s, json_object_size(v), "maxProperties", "minProperties");
    size_t i;
    const json_t *name;
    json_array_foreach(json_object_get(s, "required"), i, name)
    {
        const char *k = json_string_value(name);
        if (!k || (root && is_meta_key(k)) || json_object_get(v, k))
            continue;
        size_t mark = push(st, k, 0, false);
        ok = fail(st, "required");
        st->path[mark] = '\0';
    }
    bool closed = json_is_false(json_object_get(s, "additionalProperties"));
    const char *k;
    const json_t *child;
    json_object_foreach((json_t *)v, k, child)
    {
        if (root && is_meta_key(k))
            continue;
        const json_t *cs = scn__gen_child_schema(s, k);
        size_t mark = push(st, k, 0, false);
        if (cs)
            ok = node(st, cs, child, false, depth + 1) && ok;
        else if (closed)
            ok = fail(st, "forbidden property");
        st->path[mark] = '\0';
    }
    return ok;
}

static bool node(vstate *st, const json_t *s, const json_t *v, bool root, int depth)
{
    if (!json_is_object(s) || depth > 200)
        return true;
    const char *want = expected_type(s);
    if (json_is_null(v)) {
        if (!want || flag(s, "nullable") || json_object_get(s, "default"))
            return true;
        return fail(st, "null");
    }
    if (want && !type_matches(want, v))
        return fail(st, "type");
    bool ok = check_composites(st, s, v, root, depth);
    if (json_is_string(v))
        ok = check_string(st, s, v) && ok;
    else if (json_is_number(v))
        ok = check_number(st, s, v) && ok;
    else if (json_is_array(v)) {
        size_t i;
        const json_t *el;
        const json_t *items = json_object_get(s, "items");
        json_array_foreach(v, i, el)
        {
            size_t mark = push(st, NULL, i, true);
            ok = node(st, items, el, false, depth + 1) && ok;
            st->path[mark] = '\0';
        }
        ok = check_count(st, s, json_array_size(v), "maxItems", "minItems") && ok;
        ok = check_list_type(st, s, v) && ok;
    }
    ok = check_enum(st, s, v) && ok;
    if (json_is_object(v))
        ok = check_object(st, s, v, root, depth) && ok;
    return ok;
}

bool scn__gen_check_cached(scn__re_cache *c, const json_t *schema, const json_t *obj, char *why,
                           size_t len)
{
    vstate st = {.why = why, .len = len, .failed = false, .cache = c};
    st.path[0] = '\0';
    if (why && len)
        why[0] = '\0';
    return node(&st, schema, obj, true, 0);
}

bool scn_gen_check(const json_t *schema, const json_t *obj, char *why, size_t len)
{
    scn__re_cache *c = scn__gen_re_cache_new();
    bool ok = scn__gen_check_cached(c, schema, obj, why, len);
    scn__gen_re_cache_free(c);
    return ok;
}

/* ---- pruning and defaulting ---------------------------------------------- */

static void prune(const json_t *s, json_t *v, bool root, bool preserve, int depth)
{
    if (depth > 200)
        return;
    preserve = preserve || flag(s, "x-kubernetes-preserve-unknown-fields");
    if (json_is_object(v)) {
        bool keep_meta = root || flag(s, "x-kubernetes-embedded-resource");
        bool open = json_is_true(json_object_get(s, "additionalProperties"));
        const char *k;
        json_t *child;
        void *tmp;
        json_object_foreach_safe(v, tmp, k, child)
        {
            if (keep_meta && is_meta_key(k))
                continue;
            const json_t *cs = scn__gen_child_schema(s, k);
            if (cs)
                prune(cs, child, false, false, depth + 1);
            else if (!preserve && !open)
                json_object_del(v, k);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *el;
        json_array_foreach(v, i, el)
        {
            prune(json_object_get(s, "items"), el, false, preserve, depth + 1);
        }
    }
}

/* Nulls in objects whose schema is neither nullable nor defaulted go
 * (array items stay, to be defaulted or rejected). */
static void prune_nulls(const json_t *s, json_t *v, int depth)
{
    if (depth > 200)
        return;
    if (json_is_object(v)) {
        const char *k;
        json_t *child;
        void *tmp;
        json_object_foreach_safe(v, tmp, k, child)
        {
            const json_t *cs = scn__gen_child_schema(s, k);
            if (json_is_null(child) && json_is_object(cs) && !flag(cs, "nullable") &&
                !json_object_get(cs, "default"))
                json_object_del(v, k);
            else
                prune_nulls(cs, child, depth + 1);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *el;
        json_array_foreach(v, i, el)
        {
            prune_nulls(json_object_get(s, "items"), el, depth + 1);
        }
    }
}

static json_t *default_for_null(const json_t *s, const json_t *v)
{
    const json_t *def = json_object_get(s, "default");
    if (!def || !json_is_null(v) || flag(s, "nullable"))
        return NULL;
    return json_deep_copy(def);
}

static void defaults(const json_t *s, json_t *v, int depth)
{
    if (!json_is_object(s) || depth > 200)
        return;
    if (json_is_object(v)) {
        const char *k;
        json_t *ps, *child;
        json_object_foreach(json_object_get(s, "properties"), k, ps)
        {
            const json_t *def = json_object_get(ps, "default");
            if (def && !json_object_get(v, k))
                json_object_set_new(v, k, json_deep_copy(def));
        }
        json_object_foreach(v, k, child)
        {
            const json_t *cs = scn__gen_child_schema(s, k);
            json_t *def = default_for_null(cs, child);
            if (def) {
                json_object_set_new(v, k, def);
                child = def;
            }
            defaults(cs, child, depth + 1);
        }
    } else if (json_is_array(v)) {
        const json_t *items = json_object_get(s, "items");
        size_t i;
        json_t *el;
        json_array_foreach(v, i, el)
        {
            json_t *def = default_for_null(items, el);
            if (def) {
                json_array_set_new(v, i, def);
                el = def;
            }
            defaults(items, el, depth + 1);
        }
    }
}

void scn__gen_store(const json_t *schema, json_t *obj)
{
    if (!json_is_object(schema))
        return;
    prune(schema, obj, true, false, 0);
    prune_nulls(schema, obj, 0);
    defaults(schema, obj, 0);
}

/* ---- JSON pointers ------------------------------------------------------- */

/* The next token of pointer *p (unescaped) into tok; false at the end. */
static bool next_token(const char **p, char *tok, size_t len)
{
    if (**p != '/')
        return false;
    const char *c = *p + 1;
    size_t o = 0;
    for (; *c && *c != '/'; c++) {
        char ch = *c;
        if (ch == '~' && (c[1] == '0' || c[1] == '1')) {
            ch = c[1] == '0' ? '~' : '/';
            c++;
        }
        if (o + 1 < len)
            tok[o++] = ch;
    }
    tok[o] = '\0';
    *p = c;
    return true;
}

static bool parse_index(const char *tok, size_t *out)
{
    char *end;
    if (!*tok || (tok[0] == '0' && tok[1]) || tok[0] < '0' || tok[0] > '9')
        return false;
    unsigned long long v = strtoull(tok, &end, 10);
    if (*end || v > 1000000000ULL)
        return false;
    *out = (size_t)v;
    return true;
}

static json_t *child_of(const json_t *c, const char *tok)
{
    size_t i;
    if (json_is_object(c))
        return json_object_get(c, tok);
    if (json_is_array(c) && parse_index(tok, &i))
        return json_array_get(c, i);
    return NULL;
}

json_t *scn__gen_pointer_get(const json_t *doc, const char *pointer)
{
    char tok[512];
    json_t *cur = (json_t *)doc;
    while (cur && next_token(&pointer, tok, sizeof tok))
        cur = child_of(cur, tok);
    return cur;
}

int scn__gen_pointer_set(json_t *doc, const char *pointer, const json_t *value)
{
    char tok[512], last[512] = "";
    json_t *parent = NULL, *cur = doc;
    const char *p = pointer;
    while (next_token(&p, tok, sizeof tok)) {
        if (*p == '\0') {
            parent = cur;
            memcpy(last, tok, sizeof last);
            break;
        }
        cur = child_of(cur, tok);
        if (!cur)
            return -1;
    }
    if (!parent)
        return -1;
    size_t i;
    if (json_is_object(parent)) {
        if (!value)
            return json_object_del(parent, last) == 0 ? 0 : -1;
        return json_object_set_new(parent, last, json_deep_copy(value)) == 0 ? 0 : -1;
    }
    if (!json_is_array(parent) || !parse_index(last, &i))
        return -1;
    if (!value)
        return i < json_array_size(parent) && json_array_remove(parent, i) == 0 ? 0 : -1;
    if (i < json_array_size(parent))
        return json_array_set_new(parent, i, json_deep_copy(value)) == 0 ? 0 : -1;
    if (i == json_array_size(parent))
        return json_array_append_new(parent, json_deep_copy(value)) == 0 ? 0 : -1;
    return -1;
}

int scn_gen_apply(const json_t *schema, const json_t *obj, const scn_gen_change *c, json_t **out,
                  bool *valid)
{
    return scn__gen_apply_cached(NULL, schema, obj, c, out, valid);
}

int scn__gen_apply_cached(scn__re_cache *cache, const json_t *schema, const json_t *obj,
                          const scn_gen_change *c, json_t **out, bool *valid)
{
    json_t *o = json_deep_copy(obj);
    if (!o)
        return SCN_ERR_NOMEM;
    if (scn__gen_pointer_set(o, c->path, c->value) != 0) {
        json_decref(o);
        return SCN_ERR_INPUT;
    }
    scn__gen_store(schema, o);
    *valid = cache ? scn__gen_check_cached(cache, schema, o, NULL, 0)
                   : scn_gen_check(schema, o, NULL, 0);
    *out = o;
    return 0;
}
