/*
 * hunt_regex.c - strings that match a CRD pattern, made from the pattern's
 * syntax: parse the supported subset of RE2 (literals, bracket
 * expressions, \d \w \s and their negations, ., groups, alternation,
 * ? * + {n} {n,} {n,m}, anchors) into a small tree, then write one string
 * per way of spending "extra" repetitions and choosing branches. Patterns
 * outside the subset (look-around, back-references, \p{..}, flags, non-ASCII)
 * give nothing; the caller checks every string with scn__gen_re_match.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hunt_gen_int.h"

#define MAX_NODES 512
#define MAX_REP 4096

enum { N_SET, N_CAT, N_ALT, N_REP, N_EMPTY };

typedef struct {
    int kind;
    unsigned char set[16]; /* N_SET: ASCII bitmap */
    int first, next;       /* children (N_CAT, N_ALT, N_REP), siblings; -1 = none */
    int min, max;          /* N_REP; max -1 = unbounded */
} rnode;

typedef struct {
    const char *p;
    rnode n[MAX_NODES];
    int used;
    bool bad;
    int depth;
} rparser;

static int new_node(rparser *r, int kind)
{
    if (r->used >= MAX_NODES) {
        r->bad = true;
        return -1;
    }
    rnode *x = &r->n[r->used];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->first = x->next = -1;
    return r->used++;
}

static void set_add(rnode *x, int lo, int hi)
{
    for (int c = lo; c <= hi && c < 128; c++)
        if (c >= 0)
            x->set[c / 8] |= (unsigned char)(1u << (c % 8));
}

static bool set_has(const rnode *x, int c)
{
    return c >= 0 && c < 128 && (x->set[c / 8] >> (c % 8)) & 1;
}

/* \d \w \s into a set (negated ones complement within printable ASCII). */
static bool add_shorthand(rnode *x, char ch)
{
    rnode t;
    memset(&t, 0, sizeof t);
    switch (ch == 'D' || ch == 'W' || ch == 'S' ? ch + 32 : ch) {
    case 'd':
        set_add(&t, '0', '9');
        break;
    case 'w':
        set_add(&t, '0', '9');
        set_add(&t, 'a', 'z');
        set_add(&t, 'A', 'Z');
        set_add(&t, '_', '_');
        break;
    case 's':
        set_add(&t, ' ', ' ');
        set_add(&t, '\t', '\r');
        break;
    default:
        return false;
    }
    bool neg = ch == 'D' || ch == 'W' || ch == 'S';
    for (int c = 0; c < 128; c++)
        if (neg ? (c >= 0x20 && c < 0x7f && !set_has(&t, c)) : set_has(&t, c))
            set_add(x, c, c);
    return true;
}

/* The character an escape stands for (\. \- \n ...), or -1 if unsupported. */
static int escaped(char ch)
{
    if (ch == 'n')
        return '\n';
    if (ch == 't')
        return '\t';
    if (ch && strchr(".\\/+*?()[]{}|^$-_:,=&#!<>@%;'\"~` ", ch))
        return ch;
    return -1;
}

static bool posix_class(rnode *x, const char *name, size_t n)
{
    static const struct {
        const char *name;
        const char *ranges;
    } classes[] = {
        {"alpha", "azAZ"}, {"digit", "09"},     {"alnum", "azAZ09"},  {"upper", "AZ"},
        {"lower", "az"},   {"space", "  \t\r"}, {"xdigit", "09afAF"},
    };
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        if (strlen(classes[i].name) == n && !strncmp(classes[i].name, name, n)) {
            for (const char *r = classes[i].ranges; r[0] && r[1]; r += 2)
                set_add(x, r[0], r[1]);
            return true;
        }
    }
    return false;
}

