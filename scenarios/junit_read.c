/*
 * junit_read.c - a JUnit XML report read back (junit_read.h).
 *
 * A small scanner, not a general XML parser: tags are read with their
 * attributes into a fixed table, text is gathered only inside the elements
 * whose text a report means (failure, error, system-out), and elements
 * nest at most MAX_DEPTH deep.
 */
#include "junit_read.h"

#include "scn/scenario.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32
#define MAX_ATTRS 16
#define MAX_TEXT (16u << 20) /* one element's text */

typedef struct buf {
    char *s;
    size_t len, cap;
} buf;

typedef struct attr {
    buf name, value;
} attr;

typedef struct scanner {
    const char *p, *end;
    unsigned line;
    char *err;
    size_t errlen;
} scanner;

/* The test case being read. */
typedef struct tcase {
    bool open;
    buf name, classname, message, details, out;
    double time;
    scn_junit_status status;
} tcase;

__attribute__((format(printf, 2, 3))) static int fail(scanner *sc, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!sc->err || !sc->errlen)
        return SCN_ERR_INPUT;
    n = snprintf(sc->err, sc->errlen, "line %u: ", sc->line);
    if (n >= 0 && (size_t)n < sc->errlen) {
        va_start(ap, fmt);
        vsnprintf(sc->err + n, sc->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return SCN_ERR_INPUT;
}

static int put(buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        char *p;
        while (cap < b->len + n + 1)
            cap *= 2;
        if (cap > MAX_TEXT + 1)
            return SCN_ERR_INPUT;
        p = realloc(b->s, cap);
        if (!p)
            return SCN_ERR_NOMEM;
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

static const char *str(const buf *b)
{
    return b->s ? b->s : "";
}

static void utf8(uint32_t cp, char *out, size_t *n)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        *n = 1;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        *n = 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        *n = 3;
    } else {
        out[0] = (char)(0xF0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        *n = 4;
    }
}

/* Append s[0..n) to b with its references decoded (b NULL: check only). */
static int decode(scanner *sc, buf *b, const char *s, size_t n)
{
    static const struct {
        const char *name;
        char c;
    } named[] = {{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
    size_t i = 0;
    int rc;

    while (i < n) {
        const char *amp = memchr(s + i, '&', n - i);
        size_t plain = amp ? (size_t)(amp - (s + i)) : n - i;
        if (b && plain && (rc = put(b, s + i, plain)) != 0)
            return rc;
        i += plain;
        if (!amp)
            break;
        i++; /* past '&' */
        bool found = false;
        for (size_t k = 0; k < sizeof named / sizeof named[0] && !found; k++) {
            size_t len = strlen(named[k].name);
            if (n - i >= len && memcmp(s + i, named[k].name, len) == 0) {
                if (b && (rc = put(b, &named[k].c, 1)) != 0)
                    return rc;
                i += len;
                found = true;
            }
        }
        if (found)
            continue;
        if (i < n && s[i] == '#') {
            uint32_t cp = 0;
            bool hex = i + 1 < n && s[i + 1] == 'x';
            size_t j = i + 1 + hex, digits = 0;
            for (; j < n && s[j] != ';' && digits < 8; j++, digits++) {
                int d = s[j] >= '0' && s[j] <= '9'          ? s[j] - '0'
                        : hex && s[j] >= 'a' && s[j] <= 'f' ? s[j] - 'a' + 10
                        : hex && s[j] >= 'A' && s[j] <= 'F' ? s[j] - 'A' + 10
                                                            : -1;
                if (d < 0)
                    break;
                cp = cp * (hex ? 16 : 10) + (uint32_t)d;
            }
            if (digits > 0 && j < n && s[j] == ';' && cp > 0 && cp <= 0x10FFFF &&
                !(cp >= 0xD800 && cp <= 0xDFFF)) {
                char u[4];
                size_t ul;
                utf8(cp, u, &ul);
                if (b && (rc = put(b, u, ul)) != 0)
                    return rc;
                i = j + 1;
                continue;
            }
        }
        return fail(sc, "an unknown entity or character reference");
    }
    return 0;
}

static void skip_space(scanner *sc)
{
    while (sc->p < sc->end && strchr(" \t\r\n", *sc->p)) {
        sc->line += *sc->p == '\n';
        sc->p++;
    }
}

static bool is_name(char c)
{
    return c && (strchr(":_-.", c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || (unsigned char)c >= 0x80);
}

/* Skip past the string stop, counting lines; false if it never comes. */
static bool skip_past(scanner *sc, const char *stop)
{
    size_t n = strlen(stop);
    for (; sc->p + n <= sc->end; sc->p++) {
        if (memcmp(sc->p, stop, n) == 0) {
            sc->p += n;
            return true;
        }
        sc->line += *sc->p == '\n';
    }
    return false;
}

static void attrs_clear(attr *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(a[i].name.s);
        free(a[i].value.s);
        a[i] = (attr){0};
    }
}

static const char *attr_get(const attr *a, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(str(&a[i].name), name) == 0)
            return str(&a[i].value);
    return NULL;
}

typedef struct reader {
    scanner sc;
    const scn_junit_read_cb *cb;
    char stack[MAX_DEPTH][32];
    int depth;
    tcase tc;
    buf *text; /* where text goes now, or NULL */
} reader;

static void tcase_clear(tcase *t)
{
    free(t->name.s);
    free(t->classname.s);
    free(t->message.s);
    free(t->details.s);
    free(t->out.s);
    *t = (tcase){0};
}

static int start_element(reader *r, const char *name, const attr *a, size_t na)
{
    tcase *t = &r->tc;
    const char *v;
    int rc = 0;

    if (!strcmp(name, "property")) {
        const char *pn = attr_get(a, na, "name"), *pv = attr_get(a, na, "value");
        if (!pn || !pv)
            return fail(&r->sc, "<property> without name or value");
        return r->cb->property ? r->cb->property(r->cb->user, pn, pv) : 0;
    }
    if (!strcmp(name, "testcase")) {
        if (t->open)
            return fail(&r->sc, "<testcase> inside <testcase>");
        tcase_clear(t);
        t->open = true;
        if (!(v = attr_get(a, na, "name")))
            return fail(&r->sc, "<testcase> without a name");
        rc = put(&t->name, v, strlen(v));
        if (!rc && (v = attr_get(a, na, "classname")))
            rc = put(&t->classname, v, strlen(v));
        if ((v = attr_get(a, na, "time"))) {
            char *end;
            t->time = strtod(v, &end);
            if (end == v || *end)
                return fail(&r->sc, "<testcase> time=\"%s\": not a number", v);
        }
        return rc;
    }
    if (t->open &&
        (!strcmp(name, "failure") || !strcmp(name, "error") || !strcmp(name, "skipped"))) {
        t->status = name[0] == 'f'   ? SCN_JUNIT_FAILED
                    : name[0] == 'e' ? SCN_JUNIT_ERROR
                                     : SCN_JUNIT_SKIPPED;
        if ((v = attr_get(a, na, "message")) && (rc = put(&t->message, v, strlen(v))) != 0)
            return rc;
        r->text = &t->details;
        return 0;
    }
    if (t->open && !strcmp(name, "system-out"))
        r->text = &t->out;
    return 0;
}

static int end_element(reader *r, const char *name)
{
    tcase *t = &r->tc;
    int rc = 0;

    r->text = NULL;
    if (!strcmp(name, "testcase")) {
        scn_junit_case c = {.name = str(&t->name),
                            .classname = str(&t->classname),
                            .time_s = t->time,
                            .status = t->status,
                            .message = t->message.s,
                            .details = t->details.s,
                            .system_out = t->out.s};
        rc = r->cb->testcase ? r->cb->testcase(r->cb->user, &c) : 0;
        tcase_clear(t);
    }
    return rc;
}

/* A tag after its '<': <name attrs...> or </name> or <name .../>. */
static int tag(reader *r)
{
    scanner *sc = &r->sc;
    attr a[MAX_ATTRS] = {0};
    size_t na = 0;
    char name[32];
    size_t n = 0;
    bool closing = false, empty = false;
    int rc = 0;

    if (sc->p < sc->end && *sc->p == '/') {
        closing = true;
        sc->p++;
    }
    while (sc->p < sc->end && is_name(*sc->p)) {
        if (n + 1 >= sizeof name)
            return fail(sc, "an element name too long");
        name[n++] = *sc->p++;
    }
    name[n] = '\0';
    if (n == 0)
        return fail(sc, "a malformed tag");
    for (;;) {
        skip_space(sc);
        if (sc->p >= sc->end) {
            rc = fail(sc, "the report ends inside <%s>", name);
            goto out;
        }
        if (*sc->p == '>') {
            sc->p++;
            break;
        }
        if (!closing && *sc->p == '/' && sc->p + 1 < sc->end && sc->p[1] == '>') {
            sc->p += 2;
            empty = true;
            break;
        }
        if (closing || na >= MAX_ATTRS || !is_name(*sc->p)) {
            rc = fail(sc, "a malformed tag <%s%s>", closing ? "/" : "", name);
            goto out;
        }
        const char *an = sc->p;
        while (sc->p < sc->end && is_name(*sc->p))
            sc->p++;
        if ((rc = put(&a[na].name, an, (size_t)(sc->p - an))) != 0)
            goto out;
        skip_space(sc);
        if (sc->p >= sc->end || *sc->p != '=') {
            rc = fail(sc, "<%s>: attribute %s without a value", name, str(&a[na].name));
            goto out;
        }
        sc->p++;
        skip_space(sc);
        char q = sc->p < sc->end ? *sc->p : 0;
        const char *close =
            q == '"' || q == '\'' ? memchr(sc->p + 1, q, (size_t)(sc->end - sc->p - 1)) : NULL;
        if (!close || memchr(sc->p + 1, '<', (size_t)(close - sc->p - 1))) {
            rc = fail(sc, "<%s>: attribute %s is not quoted", name, str(&a[na].name));
            goto out;
        }
        for (const char *c = sc->p; c < close; c++)
            sc->line += *c == '\n';
        if ((rc = put(&a[na].value, "", 0)) != 0 ||
            (rc = decode(sc, &a[na].value, sc->p + 1, (size_t)(close - sc->p - 1))) != 0)
            goto out;
        sc->p = close + 1;
        na++;
    }
    if (closing) {
        if (r->depth == 0 || strcmp(r->stack[r->depth - 1], name) != 0) {
            rc = fail(sc, "</%s> closes %s%s%s", name, r->depth ? "<" : "nothing",
                      r->depth ? r->stack[r->depth - 1] : "", r->depth ? ">" : "");
            goto out;
        }
        r->depth--;
        rc = end_element(r, name);
        goto out;
    }
    if (r->depth == 0 && strcmp(name, "testsuites") != 0 && strcmp(name, "testsuite") != 0) {
        rc = fail(sc,
                  "<%s>: not a JUnit report (it starts with neither <testsuites> nor "
                  "<testsuite>)",
                  name);
        goto out;
    }
    if (r->depth >= MAX_DEPTH) {
        rc = fail(sc, "elements nested too deep");
        goto out;
    }
    if ((rc = start_element(r, name, a, na)) != 0)
        goto out;
    if (empty) {
        rc = end_element(r, name);
    } else {
        memcpy(r->stack[r->depth++], name, n + 1);
    }
out:
    attrs_clear(a, na + (na < MAX_ATTRS));
    return rc;
}

int scn__junit_read(const char *text, size_t len, const scn_junit_read_cb *cb, char *err,
                    size_t errlen)
{
    reader r = {.sc = {.p = text, .end = text + len, .line = 1, .err = err, .errlen = errlen},
                .cb = cb};
    scanner *sc = &r.sc;
    bool root_seen = false;
    int rc = 0;

    if (err && errlen)
        err[0] = '\0';
    if (!text || !cb)
        return SCN_ERR_INPUT;
    while (sc->p < sc->end && rc == 0) {
        const char *lt = memchr(sc->p, '<', (size_t)(sc->end - sc->p));
        const char *stop = lt ? lt : sc->end;
        if (r.depth == 0) {
            for (const char *c = sc->p; c < stop; c++)
                if (!strchr(" \t\r\n", *c))
                    return fail(sc, "text outside the report's element");
        }
        if (r.text)
            rc = decode(sc, r.text, sc->p, (size_t)(stop - sc->p));
        else
            rc = decode(sc, NULL, sc->p, (size_t)(stop - sc->p));
        for (const char *c = sc->p; c < stop; c++)
            sc->line += *c == '\n';
        sc->p = stop;
        if (rc != 0 || !lt)
            break;
        sc->p++; /* past '<' */
        if (sc->end - sc->p >= 3 && memcmp(sc->p, "!--", 3) == 0) {
            if (!skip_past(sc, "-->"))
                rc = fail(sc, "a comment that does not end");
        } else if (sc->end - sc->p >= 8 && memcmp(sc->p, "![CDATA[", 8) == 0) {
            const char *start = sc->p + 8;
            sc->p = start;
            if (!skip_past(sc, "]]>"))
                rc = fail(sc, "a CDATA section that does not end");
            else if (r.text)
                rc = put(r.text, start, (size_t)(sc->p - 3 - start));
        } else if (sc->p < sc->end && *sc->p == '?') {
            if (!skip_past(sc, "?>"))
                rc = fail(sc, "a processing instruction that does not end");
        } else if (sc->p < sc->end && *sc->p == '!') {
            if (root_seen || !skip_past(sc, ">"))
                rc = fail(sc, "a declaration this reader does not know");
        } else if (r.depth == 0 && root_seen) {
            rc = fail(sc, "a second root element");
        } else {
            root_seen = true;
            rc = tag(&r);
        }
    }
    if (rc == 0 && !root_seen)
        rc = fail(sc, "no <testsuites> or <testsuite> element: not a JUnit report");
    if (rc == 0 && r.depth > 0)
        rc = fail(sc, "the report ends inside <%s>: cut short?", r.stack[r.depth - 1]);
    tcase_clear(&r.tc);
    return rc;
}
