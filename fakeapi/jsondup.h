/*
 * jsondup.h - the duplicate keys of a JSON text, named by their paths as
 * strict decoding names them ("spec.replicas", "items[0].name"): Go's
 * decoder keeps the last of them, and fieldValidation=Strict refuses them.
 *
 * Only a text jansson already parsed (with JSON_REJECT_DUPLICATES failing)
 * is scanned, so the scanner assumes well-formed JSON and stops at anything
 * else. Reentrant; any thread.
 */
#ifndef FAKEAPI_JSONDUP_H
#define FAKEAPI_JSONDUP_H

#include <stddef.h>
#include <jansson.h>

/* Append the path of every repeated key of text, in document order, to out
 * (an array of strings). Returns how many; -1 on ENOMEM. */
int fakeapi__json_duplicates(const char *text, size_t len, json_t *out);

#endif
