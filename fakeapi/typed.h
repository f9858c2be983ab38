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

/*
 * As fakeapi__typed_compare, on a part of the objects: with only set, the
 * root member of that name alone; with skip set, every root member but it;
 * with no_managed, not metadata.managedFields either (as if neither object
 * had it). The sets hold what the whole comparison holds there.
 */
typedef struct fakeapi__typed_part {
    const char *only;
    const char *skip;
    bool no_managed;
} fakeapi__typed_part;

int fakeapi__typed_compare_part(const fakeapi__fptype *t, const json_t *a, const json_t *b,
                                const fakeapi__typed_part *part, fakeapi__fpset **added,
                                fakeapi__fpset **modified, fakeapi__fpset **removed);

/* Remove from v, in place, every member path of s (with what is below it). */
void fakeapi__typed_remove(const fakeapi__fptype *t, json_t *v, const fakeapi__fpset *s);

#endif
