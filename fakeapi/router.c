#include "router.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEGS 9

/* Split path on '/', ignoring empty segments. Returns the count, -1 if too many. */
static int split(const char *path, const char *seg[], size_t len[])
{
    int n = 0;
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *e = strchr(p, '/');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (n == MAX_SEGS)
            return -1;
        seg[n] = p;
        len[n++] = l;
        p += l;
    }
    return n;
}

static int copy(char *dst, size_t cap, const char *src, size_t n)
{
    if (n >= cap)
        return -1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return 0;
}

static int is(const char *seg, size_t len, const char *word)
{
    return strlen(word) == len && !memcmp(seg, word, len);
}

/* Everything after /api/v1 or /apis/<g>/<v>: segments s[0..n). */
static int parse_resource_path(const char *s[], size_t l[], int n, fakeapi__route *rt)
{
    int i = 0;
    if (n == 0) {
        rt->kind = FAKEAPI__RT_GROUPVERSION;
        return 0;
    }
    /* namespaces/<ns>/<res>... ; but namespaces/<ns> and namespaces/<ns>/status|finalize
     * address the Namespace object itself. */
    if (is(s[0], l[0], "namespaces") && n >= 3 && !is(s[2], l[2], "status") &&
        !is(s[2], l[2], "finalize")) {
        if (copy(rt->ns, sizeof rt->ns, s[1], l[1]) < 0)
            return -1;
        i = 2;
    }
    int rest = n - i;
    /* .../pods/<name>/proxy/<path...>: the proxy subresource with a path. */
    if (rest > 3 && is(s[i + 2], l[i + 2], "proxy"))
        rest = 3;
    if (rest < 1 || rest > 3)
        return -1;
    if (copy(rt->resource, sizeof rt->resource, s[i], l[i]) < 0)
        return -1;
    rt->kind = FAKEAPI__RT_COLLECTION;
    if (rest >= 2) {
        if (copy(rt->name, sizeof rt->name, s[i + 1], l[i + 1]) < 0)
            return -1;
        rt->kind = FAKEAPI__RT_OBJECT;
    }
    if (rest == 3) {
        if (copy(rt->sub, sizeof rt->sub, s[i + 2], l[i + 2]) < 0)
            return -1;
        rt->kind = FAKEAPI__RT_SUBRESOURCE;
    }
    return 0;
}

/* After /api/v1 or /apis/<g>/<v>: "watch/<collection or object>" is the
 * legacy form of ?watch=true (kube-apiserver registers WATCH and WATCHLIST
 * under "watch/" + path); there is no watch of a subresource. */
static int parse_versioned(const char *s[], size_t l[], int n, fakeapi__route *rt)
{
    if (n >= 2 && is(s[0], l[0], "watch")) {
        if (parse_resource_path(s + 1, l + 1, n - 1, rt) < 0)
            return -1;
        if (rt->kind != FAKEAPI__RT_COLLECTION && rt->kind != FAKEAPI__RT_OBJECT)
            return -1;
        rt->watch = true;
        return 0;
    }
    return parse_resource_path(s, l, n, rt);
}

static int parse_openapi(const char *s[], size_t l[], int n, fakeapi__route *rt)
{
    if (n == 2 && is(s[1], l[1], "v2")) {
        rt->kind = FAKEAPI__RT_OPENAPI_V2;
        return 0;
    }
    if (n < 2 || !is(s[1], l[1], "v3"))
        return -1;
    if (n == 2) {
        rt->kind = FAKEAPI__RT_OPENAPI_V3;
        return 0;
    }
    if (n == 4 && is(s[2], l[2], "api")) {
        rt->kind = FAKEAPI__RT_OPENAPI_V3_GV;
        return copy(rt->version, sizeof rt->version, s[3], l[3]);
    }
    if (n == 5 && is(s[2], l[2], "apis")) {
        rt->kind = FAKEAPI__RT_OPENAPI_V3_GV;
        if (copy(rt->group, sizeof rt->group, s[3], l[3]) < 0)
            return -1;
        return copy(rt->version, sizeof rt->version, s[4], l[4]);
    }
    return -1;
}

