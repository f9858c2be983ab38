/*
 * ssa.h - server-side apply and field ownership (metadata.managedFields).
 *
 * fakeapi__ssa_apply merges an apply configuration into the live object the
 * way structured-merge-diff's Updater.Apply does: lists by their type
 * (atomic replaced whole, sets merged by value, map lists by key), granular
 * maps and structs merged key by key, atomic ones replaced; fields the
 * applier owned and no longer sends removed unless another manager owns
 * them; conflicts with other managers (409, upstream's message and causes)
 * unless forced. fakeapi__ssa_update records a non-apply write (create,
 * update, merge/JSON/strategic patch): the fields it changed move to its
 * manager. Both read and write metadata.managedFields as the real server
 * does: one entry per (manager, operation, subresource), fieldsV1, the
 * apiVersion, the time of the last change; `before-first-apply` for an
 * object that had none; the client-side-apply annotation upgrade for the
 * "kubectl" manager; managedFields reset by `[]` or `[{}]`, and an invalid
 * list ignored.
 *
 * Pure functions on caller-owned JSON: any thread.
 */
#ifndef FAKEAPI_SSA_H
#define FAKEAPI_SSA_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "fieldpath.h"

struct fakeapi__resource;

/* Which part of the object a write owns (upstream's reset fields). */
typedef enum fakeapi__ssa_scope {
    FAKEAPI__SSA_ALL = 0,     /* no status subresource: everything */
    FAKEAPI__SSA_NO_STATUS,   /* the main resource of a kind with /status: all but .status */
    FAKEAPI__SSA_STATUS_ONLY, /* the /status subresource: only .status */
} fakeapi__ssa_scope;

typedef struct fakeapi__ssa_opts {
    fakeapi__fptype type;    /* the kind's schema */
    const char *api_version; /* "v1", "apps/v1": recorded in the entries */
    const char *subresource; /* NULL or "" for the main resource, "status", "scale" */
    const char *now;         /* the server clock, RFC 3339 */
    fakeapi__ssa_scope scope;
} fakeapi__ssa_opts;

/* What went wrong: an HTTP status, a Kubernetes reason, a message, causes. */
typedef struct fakeapi__ssa_err {
    int code;           /* 400, 409, 422, 500 */
    const char *reason; /* "BadRequest", "Conflict", "Invalid", "InternalError" */
    char message[4096];
    json_t *causes; /* conflicts: [{reason, message, field}], owned; else NULL */
    bool typed;     /* the configuration does not fit the schema: message is the detail */
} fakeapi__ssa_err;

void fakeapi__ssa_err_deinit(fakeapi__ssa_err *e);

/*
 * The schema of a served kind: the built-in type tables' message, a CRD's
 * openAPIV3Schema, or the deduced schema. Borrows from res.
 */
fakeapi__fptype fakeapi__ssa_type_of(const struct fakeapi__resource *res);

/*
 * The options of a write to res (sub: NULL, "", "status" or "scale") at
 * time now (borrowed): the kind's schema and version, and the scope its
 * status subresource gives.
 */
fakeapi__ssa_opts fakeapi__ssa_opts_for(const struct fakeapi__resource *res, const char *sub,
                                        const char *now);

/*
 * The manager a request writes as: the fieldManager parameter when given,
 * else the User-Agent up to its first '/', without unprintable characters,
 * cut at 128 bytes (upstream's prefixFromUserAgent). Writes into buf.
 */
void fakeapi__ssa_manager_name(const char *field_manager, const char *user_agent, char *buf,
                               size_t len);

/*
 * Apply config as manager. live is the stored object with its managedFields
 * (NULL when it does not exist). On success *out gets a new object: the
 * merge, with metadata.managedFields set, and *changed whether anything
 * (object or ownership) differs from live. Returns 0, or -1 with err filled
 * in: 409 Conflict with causes, 400 for managedFields in the configuration,
 * 400 with err->typed for a configuration that does not fit the schema's
 * list keys (duplicates, missing keys). Neither input is modified.
 */
int fakeapi__ssa_apply(const fakeapi__ssa_opts *o, const json_t *live, const json_t *config,
                       const char *manager, bool force, json_t **out, bool *changed,
                       fakeapi__ssa_err *err);

/*
 * Record a non-apply write from live (NULL on create) to next by manager:
 * sets next's metadata.managedFields (next may carry managedFields of its
 * own: a valid non-empty list is taken as the starting point, `[]` or
 * `[{}]` clears them, anything else falls back to live's). Never fails on
 * content: an object that does not fit the schema gets no managedFields, as
 * upstream's UpdateNoErrors does. Returns 0, or -1 on ENOMEM.
 */
int fakeapi__ssa_update(const fakeapi__ssa_opts *o, const json_t *live, json_t *next,
                        const char *manager);

#endif
