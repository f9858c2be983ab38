/*
 * jsonfast.h - json_loadb for the texts the request path parses most: a
 * request's body and the store's own compact text.
 *
 * The answer is the one json_loadb(buf, len, flags, err) gives: the parse
 * builds the same document (the same members in the same order, the same
 * strings and integers) when the text is plain (no \u escape, no number
 * that is not a short integer, no duplicate key when they are refused, not
 * deeper than 512), and hands everything else, errors included, to jansson.
 * jansson's own parser reads a character at a time through a stream and a
 * growing token buffer: about 200 instructions a byte, a tenth of an
 * update's cost. Reentrant; any thread.
 */
#ifndef FAKEAPI_JSONFAST_H
#define FAKEAPI_JSONFAST_H

#include <stddef.h>
#include <jansson.h>

/* json_loadb with flags 0 or JSON_REJECT_DUPLICATES (any other flag: jansson
 * parses). A new reference, or NULL with *err set (err may be NULL). */
json_t *fakeapi__json_loadb(const char *buf, size_t len, size_t flags, json_error_t *err);

#endif
