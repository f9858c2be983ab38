/*
 * verbs.h - the API verbs on one resource, shared by the verb modules
 * (verbs_read.c, verbs_write.c, verbs_delete.c, verbs_sub.c).
 *
 * Each fakeapi__do_* answers the request in c->resp. They run on the
 * calling (connection) thread and take the store lock themselves, through
 * txn.h for writes. Nothing is written unless the whole request succeeds.
 */
#ifndef FAKEAPI_VERBS_H
#define FAKEAPI_VERBS_H

#include <stdint.h>
#include <jansson.h>

#include "http.h"
#include "registry.h"
#include "router.h"
#include "server_int.h"
#include "txn.h"

typedef struct fakeapi__ctx {
    fakeapi_server *srv;
    const fakeapi__req *req;
    fakeapi__resp *resp;
    const fakeapi__route *rt;
    fakeapi__resource *res;
    const char *ns; /* "" for cluster-scoped kinds, NULL for every namespace */
    /* A create whose name came from generateName: admission reviews carry
     * the name the request had (none), as kube-apiserver's do. */
    bool generated_name;
} fakeapi__ctx;

void fakeapi__do_get(fakeapi__ctx *c);
void fakeapi__do_list(fakeapi__ctx *c);
void fakeapi__do_create(fakeapi__ctx *c);
void fakeapi__do_update(fakeapi__ctx *c);
void fakeapi__do_patch(fakeapi__ctx *c);
void fakeapi__do_delete(fakeapi__ctx *c);
void fakeapi__do_deletecollection(fakeapi__ctx *c);
/* /status and /scale: GET, PUT, PATCH. */
void fakeapi__do_subresource(fakeapi__ctx *c);

/* verbs_pod.c: pods/eviction, pods/binding, pods/log, and a 400 for the
 * subresources that need a kubelet (exec, attach, portforward, proxy). */
void fakeapi__do_pod_sub(fakeapi__ctx *c);
/* POST .../namespaces/<ns>/bindings (verbs_pod.c). */
void fakeapi__do_binding(fakeapi__ctx *c);
/*
 * A field of the wrong JSON type: answers 400 as the API server's decoder
 * words it ("TokenRequest in version "v1" cannot be handled as a
 * TokenRequest: json: cannot unmarshal string into Go struct field
 * TokenRequestSpec.spec.audiences of type []string") and returns false.
 * Absent or null v, or v of type want: true. (verbs_pod.c)
 */
bool fakeapi__typed(fakeapi__ctx *c, const char *kind, const char *gostruct, const char *field,
                    const json_t *v, json_type want, const char *gotype);
/* review.c: POST on a create-only kind (the reviews, bindings). */
void fakeapi__do_review(fakeapi__ctx *c);
/* review.c: POST serviceaccounts/<name>/token. */
void fakeapi__do_token_request(fakeapi__ctx *c);

/* Status details {name, group, kind: plural} as a new object. */
json_t *fakeapi__details(const fakeapi__resource *res, const char *name);
/* 404 `pods "x" not found`. */
void fakeapi__not_found(fakeapi__ctx *c, const char *name);
/* 500 for a storage failure (the message names SQLite's error). */
void fakeapi__storage_error(fakeapi__ctx *c);

/* Parse the request body as a JSON object (YAML accepted too). On failure
 * answers 400 and returns NULL. */
json_t *fakeapi__body_object(fakeapi__ctx *c);

/*
 * The shared end of every update path (PUT, PATCH, /status, /scale, apply):
 * cur is the stored object, next the requested new state (stolen). sub is
 * NULL, "status" or "scale". Checks, stamps and writes inside t, commits (or
 * aborts on any failure) and answers 200 (or 201 when created is true).
 */
void fakeapi__finish_update(fakeapi__ctx *c, fakeapi__txn *t, json_t *cur, json_t *next,
                            const char *sub);

/* Prepare and store a new object (create and create-on-patch) inside t;
 * commits and answers 201. obj is stolen. */
void fakeapi__finish_create(fakeapi__ctx *c, fakeapi__txn *t, json_t *obj);

/* Delete one stored object inside t, honouring finalizers and the
 * propagation policy. Returns 1 if it is gone now, 0 if it only started
 * deleting (finalizers), -1 on failure (t marked failed). obj is borrowed and
 * updated to the state written. */
int fakeapi__delete_in_txn(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj,
                           const char *policy);
/* The same with DeleteOptions.gracePeriodSeconds (grace < 0: not given).
 * A Pod that is bound and not terminal is deleted gracefully, as the API
 * server does: with an effective grace period (grace, else the pod's
 * spec.terminationGracePeriodSeconds, else 30) above 0 it stays, with
 * deletionTimestamp = now + grace and deletionGracePeriodSeconds = grace,
 * until a delete with grace 0 (its kubelet's) removes it; a later delete
 * with a shorter grace shortens it. Returns as fakeapi__delete_in_txn. */
#define FAKEAPI__GRACE_UNSET INT64_MIN
int fakeapi__delete_in_txn_grace(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj,
                                 const char *policy, int64_t grace);

/* True when ?dryRun=All. */
bool fakeapi__dry_run(const fakeapi__ctx *c);

#endif
