/*
 * nodes.h - what the simulated nodes' modules share (nodes.c writes the
 * Nodes; the scheduler, the kubelet and the node lifecycle controller read
 * them): the NotReady switch, a node's index and addresses, its readiness.
 *
 * Pure functions: any thread; arguments borrowed.
 */
#ifndef KC_NODES_H
#define KC_NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "cluster_int.h"
#include "ctrl/cache.h"

/* A node annotated with this set to "true" goes NotReady: the nodes
 * controller stops its lease and sets its conditions Unknown
 * (NodeStatusUnknown), as when a kubelet stops posting status. Removing it
 * (or any other value) brings the node back. */
#define KC_NOT_READY_ANNOTATION "kube-harness.io/not-ready"

/* The namespace of node Leases, and how often they are renewed. */
#define KC_NODE_LEASE_NS "kube-node-lease"
/* Default: made once and not renewed (nothing here reads renewals, and a
 * simulated day would cost 8,640 writes a node); nodeLeaseRenew: 10s in the
 * cluster document renews as a kubelet does. */
#define KC_NODE_LEASE_RENEW 0
#define KC_NODE_LEASE_DURATION_S 40

/* The index of the configured node named name, or -1. */
int kc__node_index(const kc_config *cfg, const char *name);
/* The InternalIP of configured node index ("172.18.x.y"), into buf. */
void kc__node_internal_ip(size_t index, char *buf, size_t len);
/* A dotted IPv4 address from a host-order one, into buf (>= 16 bytes). */
void kc__ipv4_string(uint32_t addr, char *buf, size_t len);
/* status.conditions[Ready].status is "True". */
bool kc__node_ready(const json_t *node);
/* The Ready condition's status ("True", "False", "Unknown"; "Unknown" when
 * there is none). */
const char *kc__node_ready_status(const json_t *node);

/* The Pod informer of cache, with an index of pods by spec.nodeName
 * (KC_POD_NODE_INDEX; added once, whoever asks first). */
#define KC_POD_NODE_INDEX "kc.spec.nodeName"
int kc__pod_node_index(ctrl_cache *cache, ctrl_informer **out);

#endif
