/*
 * jsonscan.h - a few string members of a JSON text, read without building
 * the document (json_loadb): the trace needs an event's type, name,
 * namespace and resourceVersion, and a response's resourceVersion, for every
 * line, and parsing whole objects (discovery documents, lists) for them was
 * a tenth of a scenario run's instructions.
 *
 * The answer is the one json_loadb (flags 0) followed by json_object_get and
 * json_string_value would give, or the scan gives up (-1) and the caller
 * asks jansson: the scan validates what it reads (string escapes, UTF-8,
 * numbers, literals, nothing after the value) and gives up on anything it
 * does not answer exactly as jansson would (a backslash in a key or in a
 * wanted string, a lone surrogate escape, an exponent or a long number, deep
 * nesting, a top level that is not an object). Reentrant; any thread.
 */
#ifndef FAKEAPI_JSONSCAN_H
#define FAKEAPI_JSONSCAN_H

#include <stdbool.h>
#include <stddef.h>

/* One wanted member: its path of keys from the top-level object (1 to 3
 * keys, NULL-terminated). Filled by the scan: found (the path leads to a
 * string), and then the string's bytes (not NUL-terminated, pointing into
 * the text). */
typedef struct fakeapi__jscan_want {
    const char *path[4];
    bool found;
    const char *str;
    size_t len;
} fakeapi__jscan_want;

/* Scan text for the wanted members. 0 when answered, -1 when the caller
 * must parse the text itself. */
int fakeapi__json_scan(const char *text, size_t len, fakeapi__jscan_want *want, size_t n);

/* The same for a text this server wrote itself (kh_json_dump_compact of a
 * document: valid, no key repeated in an object), which is all a response
 * body or a watch line is: the scan stops once every want is settled (found,
 * or the member its path leads through has been read whole) instead of
 * reading (and checking) the rest. A wanted member an object repeats, which
 * no such text has, would be taken from its first place, not its last. */
int fakeapi__json_scan_own(const char *text, size_t len, fakeapi__jscan_want *want, size_t n);

#endif
