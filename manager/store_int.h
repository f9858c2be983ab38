/*
 * store_int.h - the informer's thread-safe object store (private to libctrl).
 *
 * Objects are keyed "namespace/name" ("name" for cluster-scoped objects),
 * as client-go's MetaNamespaceKeyFunc. Every object is also filed in the
 * built-in "namespace" index and in every index added with
 * ctrl__store_add_index. Objects are kept packed (packed.c; store.c
 * says why): writers hand in json_t objects, and readers get new json_t
 * objects of their own, unpacked (except by_index_shared).
 *
 * Threads: one writer at a time (the informer serialises its writers);
 * readers (get, has_rv, list, by_index, keys, len) from any thread at once. A
 * writer-preferring rwlock protects everything; index functions run with it
 * held for writing and must not call back into the store.
 *
 * Also here: a compact label-selector matcher (=, ==, !=, in, notin, key,
 * !key, and integer > and <) for reads that filter by labels.
 */
#ifndef CTRL_STORE_INT_H
#define CTRL_STORE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "ctrl/cache.h"

/* The name of the built-in index of objects by namespace. */
#define CTRL__INDEX_NAMESPACE "namespace"

/* Longest key: a 63-character namespace, '/', a 253-character name. */
#define CTRL__KEY_MAX 320

typedef struct ctrl__store ctrl__store;
typedef struct ctrl__selector ctrl__selector;

/* The key of obj into buf ("ns/name" or "name"). CTRL_ERR_ARG when obj has
 * no metadata.name or the key does not fit. */
int ctrl__store_key(const json_t *obj, char *buf, size_t len);

/* A new, empty store (CTRL_ERR_NOMEM). */
int ctrl__store_new(ctrl__store **out);
/* Free the store and its references. NULL does nothing. No reader may be
 * inside it. */
void ctrl__store_free(ctrl__store *s);

/*
 * Writers (one thread at a time).
 *
 * put: store obj (a JSON object) packed under key, which must be
 * ctrl__store_key(obj). With keep, the store also keeps a reference to obj
 * itself (store.c, "Recent objects"), so that nobody may change obj from
 * then on; without, obj is borrowed and not kept. *old (may be NULL)
 * receives the object it replaced, or NULL: a reference of the caller's,
 * but READ-ONLY (it may be an object the store keeps and shares with
 * readers): json_decref it, never change it. CTRL_ERR_ARG when obj cannot
 * be written as JSON (not an object, a string that is not UTF-8);
 * CTRL_ERR_NOMEM. On error the store and *old are unchanged.
 * remove: drop key; *old as for put (NULL when absent); CTRL_ERR_NOMEM
 * (only when *old or an index needs the object) leaves the key stored.
 */
int ctrl__store_put(ctrl__store *s, const char *key, const json_t *obj, bool keep, json_t **old);
int ctrl__store_remove(ctrl__store *s, const char *key, json_t **old);

/* Add an index and file every stored object in it (CTRL_ERR_ARG if the
 * name is taken). fn is called with the store locked, on objects unpacked
 * for it (every stored object here). Any thread. */
int ctrl__store_add_index(ctrl__store *s, const char *name, ctrl_index_fn fn, void *user);

/*
 * Readers (any thread).
 *
 * Every object handed out is new and the caller's own: changing it changes
 * nothing in the store. CTRL_ERR_NOMEM from all but len and has_rv.
 *
 * get: *out the object under key, or CTRL_ERR_NOT_FOUND.
 * has_rv: true when key is stored with resourceVersion rv (a non-empty
 * string); nothing is unpacked.
 * list: a new array of the objects in ns (NULL = all) that sel matches
 * (NULL = all), sorted by namespace then name.
 * by_index: a new array of the objects filed under value in index name,
 * sorted as list (CTRL_ERR_ARG for an unknown index).
 * keys: a new JSON object whose keys are the keys stored in ns (NULL =
 * all), in list's order, every value null; NULL when out of memory.
 */
int ctrl__store_get(ctrl__store *s, const char *key, json_t **out);
/* get_shared: as get, but *out (a reference of the caller's) is READ-ONLY:
 * the object the store keeps for key when there is one (see put), else
 * one unpacked - with keep, kept as by_index_shared keeps its objects
 * (ctrl_informer_get_shared); without, for this caller only (handing
 * objects to handlers: a resync would otherwise keep every object). */
int ctrl__store_get_shared(ctrl__store *s, const char *key, bool keep, json_t **out);
bool ctrl__store_has_rv(ctrl__store *s, const char *key, const char *rv);
int ctrl__store_list(ctrl__store *s, const char *ns, const ctrl__selector *sel, json_t **out);
int ctrl__store_by_index(ctrl__store *s, const char *name, const char *value, json_t **out);
/* by_index_shared: as by_index, but the array holds the store's shared
 * objects (each unpacked once per stored version and kept until the key is
 * replaced or removed): read-only for everyone (ctrl_informer_by_index_shared). */
int ctrl__store_by_index_shared(ctrl__store *s, const char *name, const char *value, json_t **out);
json_t *ctrl__store_keys(ctrl__store *s, const char *ns);
size_t ctrl__store_len(ctrl__store *s);

/* Parse a label selector ("" or NULL selects everything): *out a new
 * selector to free with ctrl__selector_free. CTRL_ERR_ARG when malformed. */
int ctrl__selector_parse(const char *text, ctrl__selector **out);
void ctrl__selector_free(ctrl__selector *sel);
/* True when labels (a JSON object of strings, or NULL) satisfy sel. */
bool ctrl__selector_matches(const ctrl__selector *sel, const json_t *labels);

#endif