static int parse_class(rparser *r)
{
    int id = new_node(r, N_SET);
    if (id < 0)
        return -1;
    rnode *x = &r->n[id];
    bool neg = *r->p == '^';
    rnode tmp;
    memset(&tmp, 0, sizeof tmp);
    if (neg)
        r->p++;
    bool first = true;
    while (*r->p && (*r->p != ']' || first)) {
        first = false;
        int lo;
        if (r->p[0] == '[' && r->p[1] == ':') {
            const char *end = strstr(r->p, ":]");
            if (!end || !posix_class(&tmp, r->p + 2, (size_t)(end - r->p - 2))) {
                r->bad = true;
                return -1;
            }
            r->p = end + 2;
            continue;
        }
        if (r->p[0] == '\\') {
            if (add_shorthand(&tmp, r->p[1])) {
                r->p += 2;
                continue;
            }
            lo = escaped(r->p[1]);
            if (lo < 0) {
                r->bad = true;
                return -1;
            }
            r->p += 2;
        } else {
            lo = (unsigned char)*r->p++;
        }
        int hi = lo;
        if (r->p[0] == '-' && r->p[1] && r->p[1] != ']') {
            r->p++;
            if (r->p[0] == '\\') {
                hi = escaped(r->p[1]);
                r->p += 2;
            } else {
                hi = (unsigned char)*r->p++;
            }
        }
        if (lo >= 128 || hi >= 128 || hi < 0 || hi < lo) {
            r->bad = true;
            return -1;
        }
        set_add(&tmp, lo, hi);
    }
    if (*r->p != ']') {
        r->bad = true;
        return -1;
    }
    r->p++;
    for (int c = 0; c < 128; c++)
        if (neg ? (c >= 0x20 && c < 0x7f && !set_has(&tmp, c)) : set_has(&tmp, c))
            set_add(x, c, c);
    return id;
}

static int parse_alt(rparser *r);

static int parse_atom(rparser *r)
{
    char ch = *r->p;
    int id;
    if (ch == '(') {
        r->p++;
        if (r->p[0] == '?') {
            if (r->p[1] != ':') {
                r->bad = true;
                return -1;
            }
            r->p += 2;
        }
        if (++r->depth > 64) {
            r->bad = true;
            return -1;
        }
        id = parse_alt(r);
        r->depth--;
        if (*r->p != ')') {
            r->bad = true;
            return -1;
        }
        r->p++;
        return id;
    }
    if (ch == '[') {
        r->p++;
        return parse_class(r);
    }
    if (ch == '^' || ch == '$') {
        r->p++;
        return new_node(r, N_EMPTY);
    }
    id = new_node(r, N_SET);
    if (id < 0)
        return -1;
    if (ch == '.') {
        set_add(&r->n[id], 0x20, 0x7e);
        r->p++;
    } else if (ch == '\\') {
        if (!add_shorthand(&r->n[id], r->p[1])) {
            int c = escaped(r->p[1]);
            if (c < 0) {
                r->bad = true;
                return -1;
            }
            set_add(&r->n[id], c, c);
        }
        r->p += 2;
    } else if ((unsigned char)ch >= 128 || strchr("*+?{", ch)) {
        r->bad = true;
        return -1;
    } else {
        set_add(&r->n[id], (unsigned char)ch, (unsigned char)ch);
        r->p++;
    }
    return id;
}

static int parse_number(rparser *r)
{
    if (*r->p < '0' || *r->p > '9')
        return -1;
    long v = 0;
    while (*r->p >= '0' && *r->p <= '9') {
        v = v * 10 + (*r->p++ - '0');
        if (v > 100000)
            return -1;
    }
    return (int)v;
}

static int parse_quant(rparser *r, int atom)
{
    int min, max;
    char ch = *r->p;
    if (ch == '*' || ch == '+' || ch == '?') {
        r->p++;
        min = ch == '+';
        max = ch == '?' ? 1 : -1;
    } else if (ch == '{') {
        const char *save = r->p++;
        min = parse_number(r);
        max = min;
        if (*r->p == ',') {
            r->p++;
            max = *r->p == '}' ? -1 : parse_number(r);
        }
        if (min < 0 || *r->p != '}' || (max >= 0 && max < min) || (max < 0 && *(r->p - 1) != ',')) {
            /* RE2 reads a malformed repetition as literal text; we give up */
            r->p = save;
            r->bad = true;
            return -1;
        }
        r->p++;
    } else {
        return atom;
    }
    if (*r->p == '?')
        r->p++; /* lazy: the same strings */
    int id = new_node(r, N_REP);
    if (id < 0)
        return -1;
    r->n[id].first = atom;
    r->n[id].min = min;
    r->n[id].max = max;
    return id;
}

static int parse_cat(rparser *r)
{
    int id = new_node(r, N_CAT), last = -1;
    while (id >= 0 && !r->bad && *r->p && *r->p != '|' && *r->p != ')') {
        int a = parse_atom(r);
        if (a < 0 || r->bad)
            return -1;
        a = parse_quant(r, a);
        if (a < 0)
            return -1;
        if (last < 0)
            r->n[id].first = a;
        else
            r->n[last].next = a;
        last = a;
    }
    return r->bad ? -1 : id;
}

