/*
 * hunt_gen.c - changes to a custom resource from its schema, as Acto makes
 * them (hunt_gen.h). Per field, candidate values are proposed from the
 * keywords (bounds and one past them, enum members and a non-member,
 * strings built from the pattern, lengths at and past their bounds, items
 * added and removed, another type); then each is applied to the whole
 * object as the server would store it and checked (hunt_check.c): a
 * candidate meant to be valid that fails, or meant to be invalid that
 * passes, is dropped, and so is a valid one that changes nothing.
 *
 * Fields that the object does not have yet are walked too: the walk puts
 * a minimal instance of them into its working copy ("virtual"), and a
 * change below one becomes an "add" of the first missing parent, whole.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hunt_gen.h"
#include "hunt_gen_int.h"

#define MAX_PROPS 64       /* candidates proposed for one field */
#define MAX_ITEMS_WALKED 2 /* existing items (first, last) and map entries walked */
#define MAX_LIST_BOUND 16  /* lists made whole at maxItems only up to this */
#define BOUND 1e15         /* numeric bounds beyond this are treated as absent */

typedef enum { K_ANY, K_OBJ, K_ARR, K_STR, K_INT, K_NUM, K_BOOL, K_IOS } kind;

static bool flag(const json_t *s, const char *key)
{
    return json_is_true(json_object_get(s, key));
}

static kind kind_of(const json_t *s)
{
    const char *t = json_string_value(json_object_get(s, "type"));
    if (flag(s, "x-kubernetes-int-or-string"))
        return K_IOS;
    if (!t) {
        if (json_object_get(s, "properties") ||
            json_is_object(json_object_get(s, "additionalProperties")))
            return K_OBJ;
        if (json_object_get(s, "items"))
            return K_ARR;
        return K_ANY;
    }
    if (!strcmp(t, "object"))
        return K_OBJ;
    if (!strcmp(t, "array"))
        return K_ARR;
    if (!strcmp(t, "string"))
        return K_STR;
    if (!strcmp(t, "integer"))
        return K_INT;
    if (!strcmp(t, "number"))
        return K_NUM;
    if (!strcmp(t, "boolean"))
        return K_BOOL;
    return K_ANY;
}

static bool is_required(const json_t *parent_schema, const char *k)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(parent_schema, "required"), i, r)
    {
        if (json_is_string(r) && !strcmp(json_string_value(r), k))
            return true;
    }
    return false;
}

static bool get_num(const json_t *s, const char *key, double *out)
{
    const json_t *n = json_object_get(s, key);
    if (!json_is_number(n) || !isfinite(json_number_value(n)) || fabs(json_number_value(n)) > BOUND)
        return false;
    *out = json_number_value(n);
    return true;
}

static bool get_count(const json_t *s, const char *key, long long *out)
{
    double d;
    if (!get_num(s, key, &d) || d < 0)
        return false;
    *out = (long long)d;
    return true;
}

static int re_match(const char *pattern, const char *str)
{
    return scn__gen_re_match(pattern, str);
}

static bool check(const json_t *schema, const json_t *v)
{
    return scn_gen_check(schema, v, NULL, 0);
}

/* ---- candidates ---------------------------------------------------------- */

typedef struct {
    json_t *v;  /* NULL: remove */
    int intent; /* 1 valid, 0 invalid, -1 whichever the check says */
    char why[96], why_bad[96];
} prop;

typedef struct {
    prop p[MAX_PROPS];
    size_t n;
} props;

/* Add a candidate (v stolen; NULL v only with remove set). */
static void add(props *ps, json_t *v, bool remove, int intent, const char *why, const char *why_bad)
{
    if ((!v && !remove) || ps->n >= MAX_PROPS) {
        json_decref(v);
        return;
    }
    prop *p = &ps->p[ps->n++];
    p->v = v;
    p->intent = intent;
    snprintf(p->why, sizeof p->why, "%s", why);
    snprintf(p->why_bad, sizeof p->why_bad, "%s", why_bad ? why_bad : why);
}

static void props_free(props *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        json_decref(ps->p[i].v);
    ps->n = 0;
}

/* A string of n characters: "hunt" then 'a's (n capped). */
static json_t *str_of_len(size_t n)
{
    char buf[SCN__GEN_MAX_STRLEN + 1];
    if (n > SCN__GEN_MAX_STRLEN)
        return NULL;
    for (size_t i = 0; i < n; i++)
        buf[i] = i < 4 ? "hunt"[i] : 'a';
    buf[n] = '\0';
    return json_string(buf);
}

/* A valid example of a string format, or NULL when any string will do. */
static const char *format_sample(const char *format, bool *known)
{
    static const struct {
        const char *format, *sample;
    } samples[] = {
        {"date-time", "2024-01-02T03:04:05Z"},
        {"date", "2024-01-02"},
        {"uuid", "0e3f9a86-1f0c-4d2b-9c52-3b7f2f1b5c1e"},
        {"email", "hunt@example.com"},
        {"hostname", "example.com"},
        {"ipv4", "10.0.0.1"},
        {"ipv6", "fd00::1"},
        {"cidr", "10.0.0.0/24"},
        {"uri", "https://example.com/"},
        {"byte", "aHVudA=="},
        {"duration", "1h"},
        {"mac", "02:00:00:00:00:01"},
    };
    *known = format == NULL || !strcmp(format, "password") || !strcmp(format, "int-or-string");
    if (!format)
        return NULL;
    /* the check models these two; the server checks the others its own way */
    *known = *known || !strcmp(format, "date") || !strcmp(format, "date-time");
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
        if (!strcmp(format, samples[i].format))
            return samples[i].sample;
    return NULL;
}

static json_t *number(double d)
{
    if (d == floor(d) && fabs(d) < 9e15)
        return json_integer((json_int_t)d);
    return json_real(d);
}

/* Bounds of an integer field: [lo, hi] with multiples of m (m >= 1). */
typedef struct {
    bool has_lo, has_hi;
    long long lo, hi, m;
    bool excl_lo, excl_hi;
    double min, max; /* as declared */
} ibounds;

