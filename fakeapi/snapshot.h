/*
 * snapshot.h - the objects of one kind as they were at a past revision,
 * rebuilt from the current state and the history: for lists with
 * resourceVersionMatch=Exact and for continue tokens, so every page of a
 * paginated list shows the same revision, as etcd's MVCC would.
 *
 * Requires the store lock; the revision must not be compacted.
 */
#ifndef FAKEAPI_SNAPSHOT_H
#define FAKEAPI_SNAPSHOT_H

#include <stdint.h>

#include "store.h"

/*
 * Visit the objects of key (in ns, or every namespace when NULL) as of
 * revision rv, in (namespace, name) order, starting strictly after
 * after_ns/after_name when given. Same callback contract as
 * fakeapi__store_scan. Returns 0 or < 0.
 */
int fakeapi__snapshot_scan(fakeapi__store *s, const char *key, const char *ns, uint64_t rv,
                           const char *after_ns, const char *after_name, fakeapi__store_scan_fn cb,
                           void *ud);

/* One object as of revision rv: 0 and its text in *text (malloc'ed),
 * 1 if it did not exist then, -1 on error. */
int fakeapi__snapshot_get(fakeapi__store *s, const char *key, const char *ns, const char *name,
                          uint64_t rv, char **text, size_t *len);

/* The revision a stale view serves (fault plans): revision, or lag behind
 * the store, never below the compacted history; 0 when that is now. */
uint64_t fakeapi__stale_rev(fakeapi__store *s, uint64_t revision, uint64_t lag);

#endif
