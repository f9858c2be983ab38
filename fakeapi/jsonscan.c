/*
 * jsonscan.c - a few string members of a JSON text without parsing it into
 * a document (jsonscan.h). A recursive descent over the text that checks
 * what jansson's decoder checks, keeps the last of repeated keys as
 * json_object_set does, and gives up where its answer could differ.
 */
#include "jsonscan.h"

#include "kh/jsonfast.h"

#include <string.h>

#define SCAN_MAX_DEPTH 64
#define SCAN_MAX_NUMBER 18 /* longer numbers: jansson may refuse them (overflow) */

typedef struct scan {
    const char *p, *end;
    fakeapi__jscan_want *w;
    size_t n;
    bool own;         /* the server's own text: stop once every want is found */
    unsigned pending; /* (own) the wants not found yet */
} scan;

static void skip_ws(scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static int hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* A string at s->p (its opening quote): its raw bytes, and whether it holds
 * an escape. -1 if jansson would refuse it, or might. */
static int string(scan *s, const char **start, size_t *len, bool *escaped)
{
    s->p++;
    const char *b = s->p;
    *escaped = false;
    /* Plain ASCII eight bytes at a time, then byte by byte from the first
     * word that holds anything else (the closing quote included). */
    while (s->end - s->p >= 8 && !kh_json_word_special(s->p) && !kh_json_word_high(s->p))
        s->p += 8;
    while (s->p < s->end) {
        unsigned char c = (unsigned char)*s->p;
        if (c == '"') {
            *start = b;
            *len = (size_t)(s->p - b);
            s->p++;
            return 0;
        }
        if (c < 0x20)
            return -1;
        if (c == '\\') {
            *escaped = true;
            if (s->end - s->p < 2)
                return -1;
            char e = s->p[1];
            if (e == 'u') {
                if (s->end - s->p < 6)
                    return -1;
                int v = 0;
                for (int i = 2; i < 6; i++) {
                    int h = hex(s->p[i]);
                    if (h < 0)
                        return -1;
                    v = v * 16 + h;
                }
                /* \u0000 needs JSON_ALLOW_NUL; surrogate pairs: jansson's to judge. */
                if (v == 0 || (v >= 0xD800 && v <= 0xDFFF))
                    return -1;
                s->p += 6;
                continue;
            }
            if (!e || !strchr("\"\\/bfnrt", e))
                return -1;
            s->p += 2;
            continue;
        }
        if (c >= 0x80) {
            int k = kh_json_utf8_len(s->p, s->end);
            if (k == 0)
                return -1;
            s->p += k;
            continue;
        }
        s->p++;
    }
    return -1;
}

static bool digit(const scan *s)
{
    return s->p < s->end && *s->p >= '0' && *s->p <= '9';
}

/* A number: JSON's grammar without an exponent, short enough that neither
 * strtoll nor strtod can overflow. */
static int number(scan *s)
{
    const char *b = s->p;
    if (*s->p == '-')
        s->p++;
    if (!digit(s))
        return -1;
    if (*s->p == '0') {
        s->p++;
        if (digit(s))
            return -1;
    } else {
        while (digit(s))
            s->p++;
    }
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        if (!digit(s))
            return -1;
        while (digit(s))
            s->p++;
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E'))
        return -1;
    return s->p - b > SCAN_MAX_NUMBER ? -1 : 0;
}

static int literal(scan *s, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
        return -1;
    s->p += n;
    /* jansson reads a run of letters as one word: "truex" is no literal. */
    if (s->p < s->end && ((*s->p >= 'a' && *s->p <= 'z') || (*s->p >= 'A' && *s->p <= 'Z')))
        return -1;
    return 0;
}

static int value(scan *s, int depth, unsigned mask);

/* An object at s->p; mask: the wants whose path leads into it, depth: how
 * many of their keys are behind. */
static int object(scan *s, int depth, unsigned mask)
{
    if (depth >= SCAN_MAX_DEPTH)
        return -1;
    s->p++;
    skip_ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return 0;
    }
    for (;;) {
        if (s->p >= s->end || *s->p != '"')
            return -1;
        const char *key;
        size_t klen;
        bool esc;
        if (string(s, &key, &klen, &esc) < 0)
            return -1;
        /* An escaped key might be a wanted one; where no wanted path leads
         * (managedFields' "k:{\"name\":...}" keys) no key matters. */
        if (esc && mask)
            return -1;
        unsigned leaf = 0, inner = 0;
        for (size_t i = 0; i < s->n && mask; i++) {
            if (!(mask & (1u << i)))
                continue;
            const char *k = s->w[i].path[depth];
            if (strlen(k) != klen || memcmp(k, key, klen) != 0)
                continue;
            if (s->w[i].path[depth + 1])
                inner |= 1u << i;
            else
                leaf |= 1u << i;
        }
        /* A repeated key replaces what came before it. */
        for (size_t i = 0; i < s->n; i++)
            if ((leaf | inner) & (1u << i))
                s->w[i].found = false;
        skip_ws(s);
        if (s->p >= s->end || *s->p != ':')
            return -1;
        s->p++;
        skip_ws(s);
        if (leaf && s->p < s->end && *s->p == '"') {
            const char *v;
            size_t vlen;
            if (string(s, &v, &vlen, &esc) < 0 || esc)
                return -1;
            for (size_t i = 0; i < s->n; i++) {
                if (leaf & (1u << i)) {
                    s->w[i].found = true;
                    s->w[i].str = v;
                    s->w[i].len = vlen;
                }
            }
        } else {
            int rc = value(s, depth + 1, inner);
            if (rc != 0)
                return rc;
        }
        /* Keys are unique in the server's own text: what this member held
         * (or did not) for a want is final. Once every want is, stop. */
        if (s->own && (leaf | inner) && !(s->pending &= ~(leaf | inner)))
            return 1;
        skip_ws(s);
        if (s->p >= s->end)
            return -1;
        if (*s->p == '}') {
            s->p++;
            return 0;
        }
        if (*s->p != ',')
            return -1;
        s->p++;
        skip_ws(s);
    }
}

