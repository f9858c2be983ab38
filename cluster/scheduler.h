/*
 * scheduler.h - the scheduler's pure parts: resource quantities, a pod's
 * requests, the filters (NodeUnschedulable, TaintToleration, NodeAffinity,
 * NodeResourcesFit), the LeastAllocated score and the FitError message, so
 * that they can be tested without a server.
 *
 * Pure functions: any thread; arguments borrowed.
 */
#ifndef KC_SCHEDULER_H
#define KC_SCHEDULER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* A resource.Quantity ("100m", "1.5", "16Gi", "1e3") in thousandths,
 * rounded up; false if malformed. Values beyond INT64_MAX/1000 saturate. */
bool kc__quantity_milli(const char *s, int64_t *out);

/* What a pod asks for, or a node has used or offers. The _nz fields count
 * containers without requests as 100m cpu and 200Mi memory (the score's
 * non-zero defaults). */
typedef struct kc_sched_res {
    int64_t cpu_m, mem, pods;
    int64_t cpu_m_nz, mem_nz;
} kc_sched_res;

/* The pod's requests: containers summed, the largest init container if
 * larger, plus spec.overhead; pods = 1. */
void kc__pod_requests(const json_t *pod, kc_sched_res *out);
/* The node's status.allocatable (cpu, memory, pods). */
void kc__node_allocatable(const json_t *node, kc_sched_res *out);

/* Does toleration tol tolerate taint? (v1 Toleration.ToleratesTaint) */
bool kc__tolerates(const json_t *tol, const json_t *taint);
/* Does pod (its nodeSelector and required node affinity) match node? */
bool kc__node_affinity_matches(const json_t *pod, const json_t *node);

/*
 * Run the filters for pod on node, which already has used requested. 0 if
 * it fits; otherwise 1, with the reasons ("Insufficient cpu", "node(s) had
 * untolerated taint {k: v}", ...) appended to reasons (an array of
 * strings), and *unresolvable set when preemption could not help. A node
 * that is not Ready counts as tainted node.kubernetes.io/not-ready (Ready
 * False) or node.kubernetes.io/unreachable (Unknown) with effect
 * NoSchedule, whether or not the taint has been written yet.
 */
int kc__sched_filter(const json_t *pod, const json_t *node, const kc_sched_res *used,
                     json_t *reasons, bool *unresolvable);

/* The NodeResourcesLeastAllocated score (0..100) of node for pod. */
int64_t kc__sched_score(const json_t *pod, const json_t *node, const kc_sched_res *used);

/* ---- pod anti-affinity (InterPodAffinity, required terms only) ---- */

/* The pod's podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution
 * terms (borrowed), or NULL when it has none. */
const json_t *kc__anti_affinity_terms(const json_t *pod);
/* Does term, of a pod in namespace owner_ns, select a pod in namespace ns
 * with labels? (its namespaces, else owner_ns; an empty namespaceSelector
 * means every namespace; then its labelSelector) */
bool kc__term_selects(const json_t *term, const char *owner_ns, const char *ns,
                      const json_t *labels);

/*
 * The FitError message for n_nodes nodes: reasons maps each reason to how
 * many nodes gave it, preempt each preemption verdict to its count
 * ("0/3 nodes are available: 1 node(s) had untolerated taint {a: b}, 2
 * Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is
 * not helpful for scheduling, 2 No preemption victims found for incoming
 * pod.."). A new string the caller frees; NULL if out of memory.
 */
char *kc__sched_message(size_t n_nodes, const json_t *reasons, const json_t *preempt);

#endif