static ibounds int_bounds(const json_t *s)
{
    ibounds b = {.m = 1};
    double d;
    if (get_num(s, "minimum", &d)) {
        b.has_lo = true;
        b.min = d;
        b.excl_lo = flag(s, "exclusiveMinimum");
        b.lo = b.excl_lo ? (long long)floor(d) + 1 : (long long)ceil(d);
    }
    if (get_num(s, "maximum", &d)) {
        b.has_hi = true;
        b.max = d;
        b.excl_hi = flag(s, "exclusiveMaximum");
        b.hi = b.excl_hi ? (long long)ceil(d) - 1 : (long long)floor(d);
    }
    const json_t *m = json_object_get(s, "multipleOf");
    if (json_is_integer(m) && json_integer_value(m) > 1 && json_integer_value(m) < 1000000000)
        b.m = json_integer_value(m);
    return b;
}

static long long round_down(long long v, long long m)
{
    long long r = v % m;
    return r == 0 ? v : v - (r < 0 ? r + m : r);
}

static void int_candidates(props *ps, const json_t *s, const json_t *cur, bool as_ios)
{
    ibounds b = int_bounds(s);
    long long c = json_is_integer(cur) ? (long long)json_integer_value(cur) : 0;
    if (llabs(c) > (long long)BOUND)
        c = 0;
    if (b.has_lo)
        add(ps, json_integer(round_down(b.lo + b.m - 1, b.m)), false, 1,
            b.excl_lo ? "exclusive minimum, just above" : "minimum", NULL);
    if (b.has_hi)
        add(ps, json_integer(round_down(b.hi, b.m)), false, 1,
            b.excl_hi ? "exclusive maximum, just below" : "maximum", NULL);
    add(ps, json_integer(0), false, 1, "zero", NULL);
    if (json_is_integer(cur)) {
        add(ps, json_integer(c + b.m), false, 1, "increase", NULL);
        add(ps, json_integer(c - b.m), false, 1, "decrease", NULL);
    }
    add(ps, json_integer(b.m), false, 1, "one", NULL);
    add(ps, json_integer(-b.m), false, 1, "negative", NULL);
    add(ps, json_integer(round_down(b.has_hi && b.hi < 1000 ? b.hi : 1000, b.m)), false, 1, "large",
        NULL);
    if (b.has_lo)
        add(ps, json_integer(b.excl_lo ? (long long)b.min : b.lo - 1), false, 0,
            b.excl_lo ? "exclusive minimum itself" : "below minimum", NULL);
    if (b.has_hi)
        add(ps, json_integer(b.excl_hi ? (long long)b.max : b.hi + 1), false, 0,
            b.excl_hi ? "exclusive maximum itself" : "above maximum", NULL);
    if (b.m > 1) {
        long long v = round_down(b.has_lo ? b.lo + b.m - 1 : 0, b.m) + 1;
        add(ps, json_integer(v), false, 0, "not a multiple", NULL);
    }
    if (!as_ios) {
        add(ps, json_string("1"), false, 0, "string for integer", NULL);
        add(ps, json_real(1.5), false, 0, "number for integer", NULL);
    }
}

static void num_candidates(props *ps, const json_t *s, const json_t *cur)
{
    double lo = 0, hi = 0, m = 0, c = json_is_number(cur) ? json_number_value(cur) : 0;
    bool has_lo = get_num(s, "minimum", &lo), has_hi = get_num(s, "maximum", &hi);
    bool elo = flag(s, "exclusiveMinimum"), ehi = flag(s, "exclusiveMaximum");
    if (!get_num(s, "multipleOf", &m) || m <= 0)
        m = 0;
    if (has_lo) {
        add(ps, number(lo), false, elo ? 0 : 1, elo ? "exclusive minimum itself" : "minimum", NULL);
        add(ps, number(lo - 1), false, 0, "below minimum", NULL);
    }
    if (has_hi) {
        add(ps, number(hi), false, ehi ? 0 : 1, ehi ? "exclusive maximum itself" : "maximum", NULL);
        add(ps, number(hi + 1), false, 0, "above maximum", NULL);
    }
    if (has_lo && has_hi)
        add(ps, number((lo + hi) / 2), false, 1, "middle", NULL);
    if (has_lo)
        add(ps, number(lo + 0.5), false, 1, "just above minimum", NULL);
    if (has_hi)
        add(ps, number(hi - 0.5), false, 1, "just below maximum", NULL);
    if (m > 0) {
        double k = has_lo ? ceil(lo / m) : 1;
        add(ps, number(k * m), false, 1, "a multiple", NULL);
        add(ps, number((k + 1) * m), false, 1, "a multiple", NULL);
        add(ps, number(k * m + m / 2), false, 0, "not a multiple", NULL);
    }
    add(ps, json_integer(0), false, 1, "zero", NULL);
    add(ps, json_real(0.5), false, 1, "fraction", NULL);
    add(ps, json_integer(-1), false, 1, "negative", NULL);
    if (json_is_number(cur))
        add(ps, number(c + 1), false, 1, "increase", NULL);
    add(ps, json_string("1"), false, 0, "string for number", NULL);
}

