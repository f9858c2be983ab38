/*
 * jsondup.c - find repeated keys in a JSON text (jsondup.h).
 *
 * A recursive descent over the text that builds nothing but the path it
 * stands on. Keys are compared as they are written (an escaped spelling of
 * the same key is not seen as the same); an object's keys are compared
 * pairwise up to MAX_KEYS of them. Called only after jansson found a
 * duplicate, so its cost is off the common path. Reentrant.
 */
#include "jsondup.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64
#define MAX_KEYS 4096
#define MAX_PATH 512

typedef struct scan {
    const char *p, *end;
    json_t *out;
    int found;
    bool oom;
    char path[MAX_PATH];
    size_t plen;
} scan;

static void ws(scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* At a quote: skip the string; its contents (without quotes) in *str and *n. */
static bool string(scan *s, const char **str, size_t *n)
{
    if (s->p >= s->end || *s->p != '"')
        return false;
    const char *start = ++s->p;
    while (s->p < s->end && *s->p != '"')
        s->p += *s->p == '\\' ? 2 : 1;
    if (s->p >= s->end)
        return false;
    *str = start;
    *n = (size_t)(s->p - start);
    s->p++;
    return true;
}

static size_t path_push(scan *s, const char *part, size_t n, bool dot)
{
    size_t was = s->plen;
    if (dot && s->plen && s->plen < MAX_PATH - 1)
        s->path[s->plen++] = '.';
    if (n > MAX_PATH - 1 - s->plen)
        n = MAX_PATH - 1 - s->plen;
    memcpy(s->path + s->plen, part, n);
    s->plen += n;
    s->path[s->plen] = '\0';
    return was;
}

static void path_pop(scan *s, size_t was)
{
    s->plen = was;
    s->path[was] = '\0';
}

static bool value(scan *s, int depth);

static bool object(scan *s, int depth)
{
    struct {
        const char *k;
        size_t n;
    } *keys = NULL;
    size_t nkeys = 0, cap = 0;
    bool ok = false;
    s->p++;
    ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return true;
    }
    for (;;) {
        const char *k;
        size_t n;
        ws(s);
        if (!string(s, &k, &n))
            goto out;
        bool dup = false;
        for (size_t i = 0; i < nkeys && !dup; i++)
            dup = keys[i].n == n && !memcmp(keys[i].k, k, n);
        if (!dup && nkeys < MAX_KEYS) {
            if (nkeys == cap) {
                size_t c = cap ? cap * 2 : 16;
                void *m = realloc(keys, c * sizeof *keys);
                if (!m) {
                    s->oom = true;
                    goto out;
                }
                keys = m;
                cap = c;
            }
            keys[nkeys].k = k;
            keys[nkeys++].n = n;
        }
        size_t was = path_push(s, k, n, true);
        if (dup) {
            s->found++;
            if (json_array_append_new(s->out, json_string(s->path)) < 0)
                s->oom = true;
        }
        ws(s);
        if (s->p >= s->end || *s->p != ':')
            goto out;
        s->p++;
        bool v = value(s, depth + 1);
        path_pop(s, was);
        if (!v)
            goto out;
        ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == '}') {
            s->p++;
            ok = true;
        }
        goto out;
    }
out:
    free(keys);
    return ok;
}

static bool array(scan *s, int depth)
{
    s->p++;
    ws(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        return true;
    }
    for (long i = 0;; i++) {
        char idx[24];
        int n = snprintf(idx, sizeof idx, "[%ld]", i);
        size_t was = path_push(s, idx, n > 0 ? (size_t)n : 0, false);
        bool v = value(s, depth + 1);
        path_pop(s, was);
        if (!v)
            return false;
        ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == ']') {
            s->p++;
            return true;
        }
        return false;
    }
}

static bool value(scan *s, int depth)
{
    ws(s);
    if (s->p >= s->end || depth > MAX_DEPTH)
        return false;
    if (*s->p == '{')
        return object(s, depth);
    if (*s->p == '[')
        return array(s, depth);
    if (*s->p == '"') {
        const char *str;
        size_t n;
        return string(s, &str, &n);
    }
    /* A number or a literal: up to the next delimiter. */
    while (s->p < s->end && !strchr(",}] \t\r\n", *s->p))
        s->p++;
    return true;
}

int fakeapi__json_duplicates(const char *text, size_t len, json_t *out)
{
    scan s = {.p = text, .end = text + len, .out = out};
    value(&s, 0);
    return s.oom ? -1 : s.found;
}