static int parse_segments(const char *path, const char *s[], size_t l[], int n, fakeapi__route *rt)
{
    if (n == 0)
        return -1;
    if (is(s[0], l[0], "version") && n == 1) {
        rt->kind = FAKEAPI__RT_VERSION;
        return 0;
    }
    if (is(s[0], l[0], "healthz") || is(s[0], l[0], "readyz") || is(s[0], l[0], "livez")) {
        /* The endpoint in .resource, a check's name ("ping",
         * "poststarthook/x") in .name. */
        rt->kind = FAKEAPI__RT_HEALTH;
        if (copy(rt->resource, sizeof rt->resource, s[0], l[0]) < 0)
            return -1;
        const char *rest = n > 1 ? s[1] : "";
        size_t rl = strlen(rest);
        while (rl && rest[rl - 1] == '/')
            rl--;
        return copy(rt->name, sizeof rt->name, rest, rl);
    }
    if (is(s[0], l[0], "metrics") && n == 1) {
        rt->kind = FAKEAPI__RT_METRICS;
        return 0;
    }
    if (is(s[0], l[0], "openapi"))
        return parse_openapi(s, l, n, rt);
    if (is(s[0], l[0], "fakeapi") && n >= 2 && is(s[1], l[1], "v1")) {
        rt->kind = FAKEAPI__RT_CONTROL;
        const char *rest = n > 2 ? s[2] : "";
        return copy(rt->name, sizeof rt->name, rest, strlen(rest));
    }
    (void)path;
    if (is(s[0], l[0], "api")) {
        if (n == 1) {
            rt->kind = FAKEAPI__RT_API;
            return 0;
        }
        if (copy(rt->version, sizeof rt->version, s[1], l[1]) < 0)
            return -1;
        return parse_versioned(s + 2, l + 2, n - 2, rt);
    }
    if (is(s[0], l[0], "apis")) {
        if (n == 1) {
            rt->kind = FAKEAPI__RT_APIS;
            return 0;
        }
        if (copy(rt->group, sizeof rt->group, s[1], l[1]) < 0)
            return -1;
        if (n == 2) {
            rt->kind = FAKEAPI__RT_GROUP;
            return 0;
        }
        if (copy(rt->version, sizeof rt->version, s[2], l[2]) < 0)
            return -1;
        return parse_versioned(s + 3, l + 3, n - 3, rt);
    }
    return -1;
}

int fakeapi__route_parse(const char *path, fakeapi__route *rt)
{
    const char *s[MAX_SEGS];
    size_t l[MAX_SEGS];
    memset(rt, 0, sizeof *rt);
    int n = split(path ? path : "", s, l);
    if (n < 0 || parse_segments(path, s, l, n, rt) < 0) {
        memset(rt, 0, sizeof *rt);
        return -1;
    }
    return 0;
}

/* ---- request targets: decoding the path and the query ---- */

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decode %XX (and '+' as a space when plus) from s[0..n) into out, which has
 * room for n + 1 bytes. The decoded length, or -1 for a malformed escape. */
static long pct_decode(const char *s, size_t n, bool plus, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (n - i < 3)
                return -1;
            int h = hexval((unsigned char)s[i + 1]), l = hexval((unsigned char)s[i + 2]);
            if (h < 0 || l < 0)
                return -1;
            out[o++] = (char)(h * 16 + l);
            i += 2;
        } else {
            out[o++] = plus && c == '+' ? ' ' : (char)c;
        }
    }
    out[o] = '\0';
    return (long)o;
}

/* No NUL, and strict UTF-8: no overlong forms, no surrogates, nothing past
 * U+10FFFF (what jansson accepts, and what a Kubernetes name can hold). */