static void str_candidates(props *ps, const json_t *s, const json_t *cur, bool as_ios)
{
    long long minl = 0, maxl = -1;
    get_count(s, "minLength", &minl);
    if (!get_count(s, "maxLength", &maxl))
        maxl = -1;
    const char *pattern = json_string_value(json_object_get(s, "pattern"));
    const char *format = json_string_value(json_object_get(s, "format"));
    bool known;
    const char *sample = format_sample(format, &known);
    if (sample)
        add(ps, json_string(sample), false, 1, "format example", NULL);
    if (format && (!strcmp(format, "date") || !strcmp(format, "date-time")))
        add(ps, json_string("not-a-date"), false, 0, "not a date", NULL);
    char why[96];
    if (!known) {
        /* a format the server may check that we cannot write: another type only */
    } else if (pattern) {
        size_t want[4], nw = 0;
        want[nw++] = (size_t)minl;
        if (minl > 0)
            want[nw++] = (size_t)minl - 1;
        if (maxl >= 0 && maxl < SCN__GEN_MAX_STRLEN) {
            want[nw++] = (size_t)maxl;
            want[nw++] = (size_t)maxl + 1;
        }
        json_t *strs = json_array();
        scn__gen_re_strings(pattern, want, nw, strs, 12);
        size_t i;
        json_t *v;
        const char *a_match = NULL;
        json_array_foreach(strs, i, v)
        {
            const char *str = json_string_value(v);
            size_t len = scn__gen_utf8_len(str);
            if (re_match(pattern, str) != 1)
                continue;
            if ((long long)len < minl) {
                add(ps, json_incref(v), false, 0, "below minLength, matches pattern", NULL);
            } else if (maxl >= 0 && (long long)len > maxl) {
                add(ps, json_incref(v), false, 0, "above maxLength, matches pattern", NULL);
            } else {
                snprintf(why, sizeof why, "matches pattern%s",
                         (long long)len == minl   ? ", minLength"
                         : (long long)len == maxl ? ", maxLength"
                                                  : "");
                add(ps, json_incref(v), false, 1, why, NULL);
                if (!a_match)
                    a_match = str;
            }
        }
        /* a string within the lengths that does not match */
        static const char *const misses[] = {"", "!", "~~", "hunt!", "A B", "0", "-", "a.b"};
        char buf[SCN__GEN_MAX_STRLEN + 8];
        bool found = false;
        for (int pass = 0; pass < 2 && !found; pass++) {
            for (size_t k = 0; k < sizeof misses / sizeof misses[0] + 2 && !found; k++) {
                if (k < sizeof misses / sizeof misses[0])
                    snprintf(buf, sizeof buf, "%s", misses[k]);
                else if (a_match)
                    snprintf(buf, sizeof buf, k % 2 ? "!%s" : "%s!", a_match);
                else
                    continue;
                size_t len = scn__gen_utf8_len(buf);
                bool fits = (long long)len >= minl && (maxl < 0 || (long long)len <= maxl);
                if ((fits || pass == 1) && re_match(pattern, buf) == 0) {
                    add(ps, json_string(buf), false, 0, "does not match pattern", NULL);
                    found = true;
                }
            }
        }
        json_decref(strs);
    } else {
        if (minl == 0)
            add(ps, json_string(""), false, 1, "empty", NULL);
        else
            add(ps, str_of_len((size_t)minl), false, 1, "minLength", NULL);
        if (maxl > 0 && maxl <= SCN__GEN_MAX_STRLEN)
            add(ps, str_of_len((size_t)maxl), false, 1, "maxLength", NULL);
        size_t mid = (size_t)(minl > 8 ? minl : 8);
        if (maxl < 0 || (long long)mid <= maxl)
            add(ps, str_of_len(mid), false, 1, "other value", NULL);
        if (json_is_string(cur)) {
            char buf[SCN__GEN_MAX_STRLEN + 8];
            snprintf(buf, sizeof buf, "%s-x", json_string_value(cur));
            add(ps, json_string(buf), false, 1, "changed", NULL);
        }
        if (minl > 0)
            add(ps, str_of_len((size_t)minl - 1), false, 0, "below minLength", NULL);
        if (maxl >= 0 && maxl < SCN__GEN_MAX_STRLEN)
            add(ps, str_of_len((size_t)maxl + 1), false, 0, "above maxLength", NULL);
    }
    if (!as_ios)
        add(ps, json_integer(1), false, 0, "integer for string", NULL);
}

/* Enum members, a default, and a non-member. */
static void enum_candidates(props *ps, const json_t *s)
{
    const json_t *e = json_object_get(s, "enum"), *v;
    size_t i, n = json_array_size(e);
    char why[96];
    json_array_foreach(e, i, v)
    {
        snprintf(why, sizeof why, "enum value %zu of %zu", i + 1, n);
        add(ps, json_deep_copy(v), false, 1, why, NULL);
    }
    kind k = kind_of(s);
    if (k == K_STR || (k == K_IOS && json_is_string(json_array_get(e, 0))))
        add(ps, json_string("hunt-not-in-enum"), false, 0, "not in enum", NULL);
    else if (k == K_INT || k == K_NUM || k == K_IOS) {
        long long big = 0;
        json_array_foreach(e, i, v)
        {
            if (json_is_number(v) && json_number_value(v) > (double)big &&
                json_number_value(v) < BOUND)
                big = (long long)json_number_value(v);
        }
        add(ps, json_integer(big + 1), false, 0, "not in enum", NULL);
    } else if (k == K_BOOL) {
        add(ps, json_true(), false, 0, "not in enum", NULL);
        add(ps, json_false(), false, 0, "not in enum", NULL);
    }
}

/* Value candidates of a field of schema s holding cur (NULL: absent). */
static void value_candidates(props *ps, const json_t *s, const json_t *cur)
{
    const json_t *def = json_object_get(s, "default");
    if (def)
        add(ps, json_deep_copy(def), false, 1, "default value", NULL);
    if (json_array_size(json_object_get(s, "enum")) > 0) {
        enum_candidates(ps, s);
        if (kind_of(s) != K_ANY)
            add(ps, kind_of(s) == K_STR ? json_integer(1) : json_string("hunt"), false, 0,
                "another type", NULL);
        return;
    }
    switch (kind_of(s)) {
    case K_INT:
        int_candidates(ps, s, cur, false);
        break;
    case K_NUM:
        num_candidates(ps, s, cur);
        break;
    case K_STR:
        str_candidates(ps, s, cur, false);
        break;
    case K_IOS:
        int_candidates(ps, s, cur, true);
        str_candidates(ps, s, cur, true);
        add(ps, json_string("50%"), false, 1, "string for int-or-string", NULL);
        add(ps, json_true(), false, 0, "boolean for int-or-string", NULL);
        add(ps, json_real(1.5), false, 0, "number for int-or-string", NULL);
        break;
    case K_BOOL:
        add(ps, json_true(), false, 1, "true", NULL);
        add(ps, json_false(), false, 1, "false", NULL);
        add(ps, json_string("true"), false, 0, "string for boolean", NULL);
        break;
    case K_OBJ:
        add(ps, json_object(), false, -1, "empty object", "empty object, missing required");
        add(ps, json_string("hunt"), false, 0, "string for object", NULL);
        break;
    case K_ARR:
        add(ps, json_array(), false, -1, "empty list", "empty list, below minItems");
        add(ps, json_string("hunt"), false, 0, "string for list", NULL);
        break;
    case K_ANY:
        if (flag(s, "x-kubernetes-preserve-unknown-fields")) {
            add(ps, json_string("hunt"), false, 1, "any value: a string", NULL);
            add(ps, json_integer(1), false, 1, "any value: an integer", NULL);
            add(ps, json_pack("{s:i}", "hunt", 1), false, 1, "any value: an object", NULL);
            add(ps, json_pack("[s]", "hunt"), false, 1, "any value: a list", NULL);
        }
        break;
    }
}

