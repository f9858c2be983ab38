/*
 * jsonpeek.h - a few string members of a JSON text read without building
 * a tree: what the trace needs of every response and watch line it logs
 * (metadata.resourceVersion, namespace, name, the event's type), which a
 * full parse of a 5 KB object made a few percent of a busy server's time.
 *
 * The answer is always the one a full parse (json_loadb, flags 0) and
 * json_object_get / json_string_value would give: the last occurrence of
 * a duplicated key wins, a member that is not a string reads as absent,
 * and a text jansson would refuse reads as all absent. Texts this scanner
 * does not vouch for (\u escapes, bytes above 0x7f, large or exponent
 * numbers, deep nesting, escapes in the members wanted) are left to the
 * caller's full parse (FAKEAPI__PEEK_PARSE).
 *
 * Pure: any thread.
 */
#ifndef FAKEAPI_JSONPEEK_H
#define FAKEAPI_JSONPEEK_H

#include <stdbool.h>
#include <stddef.h>

#define FAKEAPI__PEEK_MAX_DEPTH 3

/* One member wanted: the object keys leading to it from the top-level
 * object (path[0] at the top, up to FAKEAPI__PEEK_MAX_DEPTH, the rest
 * NULL). Out: found and the string's bytes (pointing into the text, not
 * terminated; no escapes in them). */
typedef struct fakeapi__peek {
    const char *path[FAKEAPI__PEEK_MAX_DEPTH];
    bool found;
    const char *val;
    size_t len;
} fakeapi__peek;

enum { FAKEAPI__PEEK_OK = 0, FAKEAPI__PEEK_PARSE = 1 };

/* Fill the n fields from text (len bytes). FAKEAPI__PEEK_OK, or
 * FAKEAPI__PEEK_PARSE: the caller must parse the text itself. */
int fakeapi__json_peek(const char *text, size_t len, fakeapi__peek *fields, size_t n);

#endif
