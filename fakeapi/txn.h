/*
 * txn.h - one atomic write: objects, history events, watch notifications.
 *
 * begin takes the store lock and opens a SQLite transaction; put/remove
 * stage writes, each taking the next resourceVersion; commit makes them
 * durable, hands their events to the watch hub in revision order, wakes the
 * garbage collector when something was deleted or started deleting, and
 * drops the lock. abort rolls everything back: nothing was written, no event
 * was seen (STYLE: on error, nothing changed).
 *
 * A txn belongs to one thread from begin to commit/abort.
 */
#ifndef FAKEAPI_TXN_H
#define FAKEAPI_TXN_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "registry.h"
#include "server_int.h"

typedef struct fakeapi__event fakeapi__event;

typedef struct fakeapi__txn {
    fakeapi_server *srv;
    fakeapi__event **events;
    size_t n, cap;
    bool gc_wake;
    bool failed;
    /* Set by the caller of a dry run (?dryRun=All), which aborts the txn in
     * the end: what a write would change outside the store (the registry's
     * kinds) must then not change. */
    bool dry_run;
    json_t *keep; /* fakeapi__txn_keep's object (borrowed), NULL if none */
} fakeapi__txn;

/* Lock the store and BEGIN. Returns 0 or -1 (nothing held on failure). */
int fakeapi__txn_begin(fakeapi__txn *t, fakeapi_server *srv);

/*
 * Store obj (created or updated) under res. Sets metadata.resourceVersion to
 * the new revision in obj. prev is the stored state before (NULL for a
 * create). The txn keeps a reference to obj and to prev: neither may be
 * modified afterwards. Returns 0 or -1.
 */
int fakeapi__txn_put(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj, json_t *prev);

/* Remove obj (its last stored state), emitting DELETED with a new revision
 * set in obj's metadata. Same reference rules as put. */
int fakeapi__txn_remove(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj);

/* A copy of the JSON text the last put or remove stored (what the client
 * gets back), malloc'ed; NULL if nothing was staged. Saves serialising the
 * same object twice. */
char *fakeapi__txn_last_text(const fakeapi__txn *t, size_t *len);

/* The same if the last put stored obj itself (not a converted copy), else NULL. */
char *fakeapi__txn_text_of(const fakeapi__txn *t, const json_t *obj, size_t *len);

/* obj, put in t and not to be modified again by anyone (the answer is
 * written from the stored text), may stay in the store parsed once t
 * commits (fakeapi__store_keep). */
void fakeapi__txn_keep(fakeapi__txn *t, json_t *obj);

/* Ask the garbage collector to look again after commit. */
void fakeapi__txn_wake_gc(fakeapi__txn *t);

/* COMMIT, publish, unlock. On failure rolls back and returns -1. */
int fakeapi__txn_commit(fakeapi__txn *t);

/* ROLLBACK and unlock; the staged events are dropped. */
void fakeapi__txn_abort(fakeapi__txn *t);

#endif