/* ---- instances ----------------------------------------------------------- */

static json_t *instance(const json_t *s, bool root, int depth);

/* A value for a new list item differing from every item of list (for
 * x-kubernetes-list-type set and map, whose items must be distinct). */
static json_t *distinct_item(const json_t *list_schema, const json_t *list, int depth)
{
    const json_t *items = json_object_get(list_schema, "items");
    json_t *inst = instance(items, false, depth + 1);
    props ps = {.n = 0};
    json_t *found = NULL;
    if (!inst)
        return NULL;
    add(&ps, inst, false, 1, "", NULL);
    if (json_is_object(inst)) {
        const char *k;
        json_t *ks;
        json_object_foreach(json_object_get(items, "properties"), k, ks)
        {
            kind kk = kind_of(ks);
            if (kk == K_OBJ || kk == K_ARR || kk == K_ANY || ps.n >= MAX_PROPS / 2)
                continue;
            props sub = {.n = 0};
            value_candidates(&sub, ks, json_object_get(inst, k));
            for (size_t i = 0; i < sub.n; i++) {
                if (sub.p[i].intent != 1 || !check(ks, sub.p[i].v))
                    continue;
                json_t *copy = json_deep_copy(inst);
                json_object_set(copy, k, sub.p[i].v);
                add(&ps, copy, false, 1, "", NULL);
            }
            props_free(&sub);
        }
    } else {
        value_candidates(&ps, items, NULL);
    }
    const json_t *keys = json_object_get(list_schema, "x-kubernetes-list-map-keys");
    for (size_t i = 0; i < ps.n && !found; i++) {
        if (ps.p[i].intent != 1 || !check(items, ps.p[i].v))
            continue;
        bool clash = false;
        size_t j;
        const json_t *el;
        json_array_foreach(list, j, el)
        {
            bool same = json_equal(el, ps.p[i].v);
            if (!same && json_array_size(keys) > 0) {
                same = true;
                size_t kk;
                const json_t *kn;
                json_array_foreach(keys, kk, kn)
                {
                    const json_t *a = json_object_get(el, json_string_value(kn));
                    const json_t *b = json_object_get(ps.p[i].v, json_string_value(kn));
                    if (!(a == b || (a && b && json_equal(a, b))))
                        same = false;
                }
            }
            if (same)
                clash = true;
        }
        if (!clash)
            found = json_incref(ps.p[i].v);
    }
    props_free(&ps);
    return found;
}

static json_t *str_instance(const json_t *s)
{
    long long minl = 0, maxl = -1;
    get_count(s, "minLength", &minl);
    if (!get_count(s, "maxLength", &maxl))
        maxl = -1;
    bool known;
    const char *sample = format_sample(json_string_value(json_object_get(s, "format")), &known);
    if (sample)
        return json_string(sample);
    const char *pattern = json_string_value(json_object_get(s, "pattern"));
    if (pattern) {
        size_t want[2] = {(size_t)minl, 4};
        json_t *strs = json_array(), *v, *found = NULL;
        size_t i;
        scn__gen_re_strings(pattern, want, 2, strs, 8);
        json_array_foreach(strs, i, v)
        {
            size_t len = scn__gen_utf8_len(json_string_value(v));
            if (!found && (long long)len >= minl && (maxl < 0 || (long long)len <= maxl) &&
                re_match(pattern, json_string_value(v)) == 1)
                found = json_incref(v);
        }
        json_decref(strs);
        if (found)
            return found;
    }
    long long n = 4;
    if (n < minl)
        n = minl;
    if (maxl >= 0 && n > maxl)
        n = maxl;
    return str_of_len((size_t)n);
}

