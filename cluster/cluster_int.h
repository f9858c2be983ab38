/*
 * cluster_int.h - what libcluster's modules share: the parsed cluster
 * document (kc_config) and the built-in controller contract.
 *
 * A built-in controller is one module (deployment.c, job.c, ...) with one
 * entry point, kc__<name>_setup(mgr, cfg), listed in builtin.c's table. The
 * setup adds ordinary libctrl controllers (ctrl_builder_*) and runnables to
 * the manager, named "kc-<name>" (kc__controller_name), and takes a
 * reference to cfg for as long as they live (kc_config_ref, released by
 * ctrl_builder_with_user_free). It must not start threads of its own: every
 * thread comes from libctrl, so the scenario scheduler sees them all.
 *
 * Rules every built-in controller follows, so that runs are deterministic
 * under the scenario scheduler:
 * - time only from ctrl_ctx_now / the manager's clock; delays as
 *   ctrl_requeue_after, never sleeps;
 * - no random numbers of its own: generated names come from the server
 *   (metadata.generateName), anything else is derived from the objects
 *   (names, uids, hashes) or from kc_config;
 * - iteration over sets in a defined order (sorted by name), never by
 *   pointer or hash-table order.
 *
 * Threads: a kc_config is immutable after kc_config_new; any thread may
 * read it.
 */
#ifndef KC_CLUSTER_INT_H
#define KC_CLUSTER_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "ctrl/manager.h"
#include "kc/cluster.h"

/* One fake Node, as the document asks for it. */
typedef struct kc_node_spec {
    char *name;
    json_t *capacity; /* {"cpu": "4", "memory": "16Gi", "pods": "110", ...} */
    json_t *labels;   /* object, never NULL */
    json_t *taints;   /* array of core/v1 Taint, never NULL */
    uint32_t pod_net; /* the node's /24: pod IPs are pod_net | 2..254 */
} kc_node_spec;

struct kc_config {
    int refs; /* atomic */
    char *base_dir;
    kc_node_spec *nodes;
    size_t n_nodes;
    uint32_t pod_cidr;    /* network address, host order */
    int pod_cidr_bits;    /* prefix length (<= 24) */
    json_t *enabled;      /* object: name -> true, for each enabled controller */
    json_t *stages;       /* the stage rules as given (array; file already read) */
    struct kc_stages *st; /* parsed by stages.c (NULL until it exists) */
    json_t *doc;          /* the whole document, for controller-specific keys */
};

/* The stage rules (stages.c): parse cfg->stages into cfg->st, and free. */
int kc__stages_parse(const json_t *rules, struct kc_stages **out, char *errbuf, size_t errlen);
void kc__stages_free(struct kc_stages *st);

/* The controller name for a built-in: "kc-<name>" into buf. */
const char *kc__controller_name(const char *name, char *buf, size_t len);

/* user_free for builders whose user pointer is the kc_config itself. */
void kc__config_unref(void *cfg);

typedef int (*kc__setup_fn)(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);

/* ---- the built-in controllers (one module each) ---- */
int kc__nodes_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__scheduler_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__kubelet_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__nodelifecycle_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__replicaset_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__deployment_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__statefulset_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__daemonset_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__job_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__cronjob_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__endpoints_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__endpointslice_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__serviceaccount_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__satoken_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__rootca_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
int kc__disruption_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);

#endif
