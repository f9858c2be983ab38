/*
 * workload.h - what the pod-owning built-in controllers (Job, StatefulSet,
 * DaemonSet) share: the Pod informer with an index on the controller
 * owner's uid, expectations counted down by its events, pod writes that
 * keep those expectations honest, and writing a status only when it
 * changed.
 *
 * Threads: kc__wl_setup before the manager starts (setup thread); the
 * informer handler it installs runs on the Pod informer's thread; every
 * other function from reconcile workers, any number at once (the client,
 * the cache and kc_expect are thread-safe).
 */
#ifndef KC_WORKLOAD_H
#define KC_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "cluster_int.h"
#include "ctrl/controller.h"
#include "expectations.h"

/* The index of pods by their controller owner's uid (any kind). */
#define KC__WL_OWNER_INDEX "kc.workload/controller-uid"

/* One pod-owning controller: its owner kind and its expectations. Owned by
 * the controller (the builder's user pointer), freed by kc__wl_free. */
typedef struct kc_wl {
    kc_config *cfg;    /* a reference */
    kc_expect *expect; /* keyed "namespace/name" of the owner */
    const char *kind;  /* "Job", "StatefulSet", "DaemonSet" (static) */
    const char *group; /* "batch", "apps" (static) */
    void *extra;       /* the controller's own state (not freed here) */
} kc_wl;

/*
 * Make a kc_wl for owner kind (static strings) with a reference to cfg, set
 * up the Pod informer's owner index (once per cache) and a handler that
 * counts pods of that owner kind as created (add) or deleted (a
 * deletionTimestamp appearing, or a delete of a pod without one) against
 * the owner's expectations. Returns 0 or a negative code; *out is freed by
 * kc__wl_free (ctrl_builder_with_user_free).
 */
int kc__wl_setup(ctrl_manager *mgr, kc_config *cfg, const char *group, const char *kind,
                 kc_wl **out);
void kc__wl_free(void *wl);

/* The owner's key "ns/name" into buf. */
const char *kc__wl_key(const char *ns, const char *name, char *buf, size_t len);

/* The pods whose controller owner has uid, from the cache, sorted by name:
 * a new array. 0 or a negative code. */
int kc__wl_pods(ctrl_ctx *ctx, const char *uid, json_t **out);

/* Index objects of apiVersion/kind in the manager's cache by their
 * controller owner's uid (setup time; a second call is harmless). */
int kc__wl_index(ctrl_manager *mgr, const char *api_version, const char *kind);
/* The cached objects of that kind whose controller owner has uid, sorted
 * by namespace and name: a new array. 0 or a negative code. */
int kc__wl_owned(ctrl_ctx *ctx, const char *api_version, const char *kind, const char *uid,
                 json_t **out);

/*
 * requeue_after(delay_ns), delay measured from started_wall (the wall time
 * the reconcile read at its start): the time the reconcile itself took is
 * taken off, so a clock that moved meanwhile (a slow write, a virtual
 * clock's jump) does not push the next sync late. At least 1 ms.
 */
ctrl_result kc__wl_after(ctrl_ctx *ctx, int64_t started_wall, int64_t delay_ns);

/* Wall-clock now of the manager's clock (nanoseconds since the epoch). */
int64_t kc__wl_wall(ctrl_ctx *ctx);

/*
 * Create pod (borrowed) after the caller raised the expectations; a failed
 * create counts its expectation down. *out (may be NULL) the created pod.
 * 409/AlreadyExists of a generated name is retried a few times.
 */
int kc__wl_create(ctrl_ctx *ctx, kc_wl *wl, const char *key, const json_t *pod, json_t **out);
/*
 * Delete pod (borrowed; with a uid precondition) after the caller raised
 * the expectations; a failed delete counts its expectation down. A pod
 * already gone (404, or another uid: 409) counts as deleted and is 0.
 */
int kc__wl_delete(ctrl_ctx *ctx, kc_wl *wl, const char *key, const json_t *pod);

/*
 * Write updated's status (PUT /status with updated's resourceVersion) when
 * it differs from orig's. *written (may be NULL) the server's answer, or a
 * copy of orig when nothing was written. 0 or the client's error (409 when
 * the object changed since it was read).
 */
int kc__wl_write_status(ctrl_ctx *ctx, const json_t *orig, const json_t *updated, json_t **written);

/* Set status.<field> to integer v (or remove it when v is 0 and omit_zero). */
void kc__wl_set_int(json_t *obj, const char *field, int64_t v, bool omit_zero);

/* Record an Event about obj (type "Normal"/"Warning"). */
void kc__wl_event(ctrl_ctx *ctx, const json_t *obj, const char *type, const char *reason,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Pods sorted for scale-down as upstream's ActivePods ordering: unassigned
 * before assigned, Pending before Unknown before Running, not ready before
 * ready, then newer before older (creationTimestamp), then by name. Sorts
 * the array in place. */
void kc__wl_sort_for_deletion(json_t *pods);

#endif
