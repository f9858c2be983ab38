/*
 * admission.h - admission webhooks: the server calls the webhooks that
 * MutatingWebhookConfiguration and ValidatingWebhookConfiguration objects
 * (admissionregistration.k8s.io/v1) name, as kube-apiserver's webhook
 * dispatchers do (docs/fakeapi.md, "Admission webhooks").
 *
 * A write verb calls fakeapi__admission_mutate and then
 * fakeapi__admission_validate with the object it is about to store, on its
 * own (connection) thread and WITHOUT the store lock: a webhook may take up
 * to its timeoutSeconds to answer, and the store must not wait for it.
 * Each call takes the store lock briefly itself (the namespace's labels, a
 * uid from the seeded generator, a Service's endpoints).
 *
 * The configurations are cached per server and reloaded only after a write
 * to either kind (srv->webhooks_gen, bumped by txn.c), so a server with no
 * webhook configured pays one atomic load per write.
 *
 * Thread-safety: every function may be called from any thread, never with
 * the store lock held.
 */
#ifndef FAKEAPI_ADMISSION_H
#define FAKEAPI_ADMISSION_H

#include <stdbool.h>
#include <jansson.h>

#include "verbs.h"

typedef struct fakeapi__admission fakeapi__admission;

/* The per-server cache of webhook configurations. NULL on ENOMEM. */
fakeapi__admission *fakeapi__admission_new(void);
/* NULL does nothing. */
void fakeapi__admission_free(fakeapi__admission *a);

/* Whether the store holds at least one webhook configuration with a
 * webhook in it. Cheap when nothing changed since the last call. */
bool fakeapi__admission_active(fakeapi_server *srv);

/*
 * Whether a store key is one of the two configuration kinds' (txn.c bumps
 * srv->webhooks_gen on a commit that touched one).
 */
bool fakeapi__admission_key(const char *store_key);

/*
 * Run the mutating webhooks that match the request c names, in order
 * (configurations by name, then webhooks in their order; reinvocationPolicy
 * IfNeeded webhooks once more when a later one changed the object).
 * op is "CREATE", "UPDATE" or "DELETE". *obj is the new object (NULL for
 * DELETE): on success it may be replaced by the patched object (the old
 * reference dropped) and *changed says whether it was. old is the stored
 * object (NULL for CREATE), borrowed. Returns 0 (admitted), or -1 having
 * answered c->resp with the Status kube-apiserver answers (a denial, a
 * failing webhook under failurePolicy Fail, a webhook that cannot run a dry
 * run). Warnings the webhooks return are added to c->resp.
 */
int fakeapi__admission_mutate(fakeapi__ctx *c, const char *op, json_t **obj, const json_t *old,
                              bool *changed);

/* The validating webhooks, likewise (obj NULL for DELETE, both borrowed). */
int fakeapi__admission_validate(fakeapi__ctx *c, const char *op, const json_t *obj,
                                const json_t *old);

#endif
