/*
 * kc/cluster.h - a cluster that moves: the built-in controllers of
 * kube-controller-manager, a scheduler, simulated nodes and a kubelet
 * stand-in, written on libctrl (libcluster).
 *
 * fakeapi alone is an API server with nothing behind it, like envtest: a
 * Deployment never gets a ReplicaSet and a Pod never runs. libcluster adds
 * the control loops of a real cluster as ordinary libctrl controllers, so
 * they run wherever a manager runs: beside `fakeapi serve` (--cluster), in a
 * scenario (the `cluster:` key, under the virtual clock and the seeded
 * scheduler), or in a Criterion test with kc_cluster_start. It talks to the
 * API server over HTTP like any controller, and never links libfakeapi.
 *
 * The cluster document (YAML or JSON; every key optional):
 *
 *   nodes: 3                      # how many fake Nodes (default 3), or a list
 *                                 # of node specs: [{name, cpu, memory, pods,
 *                                 #   labels, taints}, ...]
 *   node: {cpu: "4", memory: 16Gi, pods: 110, labels: {..}, taints: [..]}
 *                                 # the template of counted nodes
 *   podCIDR: 10.244.0.0/16        # node i gets the i-th /24 of it
 *   controllers: [deployment, ..] # the built-in controllers to run (default:
 *                                 # all of kc_controller_names())
 *   disable: [job]                # or all but these
 *   stages: FILE | [rule, ...]    # pod lifecycle rules (docs/cluster.md)
 *   caCert: PEM | FILE            # the CA published in kube-root-ca.crt and
 *                                 # token Secrets (default: a placeholder)
 *   nodeLeaseRenew: 10s           # renew node Leases on this interval (default:
 *                                 # made once, never renewed)
 *
 * Threads: kc_config_* from any one thread; a kc_config is immutable once
 * made and may be shared by several managers (reference-counted).
 * kc_setup before the manager starts, from the thread that owns the
 * manager. kc_cluster_start/stop from one thread.
 */
#ifndef KC_CLUSTER_H
#define KC_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "ctrl/manager.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kc_errcode {
    KC_OK = 0,
    KC_ERR_INPUT = -1, /* a malformed cluster document or stages file */
    KC_ERR_NOMEM = -2,
    KC_ERR_UNKNOWN = -3, /* a controller name kc_controller_names() lacks */
    KC_ERR_START = -4,   /* the manager could not be made or started */
} kc_errcode;

const char *kc_strerror(int code);

/* A parsed cluster document. Opaque; reference-counted. */
typedef struct kc_config kc_config;

/*
 * Parse a cluster document: doc (borrowed; NULL = every default), with
 * relative file names (stages) taken from base_dir (NULL = the current
 * directory). On error returns KC_ERR_INPUT with the reason, naming the key,
 * in errbuf (may be NULL), and leaves *out untouched.
 */
int kc_config_new(const json_t *doc, const char *base_dir, kc_config **out, char *errbuf,
                  size_t errlen);
/* The same from a YAML or JSON file (its directory is the base_dir). */
int kc_config_load(const char *path, kc_config **out, char *errbuf, size_t errlen);
kc_config *kc_config_ref(kc_config *cfg);
/* Drop a reference. NULL does nothing. */
void kc_config_free(kc_config *cfg);
/* Whether the configuration runs the named built-in controller. */
bool kc_config_enabled(const kc_config *cfg, const char *name);

/* The built-in controllers' names, in start order, NULL-terminated (static). */
const char *const *kc_controller_names(void);

/*
 * Add every built-in controller cfg enables (NULL cfg: the defaults) to
 * mgr, which must not have started. Each is an ordinary libctrl controller
 * (or runnable) named "kc-<name>"; they hold a reference to cfg. Returns 0,
 * or a negative kc_errcode / ctrl_errcode (message in errbuf).
 */
int kc_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen);
/* Only the named one (kc_controller_names()); KC_ERR_UNKNOWN otherwise. */
int kc_setup_one(ctrl_manager *mgr, kc_config *cfg, const char *name, char *errbuf, size_t errlen);

/* ---- in-process, for tests: one call ---- */

typedef struct kc_cluster kc_cluster;

typedef struct kc_cluster_options {
    kc_config *config;        /* borrowed (a reference is taken); NULL = defaults */
    const char *kubeconfig;   /* log in with this kubeconfig instead (https, certificates);
                               * NULL = plain url */
    const ctrl_clock *clock;  /* NULL = real time */
    ctrl_log_level log_level; /* default INFO ... */
    bool quiet;               /* ... and no log lines at all when set */
    void (*log_sink)(const char *line, void *user); /* NULL = stderr */
    void *log_user;
} kc_cluster_options;

/*
 * Start a manager running the cluster's controllers against the API server
 * at url (e.g. fakeapi_url(api)), or the one opts->kubeconfig names, on a thread of its own, and wait until
 * its caches have synced and its nodes exist. opts may be NULL. Metrics and
 * health endpoints are off. Returns 0 or a negative code (errbuf says why).
 */
int kc_cluster_start(const char *url, const kc_cluster_options *opts, kc_cluster **out,
                     char *errbuf, size_t errlen);
/* The manager it runs (already started: for its client, cache and
 * ctrl_manager_idle). Borrowed; valid until kc_cluster_stop. */
ctrl_manager *kc_cluster_manager(kc_cluster *cl);
/* Stop the manager, join its thread and free. NULL does nothing. */
void kc_cluster_stop(kc_cluster *cl);

#ifdef __cplusplus
}
#endif

#endif
