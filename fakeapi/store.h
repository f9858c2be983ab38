/*
 * store.h - objects and their history in SQLite.
 *
 * Three tables, as etcd would hold them: objects (the current state, keyed by
 * store key, namespace and name), events (append-only, keyed by
 * resourceVersion: the watch history), owners (owner uid -> dependent, for
 * garbage collection). One global revision counter, persisted in a meta
 * table: a file-backed store restarts where it stopped.
 *
 * DESIGN: one mutex, the store lock, serialises every use of the SQLite
 * connection. Callers take it with fakeapi__store_lock() around a whole
 * request's reads and writes, so a write transaction (begin, gets, puts,
 * events, commit) is atomic with respect to every other request and to watch
 * registration. Every other function requires the lock held.
 * Objects are stored as compact JSON text; labels separately, so label
 * selection never parses whole objects.
 */
#ifndef FAKEAPI_STORE_H
#define FAKEAPI_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

typedef struct fakeapi__store fakeapi__store;

enum { FAKEAPI__EV_ADDED = 1, FAKEAPI__EV_MODIFIED = 2, FAKEAPI__EV_DELETED = 3 };

/* Open (creating tables as needed). path NULL = in memory. 0 or -1 + err. */
int fakeapi__store_open(const char *path, fakeapi__store **out, char *err, size_t errlen);
void fakeapi__store_close(fakeapi__store *s);

void fakeapi__store_lock(fakeapi__store *s);
void fakeapi__store_unlock(fakeapi__store *s);

/* Latest committed revision, and the oldest revision still in history - 1. */
uint64_t fakeapi__store_rev(fakeapi__store *s);
uint64_t fakeapi__store_compacted(fakeapi__store *s);

/* A write transaction. rollback also restores the revision counter. */
int fakeapi__store_begin(fakeapi__store *s);
int fakeapi__store_commit(fakeapi__store *s);
void fakeapi__store_rollback(fakeapi__store *s);
/* Take the next revision (inside a transaction). */
uint64_t fakeapi__store_next_rev(fakeapi__store *s);

/*
 * Read one object. Returns 0 and a new value in *out, 1 if absent, -1 on a
 * storage error. get_text hands over the stored text instead (malloc'ed).
 */
int fakeapi__store_get(fakeapi__store *s, const char *key, const char *ns, const char *name,
                       json_t **out);
int fakeapi__store_get_text(fakeapi__store *s, const char *key, const char *ns, const char *name,
                            char **text, size_t *len);

/* The same for a reader that changes nothing in *out: the kept tree itself
 * (a new reference) when there is one, else a fresh parse. */
int fakeapi__store_get_shared(fakeapi__store *s, const char *key, const char *ns, const char *name,
                              json_t **out);

/*
 * Keep obj (a reference is taken) and its stored text (copied) as the
 * parsed state of an object, for fakeapi__store_get to copy instead of
 * parsing the stored text. Only after a commit, with obj exactly what the
 * committed text parses to, and never modified afterwards. Any put or
 * delete of the object forgets it again.
 */
void fakeapi__store_keep(fakeapi__store *s, const char *key, const char *ns, const char *name,
                         json_t *obj, const char *text, size_t len);

/* A copy of the kept text of an object if obj is its kept tree (from
 * fakeapi__store_get_shared), else NULL: obj's text without serialising it. */
char *fakeapi__store_kept_text(fakeapi__store *s, const char *key, const char *ns, const char *name,
                               const json_t *obj, size_t *len);

/* Whether an object exists without reading it: 0 live, 1 being deleted
 * (deletionTimestamp set), 2 absent, -1 on error. */
int fakeapi__store_state(fakeapi__store *s, const char *key, const char *ns, const char *name);

/* Insert or replace an object from its JSON text. labels may be NULL. */
int fakeapi__store_put(fakeapi__store *s, const char *key, const char *ns, const char *name,
                       const char *uid, uint64_t rv, const char *labels, const char *text);