static json_t *instance(const json_t *s, bool root, int depth)
{
    const json_t *def = json_object_get(s, "default");
    if (def)
        return json_deep_copy(def);
    const json_t *e = json_object_get(s, "enum");
    if (json_array_size(e) > 0)
        return json_deep_copy(json_array_get(e, 0));
    if (depth > SCN_GEN_MAX_DEPTH)
        return json_object();
    switch (kind_of(s)) {
    case K_OBJ: {
        json_t *o = json_object();
        const char *k;
        json_t *ps;
        json_object_foreach(json_object_get(s, "properties"), k, ps)
        {
            if (root && (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata")))
                continue;
            /* a custom resource has a spec, required or not */
            if (is_required(s, k) || json_object_get(ps, "default") ||
                (root && !strcmp(k, "spec"))) {
                json_t *v = instance(ps, false, depth + 1);
                if (v)
                    json_object_set_new(o, k, v);
            }
        }
        long long minp = 0;
        const json_t *addl = json_object_get(s, "additionalProperties");
        if (get_count(s, "minProperties", &minp) && json_is_object(addl))
            for (long long i = (long long)json_object_size(o); i < minp && i < 64; i++) {
                char key[32];
                snprintf(key, sizeof key, "k%lld", i + 1);
                json_t *v = instance(addl, false, depth + 1);
                if (v)
                    json_object_set_new(o, key, v);
            }
        if (flag(s, "x-kubernetes-embedded-resource")) {
            if (!json_object_get(o, "apiVersion"))
                json_object_set_new(o, "apiVersion", json_string("v1"));
            if (!json_object_get(o, "kind"))
                json_object_set_new(o, "kind", json_string("ConfigMap"));
        }
        return o;
    }
    case K_ARR: {
        json_t *a = json_array();
        long long mini = 0;
        get_count(s, "minItems", &mini);
        for (long long i = 0; i < mini && i < 64; i++) {
            json_t *v = distinct_item(s, a, depth);
            if (!v)
                break;
            json_array_append_new(a, v);
        }
        return a;
    }
    case K_STR:
        return str_instance(s);
    case K_INT:
    case K_IOS: {
        ibounds b = int_bounds(s);
        long long v = b.has_lo ? b.lo : (b.has_hi && b.hi < 0 ? b.hi : 0);
        if (b.has_lo)
            v = round_down(v + b.m - 1, b.m);
        else
            v = round_down(v, b.m);
        return json_integer(v);
    }
    case K_NUM: {
        double lo = 0, hi = 0, m = 0;
        bool has_lo = get_num(s, "minimum", &lo), has_hi = get_num(s, "maximum", &hi);
        double v = has_lo ? lo : (has_hi && hi < 0 ? hi : 0);
        if (has_lo && flag(s, "exclusiveMinimum"))
            v = has_hi ? (lo + hi) / 2 : lo + 1;
        if (get_num(s, "multipleOf", &m) && m > 0)
            v = ceil(v / m) * m;
        return number(v);
    }
    case K_BOOL:
        return json_false();
    case K_ANY:
        break;
    }
    return json_object();
}

__attribute__((format(printf, 3, 4))) static void set_err(scn_error *err, int code, const char *fmt,
                                                          ...)
{
    va_list ap;
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

int scn_gen_instance(const json_t *schema, json_t **out, scn_error *err)
{
    char why[256];
    if (!json_is_object(schema)) {
        set_err(err, SCN_ERR_INPUT, "%s", "the schema is not an object");
        return SCN_ERR_INPUT;
    }
    json_t *o = instance(schema, true, 0);
    if (!o) {
        set_err(err, SCN_ERR_NOMEM, "%s", "out of memory");
        return SCN_ERR_NOMEM;
    }
    scn__gen_store(schema, o);
    if (!scn_gen_check(schema, o, why, sizeof why)) {
        json_decref(o);
        set_err(err, SCN_ERR_INPUT, "no valid instance of the schema found: %s", why);
        return SCN_ERR_INPUT;
    }
    *out = o;
    return 0;
}

/* ---- the walk ------------------------------------------------------------ */

typedef struct {
    const json_t *schema; /* the root schema */
    json_t *stored;       /* the base as stored */
    json_t *work;         /* a copy of it, with virtual parts while they are walked */
    bool no_invalid;
    char ptr[2048], field[2048];
    size_t anchor; /* length of ptr at the first virtual node, or SIZE_MAX */
    scn_gen_change *out;
    size_t n, cap;
    size_t field_count; /* changes emitted for the current field */
    bool nomem;
    /* lazy: candidates are kept unclassified, with what they were made for
     * (pending[i]), for a caller that classifies only those it picks */
    bool lazy;
    struct pending {
        int intent;
        char *why_bad;
    } * pending;
} gen;

static size_t push_key(gen *g, const char *k, size_t *fmark)
{
    size_t mark = strlen(g->ptr);
    size_t o = mark;
    *fmark = strlen(g->field);
    if (o + 2 < sizeof g->ptr)
        g->ptr[o++] = '/';
    for (const char *c = k; *c && o + 3 < sizeof g->ptr; c++) {
        if (*c == '~' || *c == '/') {
            g->ptr[o++] = '~';
            g->ptr[o++] = *c == '~' ? '0' : '1';
        } else {
            g->ptr[o++] = *c;
        }
    }
    g->ptr[o] = '\0';
    snprintf(g->field + *fmark, sizeof g->field - *fmark, "%s%s", *fmark ? "." : "", k);
    return mark;
}

static size_t push_index(gen *g, size_t i, size_t *fmark)
{
    size_t mark = strlen(g->ptr);
    *fmark = strlen(g->field);
    snprintf(g->ptr + mark, sizeof g->ptr - mark, "/%zu", i);
    snprintf(g->field + *fmark, sizeof g->field - *fmark, "[%zu]", i);
    return mark;
}

static void pop(gen *g, size_t mark, size_t fmark)
{
    g->ptr[mark] = '\0';
    g->field[fmark] = '\0';
}

static bool seen(const gen *g, const char *path, const json_t *v)
{
    for (size_t i = 0; i < g->n; i++)
        if (!strcmp(g->out[i].path, path) &&
            ((!v && !g->out[i].value) || (v && g->out[i].value && json_equal(v, g->out[i].value))))
            return true;
    return false;
}

/* Is change c (meant to be valid: intent 1, invalid: 0, either: -1) kept,
 * and is it valid? Kept when its class is what it was made for, it is not
 * an invalid one when only valid ones are wanted, and, valid, it changes
 * the stored object. */
static bool classify(gen *g, const scn_gen_change *c, int intent, bool *valid)
{
    json_t *after = NULL;
    bool keep = false;
    if (scn_gen_apply(g->schema, g->stored, c, &after, valid) != 0)
        return false;
    if ((intent == 1 && !*valid) || (intent == 0 && *valid) || (!*valid && g->no_invalid))
        keep = false;
    else
        keep = !*valid || !json_equal(after, g->stored);
    json_decref(after);
    return keep;
}

/* Put old (borrowed) back at ptr in work, itself rather than a copy. */
static void put_back(json_t *work, const char *ptr, json_t *old)
{
    char parent[2048], tok[512];
    const char *slash = strrchr(ptr, '/');
    size_t plen = slash ? (size_t)(slash - ptr) : 0, t = 0;
    if (!slash || plen >= sizeof parent)
        return;
    memcpy(parent, ptr, plen);
    parent[plen] = '\0';
    for (const char *c = slash + 1; *c && t + 1 < sizeof tok; c++) {
        char ch = *c;
        if (ch == '~' && (c[1] == '0' || c[1] == '1'))
            ch = *++c == '0' ? '~' : '/';
        tok[t++] = ch;
    }
    tok[t] = '\0';
    json_t *p = scn__gen_pointer_get(work, parent);
    if (json_is_object(p))
        json_object_set(p, tok, old);
    else if (json_is_array(p))
        json_array_set(p, strtoul(tok, NULL, 10), old);
}

/*
 * Propose setting the current field (g->ptr; in work, its parent holds it)
 * to v (NULL: remove). Classified on the stored base; kept when the class
 * matches the intent.
 */
static void emit(gen *g, const json_t *v, int intent, const char *why, const char *why_bad)
{
    if (g->nomem || g->n >= SCN_GEN_MAX_CHANGES || g->field_count >= SCN_GEN_MAX_PER_FIELD)
        return;
    if (intent == 0 && g->no_invalid)
        return;
    json_t *value = NULL, *old = NULL;
    char path[2048];
    bool valid = false;
    scn_gen_change ch = {0};
    if (g->anchor == SIZE_MAX) {
        snprintf(path, sizeof path, "%s", g->ptr);
        value = v ? json_deep_copy(v) : NULL;
    } else {
        /* set the field in the virtual parent, take the parent whole, put
         * the very same value back (the walk holds pointers into it) */
        old = scn__gen_pointer_get(g->work, g->ptr);
        json_incref(old);
        if (!v || scn__gen_pointer_set(g->work, g->ptr, v) != 0)
            goto out; /* removals are not made below a virtual parent */
        memcpy(path, g->ptr, g->anchor);
        path[g->anchor] = '\0';
        value = json_deep_copy(scn__gen_pointer_get(g->work, path));
        if (old)
            put_back(g->work, g->ptr, old);
        else
            scn__gen_pointer_set(g->work, g->ptr, NULL);
        if (!value)
            goto out;
    }
    if (seen(g, path, value))
        goto out;
    ch.path = path;
    ch.value = value;
    if (!g->lazy && !classify(g, &ch, intent, &valid))
        goto out;
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 64;
        scn_gen_change *p = realloc(g->out, cap * sizeof *p);
        struct pending *q = p ? realloc(g->pending, cap * sizeof *q) : NULL;
        if (p)
            g->out = p;
        if (!q) {
            g->nomem = true;
            goto out;
        }
        g->pending = q;
        g->cap = cap;
    }
    scn_gen_change *c = &g->out[g->n];
    if (g->lazy)
        valid = intent != 0;
    c->path = strdup(path);
    c->field = strdup(g->field[0] ? g->field : ".");
    c->why = strdup(valid ? why : why_bad ? why_bad : why);
    g->pending[g->n].intent = intent;
    g->pending[g->n].why_bad = strdup(why_bad ? why_bad : why);
    c->valid = valid;
    c->value = value;
    value = NULL;
    if (!c->path || !c->field || !c->why || !g->pending[g->n].why_bad) {
        free(c->path);
        free(c->field);
        free(c->why);
        free(g->pending[g->n].why_bad);
        json_decref(c->value);
        g->nomem = true;
        goto out;
    }
    g->n++;
    g->field_count++;
out:
    json_decref(value);
    json_decref(old);
}

static void walk(gen *g, const json_t *s, const json_t *parent_schema, const char *key,
                 bool in_list, int depth);

/* A minimal value for the absent field at g->ptr: for a new list item, one
 * unlike the items there (list-type set and map must stay unique). */
static json_t *new_value(gen *g, const json_t *s, const json_t *parent_schema, bool in_list,
                         int depth)
{
    if (in_list) {
        char parent[sizeof g->ptr];
        snprintf(parent, sizeof parent, "%s", g->ptr);
        char *slash = strrchr(parent, '/');
        if (slash)
            *slash = '\0';
        json_t *v = distinct_item(parent_schema, scn__gen_pointer_get(g->work, parent), depth);
        if (v)
            return v;
    }
    return instance(s, false, depth);
}

/* Walk the children of the object or list at g->ptr (value v in work). */
static void walk_children(gen *g, const json_t *s, json_t *v, int depth)
{
    size_t mark, fmark;
    if (json_is_object(v)) {
        const char *k;
        json_t *ps;
        bool root = depth == 0;
        json_object_foreach(json_object_get(s, "properties"), k, ps)
        {
            if (root && (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata") ||
                         !strcmp(k, "status")))
                continue;
            if (flag(s, "x-kubernetes-embedded-resource") &&
                (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata")))
                continue;
            mark = push_key(g, k, &fmark);
            walk(g, ps, s, k, false, depth + 1);
            pop(g, mark, fmark);
        }
        const json_t *addl = json_object_get(s, "additionalProperties");
        if (json_is_object(addl)) {
            /* a few entries of the map, then a new one */
            size_t walked = 0;
            json_t *keys = json_array();
            json_t *child;
            json_object_foreach(v, k, child)
            {
                if (!json_object_get(json_object_get(s, "properties"), k) &&
                    walked++ < MAX_ITEMS_WALKED)
                    json_array_append_new(keys, json_string(k));
            }
            size_t i;
            json_t *kv;
            json_array_foreach(keys, i, kv)
            {
                mark = push_key(g, json_string_value(kv), &fmark);
                walk(g, addl, s, json_string_value(kv), false, depth + 1);
                pop(g, mark, fmark);
            }
            json_decref(keys);
            char fresh[32];
            for (int n = 1; n < 1000; n++) {
                snprintf(fresh, sizeof fresh, "k%d", n);
                if (!json_object_get(v, fresh))
                    break;
            }
            mark = push_key(g, fresh, &fmark);
            walk(g, addl, s, fresh, false, depth + 1);
            pop(g, mark, fmark);
        }
        if ((flag(s, "x-kubernetes-preserve-unknown-fields") || json_is_true(addl)) &&
            !json_object_get(v, "huntExtra") &&
            !json_object_get(json_object_get(s, "properties"), "huntExtra")) {
            mark = push_key(g, "huntExtra", &fmark);
            g->field_count = 0;
            json_t *x = json_string("hunt");
            emit(g, x, 1, "unknown field kept", NULL);
            json_decref(x);
            pop(g, mark, fmark);
        }
    } else if (json_is_array(v)) {
        const json_t *items = json_object_get(s, "items");
        size_t n = json_array_size(v);
        size_t idx[MAX_ITEMS_WALKED + 1], ni = 0;
        if (n > 0)
            idx[ni++] = 0;
        if (n > 1)
            idx[ni++] = n - 1;
        idx[ni++] = n; /* a new item at the end */
        for (size_t i = 0; i < ni; i++) {
            mark = push_index(g, idx[i], &fmark);
            walk(g, items, s, NULL, true, depth + 1);
            pop(g, mark, fmark);
        }
    }
}

/* Whole-list changes: exactly minItems/maxItems items, one fewer/more. */
static void list_candidates(gen *g, const json_t *s, const json_t *cur, int depth)
{
    long long mini = 0, maxi = -1;
    get_count(s, "minItems", &mini);
    if (!get_count(s, "maxItems", &maxi) || maxi > MAX_LIST_BOUND)
        maxi = -1;
    typedef struct {
        long long size;
        int intent;
        const char *why;
    } sized;
    sized want[4];
    size_t nw = 0;
    if (mini > 0) {
        want[nw++] = (sized){mini, 1, "minItems items"};
        want[nw++] = (sized){mini - 1, 0, "below minItems"};
    }
    if (maxi >= 0) {
        want[nw++] = (sized){maxi, 1, "maxItems items"};
        want[nw++] = (sized){maxi + 1, 0, "above maxItems"};
    }
    const char *lt = json_string_value(json_object_get(s, "x-kubernetes-list-type"));
    if (lt && (!strcmp(lt, "set") || !strcmp(lt, "map")) && json_array_size(cur) > 0) {
        json_t *list = json_deep_copy(cur);
        json_array_append_new(list, json_deep_copy(json_array_get(cur, 0)));
        emit(g, list, 0, !strcmp(lt, "set") ? "duplicate item" : "duplicate key", NULL);
        json_decref(list);
    }
    for (size_t i = 0; i < nw; i++) {
        json_t *list = json_array();
        for (size_t j = 0; j < json_array_size(cur) && (long long)j < want[i].size; j++)
            json_array_append(list, json_array_get(cur, j));
        while ((long long)json_array_size(list) < want[i].size) {
            json_t *it = distinct_item(s, list, depth);
            if (!it)
                break;
            json_array_append_new(list, it);
        }
        if ((long long)json_array_size(list) == want[i].size)
            emit(g, list, want[i].intent, want[i].why, NULL);
        json_decref(list);
    }
}

/*
 * The field at g->ptr, of schema s, in an object of schema parent_schema
 * under key (or a list item when in_list).
 */
static void walk(gen *g, const json_t *s, const json_t *parent_schema, const char *key,
                 bool in_list, int depth)
{
    if (!json_is_object(s) || depth > SCN_GEN_MAX_DEPTH || g->nomem || g->n >= SCN_GEN_MAX_CHANGES)
        return;
    json_t *cur = scn__gen_pointer_get(g->work, g->ptr);
    bool required = key && is_required(parent_schema, key);
    props ps = {.n = 0};
    g->field_count = 0;

    value_candidates(&ps, s, cur);
    if (!cur) {
        json_t *inst = new_value(g, s, parent_schema, in_list, depth);
        if (inst)
            add(&ps, inst, false, 1, in_list ? "add item" : "add field", NULL);
    }
    for (size_t i = 0; i < ps.n; i++)
        emit(g, ps.p[i].v, ps.p[i].intent, ps.p[i].why, ps.p[i].why_bad);
    props_free(&ps);
    if (kind_of(s) == K_ARR)
        list_candidates(g, s, cur, depth);

    if (cur && g->anchor == SIZE_MAX) {
        json_t *null = json_null();
        if (in_list) {
            emit(g, NULL, -1, "remove item", "remove item, below minItems");
            emit(g, null, -1,
                 flag(s, "nullable") ? "null item (nullable)" : "null item (defaulted)",
                 "null item");
        } else {
            bool defaulted = json_object_get(s, "default") != NULL;
            emit(g, NULL, -1,
                 required ? (defaulted ? "remove required (defaulted)" : "remove required")
                          : "remove optional",
                 required ? "remove required" : "remove optional, the parent needs it");
            emit(g, null, -1,
                 flag(s, "nullable") ? "null (nullable)"
                 : defaulted         ? "null (defaulted)"
                                     : "null (pruned)",
                 required ? "null for required" : "null, the parent needs it");
        }
        json_decref(null);
    }

    kind k = kind_of(s);
    if (k != K_OBJ && k != K_ARR)
        return;
    if (cur) {
        walk_children(g, s, cur, depth);
        return;
    }
    /* absent: walk its children inside a minimal instance of it */
    json_t *inst = new_value(g, s, parent_schema, in_list, depth);
    if (!inst || scn__gen_pointer_set(g->work, g->ptr, inst) != 0) {
        json_decref(inst);
        return;
    }
    size_t saved = g->anchor;
    if (g->anchor == SIZE_MAX)
        g->anchor = strlen(g->ptr);
    walk_children(g, s, scn__gen_pointer_get(g->work, g->ptr), depth);
    g->anchor = saved;
    scn__gen_pointer_set(g->work, g->ptr, NULL);
    json_decref(inst);
}

void scn_gen_changes_free(scn_gen_change *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].path);
        free(c[i].field);
        free(c[i].why);
        json_decref(c[i].value);
    }
    free(c);
}

static void gen_deinit(gen *g)
{
    for (size_t i = 0; g->pending && i < g->n; i++)
        free(g->pending[i].why_bad);
    free(g->pending);
    scn_gen_changes_free(g->out, g->n);
    json_decref(g->stored);
    json_decref(g->work);
    memset(g, 0, sizeof *g);
}

/* Walk base into g (gen_deinit it whatever the result). */
static int generate(gen *g, const json_t *schema, const json_t *base, const scn_gen_options *o,
                    bool lazy, scn_error *err)
{
    char why[256];
    memset(g, 0, sizeof *g);
    g->schema = schema;
    g->anchor = SIZE_MAX;
    g->no_invalid = o && o->no_invalid;
    g->lazy = lazy;
    if (!json_is_object(schema) || !json_is_object(base)) {
        set_err(err, SCN_ERR_INPUT, "%s", "the schema and the object must be objects");
        return SCN_ERR_INPUT;
    }
    g->stored = json_deep_copy(base);
    g->work = json_deep_copy(base);
    if (!g->stored || !g->work) {
        set_err(err, SCN_ERR_NOMEM, "%s", "out of memory");
        return SCN_ERR_NOMEM;
    }
    scn__gen_store(schema, g->stored);
    scn__gen_store(schema, g->work);
    if (!scn_gen_check(schema, g->stored, why, sizeof why)) {
        set_err(err, SCN_ERR_INPUT, "the object is not valid for its schema: %s", why);
        return SCN_ERR_INPUT;
    }
    walk_children(g, schema, g->work, 0);
    if (g->nomem) {
        set_err(err, SCN_ERR_NOMEM, "%s", "out of memory");
        return SCN_ERR_NOMEM;
    }
    return 0;
}

int scn_gen_changes(const json_t *schema, const json_t *base, const scn_gen_options *o,
                    scn_gen_change **out, size_t *n, scn_error *err)
{
    gen g;
    int rc = generate(&g, schema, base, o, false, err);
    if (rc == 0) {
        *out = g.out;
        *n = g.n;
        for (size_t i = 0; i < g.n; i++)
            free(g.pending[i].why_bad);
        g.out = NULL;
        g.n = 0;
    }
    gen_deinit(&g);
    return rc;
}

/* ---- sequences ----------------------------------------------------------- */

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int copy_change(scn_gen_change *dst, const scn_gen_change *src)
{
    dst->path = strdup(src->path);
    dst->field = strdup(src->field);
    dst->why = strdup(src->why);
    dst->value = src->value ? json_deep_copy(src->value) : NULL;
    dst->valid = src->valid;
    if (!dst->path || !dst->field || !dst->why || (src->value && !dst->value)) {
        free(dst->path);
        free(dst->field);
        free(dst->why);
        json_decref(dst->value);
        memset(dst, 0, sizeof *dst);
        return SCN_ERR_NOMEM;
    }
    return 0;
}

void scn_gen_seqs_free(scn_gen_seq *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        scn_gen_changes_free(s[i].changes, s[i].n);
    free(s);
}

/*
 * Continue sequence seq (its first change made, the object now at cur) to
 * len changes. Each next change is drawn from the candidates of cur, left
 * unclassified (lazy), and only the drawn ones are classified until one is
 * kept: a whole classified walk per step would cost a full check of the
 * object per candidate.
 */
static int extend(const json_t *schema, json_t *cur, scn_gen_seq *seq, unsigned len,
                  const scn_gen_options *o, uint64_t *rng, scn_error *err)
{
    int rc = 0;
    while (seq->n < len) {
        gen g;
        const scn_gen_change *pick = NULL;
        bool valid = false;
        if ((rc = generate(&g, schema, cur, o, true, err)) != 0) {
            gen_deinit(&g);
            return rc;
        }
        for (unsigned tries = 0; tries < 64 && g.n > 0 && !pick; tries++) {
            size_t i = splitmix(rng) % g.n;
            if (classify(&g, &g.out[i], g.pending[i].intent, &valid))
                pick = &g.out[i];
        }
        if (!pick) {
            gen_deinit(&g);
            break;
        }
        scn_gen_change *c = &seq->changes[seq->n];
        rc = copy_change(c, pick);
        if (rc == 0 && !valid) {
            size_t i = (size_t)(pick - g.out);
            free(c->why);
            c->why = strdup(g.pending[i].why_bad);
            c->valid = false;
            if (!c->why)
                rc = SCN_ERR_NOMEM;
        }
        if (rc == 0) {
            c->valid = valid;
            seq->n++;
            json_t *after = NULL;
            bool ok;
            if (valid && scn_gen_apply(schema, cur, pick, &after, &ok) == 0) {
                json_object_clear(cur);
                json_object_update(cur, after);
            }
            json_decref(after);
        }
        gen_deinit(&g);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int scn_gen_sequences(const json_t *schema, const json_t *base, const scn_gen_options *o,
                      scn_gen_seq **out, size_t *n, scn_error *err)
{
    scn_gen_options def = {0};
    scn_gen_change *first = NULL;
    size_t nfirst = 0, nseq = 0, i;
    scn_gen_seq *seqs = NULL;
    json_t *stored = NULL;
    if (!o)
        o = &def;
    unsigned len = o->seq_len ? o->seq_len : 1;
    uint64_t rng = o->seed ^ 0x6875e7a9c0ffee11ULL;
    int rc = scn_gen_changes(schema, base, o, &first, &nfirst, err);
    if (rc != 0)
        return rc;
    /* which first changes: all, or a seeded sample in their order */
    size_t want = o->max_seqs && o->max_seqs < nfirst ? o->max_seqs : nfirst;
    if (want > SCN_GEN_MAX_SEQS)
        want = SCN_GEN_MAX_SEQS;
    bool *take = calloc(nfirst ? nfirst : 1, sizeof *take);
    seqs = calloc(want ? want : 1, sizeof *seqs);
    stored = json_deep_copy(base);
    if (!take || !seqs || !stored) {
        rc = SCN_ERR_NOMEM;
        goto out;
    }
    scn__gen_store(schema, stored);
    for (i = 0; i < want; i++) {
        size_t j = want == nfirst ? i : splitmix(&rng) % nfirst;
        while (take[j])
            j = (j + 1) % nfirst;
        take[j] = true;
    }
    for (i = 0; i < nfirst && nseq < want; i++) {
        if (!take[i])
            continue;
        scn_gen_seq *s = &seqs[nseq++];
        s->changes = calloc(len, sizeof *s->changes);
        if (!s->changes || copy_change(&s->changes[0], &first[i]) != 0) {
            rc = SCN_ERR_NOMEM;
            goto out;
        }
        s->n = 1;
        if (len > 1) {
            json_t *cur = NULL;
            bool valid;
            if (!first[i].valid || scn_gen_apply(schema, stored, &first[i], &cur, &valid) != 0)
                cur = json_deep_copy(stored);
            if (!cur) {
                rc = SCN_ERR_NOMEM;
                goto out;
            }
            rc = extend(schema, cur, s, len, o, &rng, err);
            json_decref(cur);
            if (rc != 0)
                goto out;
        }
    }
    *out = seqs;
    *n = nseq;
    seqs = NULL;
out:
    if (rc == SCN_ERR_NOMEM)
        set_err(err, rc, "%s", "out of memory");
    scn_gen_seqs_free(seqs, nseq);
    scn_gen_changes_free(first, nfirst);
    free(take);
    json_decref(stored);
    return rc;
}
