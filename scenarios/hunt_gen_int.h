/*
 * hunt_gen_int.h - the pieces of the CRD input generator (hunt_gen.h)
 * shared between its files: the server's handling of a write, from
 * fakeapi, and JSON pointers (hunt_check.c), patterns (hunt_regex.c), value candidates and the walk
 * (hunt_gen.c), scenarios (hunt_crd.c).
 *
 * Ownership: as each prototype says; schemas are borrowed, never changed.
 * Threads: reentrant.
 */
#ifndef SCN_HUNT_GEN_INT_H
#define SCN_HUNT_GEN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "hunt_gen.h"

/* Longest string a pattern or a length bound makes us write. */
#define SCN__GEN_MAX_STRLEN 4096

/* Does s match the CRD pattern (RE2 spelling, searched, not anchored, as
 * the API server does)? 1 yes, 0 no, -1 the pattern does not compile.
 * fakeapi's matcher (fakeapi_schema_pattern_match), the server's own. */
int scn__gen_re_match(const char *pattern, const char *s);

/* Append to out (an array) up to max distinct strings that pattern's
 * construction says match it, shortest first, trying lengths near each of
 * want[0..n_want-1]; nothing for syntax outside the supported subset
 * (literals, classes, \d \w \s, ., groups, |, ? * + {n,m}, ^ $). The
 * caller checks them with scn__gen_re_match. */
void scn__gen_re_strings(const char *pattern, const size_t *want, size_t n_want, json_t *out,
                         size_t max);

/* Characters (UTF-8 code points) of a string, as the server counts length. */
size_t scn__gen_utf8_len(const char *s);

/* The stored form of obj, in place: unknown fields pruned (unless
 * preserved), nulls the schema neither allows nor defaults pruned, then
 * defaults applied (fakeapi_schema_store). */
void scn__gen_store(const json_t *schema, json_t *obj);

/* Set (value borrowed, copied in) or remove (value NULL) the field at a
 * JSON pointer in doc, as a JSON patch add/replace/remove. 0, or -1 if a
 * parent is missing or an index is out of range. */
int scn__gen_pointer_set(json_t *doc, const char *pointer, const json_t *value);

/* The value at a JSON pointer, borrowed, or NULL. */
json_t *scn__gen_pointer_get(const json_t *doc, const char *pointer);

/* The schema of property k of object schema s: a declared property, else
 * additionalProperties when it is a schema; NULL otherwise. */
const json_t *scn__gen_child_schema(const json_t *s, const char *k);

#endif
