/*
 * rollout.h - the arithmetic of ReplicaSets and Deployments, as
 * kube-controller-manager does it (pkg/controller/deployment/util and
 * controller_utils.go): maxSurge and maxUnavailable from ints or
 * percentages, how far a new ReplicaSet may grow, proportional shares
 * when a Deployment is scaled mid-rollout, which pods a ReplicaSet deletes
 * first, revisions and template equality.
 *
 * All functions are pure (no I/O, no locks): any thread. Objects are
 * borrowed.
 */
#ifndef KC_ROLLOUT_H
#define KC_ROLLOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define KC_HASH_LABEL "pod-template-hash"
#define KC_REVISION_ANN "deployment.kubernetes.io/revision"
#define KC_REVISION_HISTORY_ANN "deployment.kubernetes.io/revision-history"
#define KC_DESIRED_ANN "deployment.kubernetes.io/desired-replicas"
#define KC_MAX_ANN "deployment.kubernetes.io/max-replicas"
#define KC_ROLLBACK_ANN "deprecated.deployment.rollback.to"
#define KC_CHANGE_CAUSE_ANN "kubernetes.io/change-cause"
#define KC_LAST_APPLIED_ANN "kubectl.kubernetes.io/last-applied-configuration"

/*
 * An IntOrString (a JSON integer, or a string "N%") scaled against total:
 * percentages round up (round_up) or down. 0, or -1 when v is neither
 * (*out untouched). NULL v is 0.
 */
int kc__intstr_scaled(const json_t *v, int64_t total, bool round_up, int64_t *out);

/* spec.replicas (default 1). */
int64_t kc__spec_replicas(const json_t *obj);

/* strategy.type is not "Recreate". */
bool kc__is_rolling(const json_t *d);
/* MaxSurge(d) and MaxUnavailable(d): the resolved fenceposts (0 and 1 when
 * both would be 0), unavailable capped at replicas; 0 for Recreate. -1 for
 * a malformed value. */
int64_t kc__max_surge(const json_t *d);
int64_t kc__max_unavailable(const json_t *d);

/* Sum of spec.replicas / status.replicas / status.availableReplicas /
 * status.readyReplicas over an array of ReplicaSets (NULL entries skipped). */
int64_t kc__sum_spec(const json_t *rss);
int64_t kc__sum_status(const json_t *rss, const char *field);

/* NewRSNewReplicas: the size the new ReplicaSet may reach now (all_rss
 * includes new_rs). -1 for a malformed maxSurge. */
int64_t kc__new_rs_new_replicas(const json_t *d, const json_t *all_rss, const json_t *new_rs);

/* GetProportion: how many replicas rs gains (or, negative, loses) when
 * to_add are spread over the active ReplicaSets and added already went. */
int64_t kc__proportion(const json_t *rs, const json_t *d, int64_t to_add, int64_t added);

/* The revision annotation as a number (0 when absent or malformed). */
int64_t kc__revision(const json_t *obj);

/* Equal pod templates once the pod-template-hash label is ignored. */
bool kc__templates_equal(const json_t *a, const json_t *b);

/* Order ReplicaSets oldest first (creationTimestamp, then name). */
int kc__cmp_oldest(const json_t *a, const json_t *b);

/*
 * Sort pods (an array of n borrowed objects) so that those a ReplicaSet
 * deletes first come first, as upstream's ActivePodsWithRanks: unassigned
 * before assigned; Pending, Unknown, Running; not ready before ready;
 * lower controller.kubernetes.io/pod-deletion-cost first; pods on nodes
 * with more related pods (related: every pod of the sibling ReplicaSets,
 * borrowed array) first; ready more recently first; more restarts first;
 * newer first; then by name, so the order is total.
 */
void kc__sort_victims(const json_t **pods, size_t n, const json_t *related);

#endif
