/*
 * typed.h - JSON values under a field-set schema (fieldpath.h's
 * fakeapi__fptype): merge, compare and removal as structured-merge-diff's
 * typed package does them. The building blocks of server-side apply
 * (ssa.c).
 *
 * Pure functions on caller-owned JSON: any thread.
 */
#ifndef FAKEAPI_TYPED_H
#define FAKEAPI_TYPED_H

#include <jansson.h>

#include "fieldpath.h"

/*
 * rhs (an apply configuration) merged into lhs (either may be NULL): struct
 * and granular map keys merged one by one, atomic values and lists replaced,
 * set lists merged by value and map lists by key, in upstream's order (lhs
 * items stay where they are, items both have follow rhs's order). A null in
 * rhs clears the key. Returns a new object (NULL on ENOMEM); neither input
 * is modified.
 */
json_t *fakeapi__typed_merge(const fakeapi__fptype *t, const json_t *lhs, const json_t *rhs);

/*
 * The paths that differ from a to b (either may be NULL): *added, *modified
 * and *removed get new sets (leaves, and containers that appeared or went).
 * Returns 0, or -1 on ENOMEM (outputs untouched).
 */
int fakeapi__typed_compare(const fakeapi__fptype *t, const json_t *a, const json_t *b,
                           fakeapi__fpset **added, fakeapi__fpset **modified,
                           fakeapi__fpset **removed);

/* Remove from v, in place, every member path of s (with what is below it). */
void fakeapi__typed_remove(const fakeapi__fptype *t, json_t *v, const fakeapi__fpset *s);

#endif
