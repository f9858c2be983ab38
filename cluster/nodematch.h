/*
 * nodematch.h - does a pod fit a node, for the DaemonSet controller's
 * "should this node run a daemon pod" (and for anyone else who needs the
 * same simple cases): nodeSelector, required node affinity (matchExpressions
 * on labels, matchFields on metadata.name), taints against tolerations.
 *
 * Pure functions on borrowed objects: any thread.
 */
#ifndef KC_NODEMATCH_H
#define KC_NODEMATCH_H

#include <stdbool.h>
#include <jansson.h>

/* Does node satisfy pod_spec's nodeSelector and required node affinity? */
bool kc__node_fits_selectors(const json_t *pod_spec, const json_t *node);

/* Does some toleration in tolerations (an array; NULL = none) tolerate
 * taint (core/v1 Taint)? */
bool kc__tolerations_allow(const json_t *tolerations, const json_t *taint);

/* Are all of node's taints with effect (e.g. "NoSchedule") tolerated? */
bool kc__tolerates_taints(const json_t *tolerations, const json_t *node, const char *effect);

/* The node a pod is for: spec.nodeName, else the value of a
 * required node affinity term's matchFields metadata.name In [value]
 * (how a DaemonSet pins its pods before the scheduler binds them), else
 * NULL. Borrowed from pod. */
const char *kc__pod_target_node(const json_t *pod);

#endif
