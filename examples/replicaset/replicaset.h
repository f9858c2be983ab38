/*
 * replicaset.h - a ReplicaSet-style controller for the PodSet kind
 * (podsets.example.com, fixtures/replicaset/crd.yaml).
 *
 * For each PodSet it keeps spec.replicas Pods that the PodSet controls
 * (ownerReferences with controller and blockOwnerDeletion), named from
 * generateName "<podset>-", labelled with spec.template.metadata.labels
 * plus "podset: <name>", with spec.template.spec as their spec. Extra pods
 * go newest first. status.replicas (pods not being deleted) and
 * status.observedGeneration are written through the status subresource.
 * A finalizer (EXAMPLE_PODSET_FINALIZER), added on the first reconcile,
 * lets the controller delete its pods before the PodSet goes.
 *
 * Reads come from the manager's cache (PodSets and Pods: the controller
 * watches both); writes the cache has not seen yet are remembered
 * ("expectations", as in kube-controller-manager) so that a stale cache
 * never makes it create or delete twice. Conflicts are retried with backoff.
 *
 * Uses only libctrl's public headers.
 */
#ifndef EXAMPLE_REPLICASET_H
#define EXAMPLE_REPLICASET_H

#include <jansson.h>

#include "ctrl/manager.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXAMPLE_PODSET_API_VERSION "example.com/v1"
#define EXAMPLE_PODSET_KIND "PodSet"
#define EXAMPLE_PODSET_FINALIZER "example.com/podset-cleanup"
/* The label every pod of a PodSet carries, with the PodSet's name. */
#define EXAMPLE_PODSET_LABEL "podset"

/*
 * Register the PodSet controller with mgr (before it starts, or while it
 * runs), and nothing else. config (borrowed, may be NULL) is a JSON object
 * with optional fields:
 *   "name"                     the controller's name (default "podset")
 *   "maxConcurrentReconciles"  workers (default 1)
 *   "noLeaderElection"         run without waiting for leadership
 * Returns 0, CTRL_ERR_ARG (a malformed config, a duplicate name) or what
 * ctrl_builder_complete returns. The controller keeps no state that needs
 * freeing: everything it uses lives as long as mgr.
 * Thread: the thread that owns mgr.
 */
int example_replicaset_setup(ctrl_manager *mgr, const json_t *config);

#ifdef __cplusplus
}
#endif

#endif
