#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STRBUF_DEFAULT_MAX ((size_t)1 << 30)

static int strbuf_reserve(fakeapi__strbuf *b, size_t extra)
{
    size_t max = b->max ? b->max : STRBUF_DEFAULT_MAX;
    if (b->failed || extra > max || b->len > max - extra) {
        b->failed = true;
        return -1;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

int fakeapi__strbuf_add(fakeapi__strbuf *b, const void *p, size_t n)
{
    if (strbuf_reserve(b, n) < 0)
        return -1;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int fakeapi__strbuf_adds(fakeapi__strbuf *b, const char *s)
{
    return fakeapi__strbuf_add(b, s, strlen(s));
}

int fakeapi__strbuf_addf(fakeapi__strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || strbuf_reserve(b, (size_t)n) < 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

char *fakeapi__strbuf_take(fakeapi__strbuf *b, size_t *len)
{
    if (!b->data && strbuf_reserve(b, 0) < 0)
        return NULL;
    char *p = b->data;
    if (len)
        *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

void fakeapi__strbuf_deinit(fakeapi__strbuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