int fakeapi__store_del(fakeapi__store *s, const char *key, const char *ns, const char *name);

/* Append a history event. prev (the previous state's text) may be NULL. */
int fakeapi__store_add_event(fakeapi__store *s, uint64_t rv, int type, const char *key,
                             const char *ns, const char *name, const char *text, const char *prev);

/*
 * Visit objects of key in (namespace, name) order. ns NULL = every namespace.
 * after_ns/after_name (may be NULL) start strictly after that position
 * (continue tokens). cb returns 0 to go on, 1 to stop, < 0 to abort (returned).
 */
typedef int (*fakeapi__store_scan_fn)(void *ud, const char *ns, const char *name,
                                      const char *labels, const char *text, size_t len);
int fakeapi__store_scan(fakeapi__store *s, const char *key, const char *ns, const char *after_ns,
                        const char *after_name, fakeapi__store_scan_fn cb, void *ud);

/* Append every object of key (in ns, or all namespaces when NULL), parsed,
 * to arr. 0 or -1. */
int fakeapi__store_load_all(fakeapi__store *s, const char *key, const char *ns, json_t *arr);

/* Count objects of key (in ns, or all namespaces when NULL). */
long fakeapi__store_count(fakeapi__store *s, const char *key, const char *ns);

/*
 * Visit history events of key (NULL = every key) with rv > after, in order.
 * text is the object's state after the event (for DELETED: its last state),
 * prev the state before (NULL for ADDED).
 */
typedef int (*fakeapi__store_hist_fn)(void *ud, uint64_t rv, int type, const char *key,
                                      const char *ns, const char *name, const char *text,
                                      const char *prev);
int fakeapi__store_history(fakeapi__store *s, const char *key, uint64_t after,
                           fakeapi__store_hist_fn cb, void *ud);

/* The clock time (ns) stamped on events appended from now on. */
void fakeapi__store_stamp(fakeapi__store *s, int64_t ts);
/* The newest revision whose event is older than ts (0 if none): compaction by age. */
uint64_t fakeapi__store_rev_before(fakeapi__store *s, int64_t ts);

/* Drop history events with rv <= upto; later lookups below it are 410. */
int fakeapi__store_compact(fakeapi__store *s, uint64_t upto);
/* The same taking the store lock, upto 0 = the latest revision. */
int fakeapi__store_compact_locking(fakeapi__store *s, uint64_t upto);
/* fakeapi__store_rev taking the store lock. */
uint64_t fakeapi__store_rev_locking(fakeapi__store *s);
/* Number of history events kept. */
long fakeapi__store_history_len(fakeapi__store *s);

/* Replace the owner uids (a JSON array of strings, may be NULL) recorded for
 * an object, and list the dependents of an owner uid. */
int fakeapi__store_set_owners(fakeapi__store *s, const char *key, const char *ns, const char *name,
                              const json_t *owner_uids);
typedef int (*fakeapi__store_dep_fn)(void *ud, const char *key, const char *ns, const char *name);
int fakeapi__store_dependents(fakeapi__store *s, const char *owner_uid, fakeapi__store_dep_fn cb,
                              void *ud);

/* Visit objects whose metadata.deletionTimestamp is set (finalizers pending). */
int fakeapi__store_deleting(fakeapi__store *s, fakeapi__store_dep_fn cb, void *ud);
/* Visit objects that name an owner uid no object has (candidates for GC). */
int fakeapi__store_orphans(fakeapi__store *s, fakeapi__store_dep_fn cb, void *ud);

/* 1 if an object with this uid exists, 0 if not, -1 on error. */
int fakeapi__store_uid_exists(fakeapi__store *s, const char *uid);
/* The same, for an object that is not being deleted (no deletionTimestamp). */
int fakeapi__store_uid_live(fakeapi__store *s, const char *uid);

/* The last SQLite error message (borrowed). */
const char *fakeapi__store_errmsg(fakeapi__store *s);

#endif