static int parse_alt(rparser *r)
{
    int id = new_node(r, N_ALT), last = -1;
    for (;;) {
        int c = parse_cat(r);
        if (c < 0 || id < 0)
            return -1;
        if (last < 0)
            r->n[id].first = c;
        else
            r->n[last].next = c;
        last = c;
        if (*r->p != '|')
            break;
        r->p++;
    }
    return id;
}

/* ---- writing strings ----------------------------------------------------- */

typedef struct {
    char buf[SCN__GEN_MAX_STRLEN + 1];
    size_t len;
    size_t extra; /* repetitions still to add beyond the minimum */
    int variant;  /* 0: first branch, preferred character; 1: last branch, next character */
    bool full;
} rout;

static const char PREFERRED[] = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-_.";

static void put_char(rout *o, const rnode *x)
{
    int pick = -1, seen = 0;
    for (const char *c = PREFERRED; *c && pick < 0; c++)
        if (set_has(x, *c) && seen++ == (o->variant ? 1 : 0))
            pick = *c;
    for (int c = 0x20; c < 0x7f && pick < 0; c++)
        if (set_has(x, c))
            pick = c;
    for (const char *c = PREFERRED; *c && pick < 0; c++)
        if (set_has(x, *c))
            pick = *c;
    for (int c = 0; c < 128 && pick < 0; c++)
        if (set_has(x, c))
            pick = c;
    if (pick < 0 || o->len >= SCN__GEN_MAX_STRLEN) {
        o->full = true; /* an empty set matches nothing */
        return;
    }
    o->buf[o->len++] = (char)pick;
}

static void write_node(const rparser *r, int id, rout *o, int depth)
{
    if (id < 0 || o->full || depth > 200)
        return;
    const rnode *x = &r->n[id];
    int c, pick;
    switch (x->kind) {
    case N_SET:
        put_char(o, x);
        break;
    case N_CAT:
        for (c = x->first; c >= 0; c = r->n[c].next)
            write_node(r, c, o, depth + 1);
        break;
    case N_ALT:
        pick = x->first;
        if (o->variant)
            for (c = x->first; c >= 0; c = r->n[c].next)
                pick = c;
        write_node(r, pick, o, depth + 1);
        break;
    case N_REP: {
        size_t count = (size_t)x->min;
        if (o->extra > 0 && (x->max < 0 || x->max > x->min)) {
            size_t room = x->max < 0 ? o->extra : (size_t)(x->max - x->min);
            size_t add = o->extra < room ? o->extra : room;
            count += add;
            o->extra -= add;
        }
        for (size_t i = 0; i < count && i < MAX_REP && !o->full; i++)
            write_node(r, x->first, o, depth + 1);
        break;
    }
    default:
        break;
    }
}

static void add_unique(json_t *out, const char *s, size_t max)
{
    size_t i;
    json_t *v;
    if (json_array_size(out) >= max)
        return;
    json_array_foreach(out, i, v)
    {
        if (!strcmp(json_string_value(v), s))
            return;
    }
    json_array_append_new(out, json_string(s));
}

void scn__gen_re_strings(const char *pattern, const size_t *want, size_t n_want, json_t *out,
                         size_t max)
{
    rparser *r = calloc(1, sizeof *r);
    rout *o = malloc(sizeof *o);
    if (!r || !o || !json_is_array(out))
        goto out;
    r->p = pattern;
    int root = parse_alt(r);
    if (root < 0 || r->bad || *r->p)
        goto out;
    for (int variant = 0; variant < 2; variant++) {
        size_t base_len = 0;
        for (size_t k = 0; k < n_want + 2; k++) {
            size_t extra = k == 0 ? 0 : k == 1 ? 1 : 0;
            if (k >= 2)
                extra = want[k - 2] > base_len ? want[k - 2] - base_len : 0;
            if (k >= 2 && extra == 0)
                continue;
            memset(o, 0, sizeof *o);
            o->variant = variant;
            o->extra = extra;
            write_node(r, root, o, 0);
            if (o->full)
                continue;
            o->buf[o->len] = '\0';
            if (k == 0)
                base_len = o->len;
            if (memchr(o->buf, '\0', o->len) == NULL && strlen(o->buf) == o->len)
                add_unique(out, o->buf, max);
        }
    }
out:
    free(r);
    free(o);
}