static bool clean_text(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned char b = s[i];
        size_t len;
        uint32_t cp, min;
        if (b == 0)
            return false;
        if (b < 0x80) {
            i++;
            continue;
        }
        if (b >= 0xc2 && b <= 0xdf)
            len = 2, cp = b & 0x1fu, min = 0x80;
        else if (b >= 0xe0 && b <= 0xef)
            len = 3, cp = b & 0x0fu, min = 0x800;
        else if (b >= 0xf0 && b <= 0xf4)
            len = 4, cp = b & 0x07u, min = 0x10000;
        else
            return false;
        if (n - i < len)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3fu);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += len;
    }
    return true;
}

/* The raw text s[0..n) for a message: printable ASCII kept, the rest as %XX,
 * cut to fit, so that the message is always valid UTF-8. */
static void quote_raw(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 4 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "%%%02X", c);
    }
    if (cap)
        out[o < cap ? o : cap - 1] = '\0';
}

/* Parse "a=1&b=2" (len bytes) into q. Returns 0 or a FAKEAPI__URL_ code. */
static int parse_query(const char *qs, size_t len, json_t *q, char *err, size_t errlen)
{
    char *buf = malloc(len + 1);
    if (!buf)
        return FAKEAPI__URL_NOMEM;
    int rc = 0;
    const char *p = qs, *end = qs + len;
    while (p < end && rc == 0) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *pe = amp ? amp : end;
        const char *eq = memchr(p, '=', (size_t)(pe - p));
        const char *ke = eq ? eq : pe;
        if (pe == p) {
            p = pe + 1;
            continue; /* "a=1&&b=2" */
        }
        long kl = pct_decode(p, (size_t)(ke - p), true, buf);
        bool ok = kl >= 0 && clean_text(buf, (size_t)kl);
        char *key = ok ? strdup(buf) : NULL;
        long vl = ok ? (eq ? pct_decode(eq + 1, (size_t)(pe - eq - 1), true, buf) : 0) : -1;
        if (!eq)
            buf[0] = '\0';
        ok = ok && vl >= 0 && clean_text(buf, (size_t)vl);
        if (!ok) {
            char shown[160];
            quote_raw(p, (size_t)(pe - p), shown, sizeof shown);
            snprintf(err, errlen,
                     "invalid query parameter \"%s\": a malformed escape, a NUL or invalid "
                     "UTF-8",
                     shown);
            rc = FAKEAPI__URL_BAD_QUERY;
        } else if (!key) {
            rc = FAKEAPI__URL_NOMEM;
        } else if (!json_object_get(q, key) &&
                   json_object_set_new_nocheck(q, key, json_stringn(buf, (size_t)vl)) < 0) {
            rc = FAKEAPI__URL_NOMEM;
        }
        free(key);
        p = pe + 1;
    }
    free(buf);
    return rc;
}

int fakeapi__url_split(const char *raw, char **path, json_t **query, char *err, size_t errlen)
{
    *path = NULL;
    *query = NULL;
    if (!raw)
        raw = "";
    size_t plen = strcspn(raw, "?#");
    char *p = malloc(plen + 1);
    json_t *q = json_object();
    int rc = FAKEAPI__URL_NOMEM;
    if (!p || !q)
        goto fail;
    long n = pct_decode(raw, plen, false, p);
    if (n < 0) {
        char shown[160];
        quote_raw(raw, plen, shown, sizeof shown);
        snprintf(err, errlen, "invalid URL escape in path \"%s\"", shown);
        rc = FAKEAPI__URL_MALFORMED;
        goto fail;
    }
    if (!clean_text(p, (size_t)n)) {
        snprintf(err, errlen, "the server could not find the requested resource");
        rc = FAKEAPI__URL_BAD_PATH;
        goto fail;
    }
    if (raw[plen] == '?') {
        const char *qs = raw + plen + 1;
        rc = parse_query(qs, strcspn(qs, "#"), q, err, errlen);
        if (rc < 0)
            goto fail;
    }
    *path = p;
    *query = q;
    return 0;
fail:
    if (rc == FAKEAPI__URL_NOMEM)
        snprintf(err, errlen, "out of memory");
    free(p);
    json_decref(q);
    return rc;
}
