/*
 * strbuf.h - a growable byte buffer with a ceiling.
 *
 * Every buffer has a maximum size (STYLE: every growable buffer has a
 * maximum); an append that would pass it fails and leaves the buffer as it
 * was, and the buffer remembers the failure so that a sequence of appends can
 * be checked once at the end (like h2o's buffers).
 * Not thread-safe: one owner at a time.
 */
#ifndef FAKEAPI_STRBUF_H
#define FAKEAPI_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct fakeapi__strbuf {
    char *data; /* NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
    size_t max; /* 0 = 1 GiB */
    bool failed;
} fakeapi__strbuf;

/* Append n bytes. Returns 0, or -1 (and sets failed) past max or on ENOMEM. */
int fakeapi__strbuf_add(fakeapi__strbuf *b, const void *p, size_t n);
int fakeapi__strbuf_adds(fakeapi__strbuf *b, const char *s);
int fakeapi__strbuf_addf(fakeapi__strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Hand the contents over (caller frees); the buffer is left empty. Never NULL
 * unless allocation failed. */
char *fakeapi__strbuf_take(fakeapi__strbuf *b, size_t *len);
void fakeapi__strbuf_deinit(fakeapi__strbuf *b);

#endif
