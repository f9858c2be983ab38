/*
 * jsonpeek.c - string members of a JSON text without a tree (jsonpeek.h).
 *
 * A recursive descent that checks the grammar as strictly as jansson does
 * for what it accepts, and gives up (FAKEAPI__PEEK_PARSE) on everything
 * whose meaning would need more care than a trace is worth: so whenever it
 * answers, jansson would have parsed the text and found the same members.
 */
#include "jsonpeek.h"

#include <string.h>

#define MAX_NEST 256
#define MAX_INT_DIGITS 18 /* fits an int64: jansson refuses bigger integers */
#define MAX_REAL_CHARS 17

typedef struct scan {
    const char *p, *end;
    fakeapi__peek *f;
    size_t n;
    bool bail;
} scan;

static void ws(scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* A string at s->p (the opening quote): its raw bytes (start, len); esc:
 * whether it has escapes. */
static void string(scan *s, const char **start, size_t *len, bool *esc)
{
    s->p++;
    const char *b = s->p;
    *esc = false;
    while (s->p < s->end) {
        unsigned char c = (unsigned char)*s->p;
        if (c == '"') {
            *start = b;
            *len = (size_t)(s->p - b);
            s->p++;
            return;
        }
        if (c < 0x20 || c >= 0x80) {
            s->bail = true; /* control characters, UTF-8: jansson's to judge */
            return;
        }
        if (c == '\\') {
            if (s->p + 1 >= s->end || !strchr("\"\\/bfnrt", s->p[1]) || !s->p[1]) {
                s->bail = true; /* \u (NUL, surrogates) or invalid */
                return;
            }
            *esc = true;
            s->p += 2;
            continue;
        }
        s->p++;
    }
    s->bail = true;
}

static bool digit(const scan *s)
{
    return s->p < s->end && *s->p >= '0' && *s->p <= '9';
}

static void number(scan *s)
{
    const char *b = s->p;
    if (*s->p == '-')
        s->p++;
    if (!digit(s)) {
        s->bail = true;
        return;
    }
    if (*s->p == '0') {
        s->p++;
    } else {
        while (digit(s))
            s->p++;
    }
    bool real = false;
    if (s->p < s->end && *s->p == '.') {
        real = true;
        s->p++;
        if (!digit(s)) {
            s->bail = true;
            return;
        }
        while (digit(s))
            s->p++;
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->bail = true; /* overflow is jansson's to judge */
        return;
    }
    size_t chars = (size_t)(s->p - b) - (*b == '-');
    if (chars > (real ? MAX_REAL_CHARS : MAX_INT_DIGITS))
        s->bail = true;
}

static void literal(scan *s, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n))
        s->bail = true;
    else
        s->p += n;
}

/* One value; live: the fields whose path leads into it when it is an
 * object at object depth d. */
static void value(scan *s, int nest, unsigned live, int d);

static void object(scan *s, int nest, unsigned live, int d)
{
    s->p++;
    ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return;
    }
    for (;;) {
        ws(s);
        if (s->p >= s->end || *s->p != '"') {
            s->bail = true;
            return;
        }
        const char *k = NULL;
        size_t klen = 0;
        bool kesc = false;
        string(s, &k, &klen, &kesc);
        if (s->bail)
            return;
        if (kesc && live) {
            s->bail = true; /* an escaped key might spell a wanted one */
            return;
        }
        unsigned leaf = 0, inner = 0;
        for (size_t i = 0; live && i < s->n; i++) {
            const char *want = s->f[i].path[d];
            if (!(live & (1u << i)) || strlen(want) != klen || memcmp(want, k, klen))
                continue;
            bool last = d + 1 >= FAKEAPI__PEEK_MAX_DEPTH || !s->f[i].path[d + 1];
            /* A later occurrence replaces an earlier one, whatever it is. */
            s->f[i].found = false;
            if (last)
                leaf |= 1u << i;
            else
                inner |= 1u << i;
        }
        ws(s);
        if (s->p >= s->end || *s->p != ':') {
            s->bail = true;
            return;
        }
        s->p++;
        ws(s);
        if (leaf && s->p < s->end && *s->p == '"') {
            const char *v = NULL;
            size_t vlen = 0;
            bool vesc = false;
            string(s, &v, &vlen, &vesc);
            if (s->bail)
                return;
            if (vesc) {
                s->bail = true;
                return;
            }
            for (size_t i = 0; i < s->n; i++)
                if (leaf & (1u << i)) {
                    s->f[i].found = true;
                    s->f[i].val = v;
                    s->f[i].len = vlen;
                }
        } else {
            value(s, nest + 1, inner, d + 1);
        }
        if (s->bail)
            return;
        ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == '}') {
            s->p++;
            return;
        }
        s->bail = true;
        return;
    }
}

static void array(scan *s, int nest)
{
    s->p++;
    ws(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        return;
    }
    for (;;) {
        ws(s);
        value(s, nest + 1, 0, 0);
        if (s->bail)
            return;
        ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == ']') {
            s->p++;
            return;
        }
        s->bail = true;
        return;
    }
}

static void value(scan *s, int nest, unsigned live, int d)
{
    if (nest > MAX_NEST || s->p >= s->end) {
        s->bail = true;
        return;
    }
    const char *k;
    size_t len;
    bool esc;
    switch (*s->p) {
    case '{':
        object(s, nest, d < FAKEAPI__PEEK_MAX_DEPTH ? live : 0, d);
        return;
    case '[':
        array(s, nest);
        return;
    case '"':
        string(s, &k, &len, &esc);
        return;
    case 't':
        literal(s, "true");
        return;
    case 'f':
        literal(s, "false");
        return;
    case 'n':
        literal(s, "null");
        return;
    default:
        if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'))
            number(s);
        else
            s->bail = true;
        return;
    }
}

int fakeapi__json_peek(const char *text, size_t len, fakeapi__peek *fields, size_t n)
{
    if (!text || n > 32)
        return FAKEAPI__PEEK_PARSE;
    for (size_t i = 0; i < n; i++) {
        fields[i].found = false;
        fields[i].val = NULL;
        fields[i].len = 0;
        if (!fields[i].path[0])
            return FAKEAPI__PEEK_PARSE;
    }
    scan s = {.p = text, .end = text + len, .f = fields, .n = n};
    ws(&s);
    /* jansson (flags 0) takes only an object or an array at the top. */
    if (s.p >= s.end || (*s.p != '{' && *s.p != '['))
        return FAKEAPI__PEEK_PARSE;
    value(&s, 0, n ? (unsigned)((1ull << n) - 1) : 0, 0);
    if (!s.bail) {
        ws(&s);
        if (s.p != s.end)
            s.bail = true;
    }
    if (s.bail) {
        for (size_t i = 0; i < n; i++)
            fields[i].found = false;
        return FAKEAPI__PEEK_PARSE;
    }
    return FAKEAPI__PEEK_OK;
}