static int array(scan *s, int depth)
{
    if (depth >= SCAN_MAX_DEPTH)
        return -1;
    s->p++;
    skip_ws(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        return 0;
    }
    for (;;) {
        if (value(s, depth + 1, 0) < 0)
            return -1;
        skip_ws(s);
        if (s->p >= s->end)
            return -1;
        if (*s->p == ']') {
            s->p++;
            return 0;
        }
        if (*s->p != ',')
            return -1;
        s->p++;
        skip_ws(s);
    }
}

/* A value at s->p (after white space); mask: the wants that continue into
 * it if it is an object. */
static int value(scan *s, int depth, unsigned mask)
{
    if (s->p >= s->end)
        return -1;
    const char *str;
    size_t len;
    bool esc;
    switch (*s->p) {
    case '{':
        return object(s, depth, mask);
    case '[':
        return array(s, depth);
    case '"':
        return string(s, &str, &len, &esc);
    case 't':
        return literal(s, "true");
    case 'f':
        return literal(s, "false");
    case 'n':
        return literal(s, "null");
    default:
        return *s->p == '-' || (*s->p >= '0' && *s->p <= '9') ? number(s) : -1;
    }
}

static int scan_text(const char *text, size_t len, fakeapi__jscan_want *want, size_t n, bool own)
{
    if (!text || n == 0 || n > 32)
        return -1;
    unsigned all = n == 32 ? 0xFFFFFFFFu : (1u << n) - 1;
    scan s = {.p = text, .end = text + len, .w = want, .n = n, .own = own, .pending = all};
    for (size_t i = 0; i < n; i++) {
        if (!want[i].path[0] || want[i].path[3])
            return -1;
        want[i].found = false;
        want[i].str = NULL;
        want[i].len = 0;
    }
    skip_ws(&s);
    if (s.p >= s.end || *s.p != '{')
        return -1;
    int rc = object(&s, 0, all);
    if (rc != 0)
        return rc > 0 ? 0 : -1;
    skip_ws(&s);
    return s.p == s.end ? 0 : -1;
}

int fakeapi__json_scan(const char *text, size_t len, fakeapi__jscan_want *want, size_t n)
{
    return scan_text(text, len, want, n, false);
}

int fakeapi__json_scan_own(const char *text, size_t len, fakeapi__jscan_want *want, size_t n)
{
    return scan_text(text, len, want, n, true);
}
