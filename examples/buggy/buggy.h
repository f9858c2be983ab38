/*
 * buggy.h - the Singleton controller, twice: a deliberately buggy variant
 * that scenario exploration catches, and the fixed one
 * (singletons.example.com, fixtures/singleton/crd.yaml).
 *
 * A Singleton asks for exactly one ConfigMap holding its spec.data: owned
 * by the Singleton (ownerReferences with controller and
 * blockOwnerDeletion), labelled "singleton: <name>", its data kept equal to
 * spec.data. status.configMapName and status.observedGeneration are written
 * through the status subresource. Reads come from the manager's cache
 * (Singletons and ConfigMaps: the controller watches both).
 *
 * - The BUGGY variant names the ConfigMap with generateName "<name>-" and
 *   creates one whenever its cache shows none owned by the Singleton. It
 *   does not remember that it has just created one. The cache lags behind
 *   its own writes: its status write (or a retry after a create whose answer
 *   was lost) brings the next reconcile, which may run before the informer
 *   has delivered the new ConfigMap, and it creates a second one. It never
 *   deletes extras. This is the classic stale-cache / lost-response bug.
 * - The FIXED variant names the ConfigMap "<name>-data": a create the cache
 *   has not caught up with answers 409 AlreadyExists, which is taken as
 *   "it is there" (the ConfigMap's own event requeues the Singleton). The
 *   PodSet controller (examples/replicaset) shows the other cure,
 *   expectations, for when names must be generated.
 * - The DEDUP variant names it with generateName like the buggy one and
 *   may create a second one the same way, but deletes every ConfigMap it
 *   owns beyond one (it keeps the one status.configMapName names, else the
 *   oldest) as soon as its cache shows them: at rest there is one. Its
 *   states match the buggy variant's (names masked, scenario diff) until
 *   the buggy one keeps a second ConfigMap.
 *
 * Uses only libctrl's public headers.
 */
#ifndef EXAMPLE_BUGGY_H
#define EXAMPLE_BUGGY_H

#include <jansson.h>

#include "ctrl/manager.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXAMPLE_SINGLETON_GROUP "example.com"
#define EXAMPLE_SINGLETON_API_VERSION EXAMPLE_SINGLETON_GROUP "/v1"
#define EXAMPLE_SINGLETON_KIND "Singleton"
/* The label every ConfigMap of a Singleton carries, with the Singleton's name. */
#define EXAMPLE_SINGLETON_LABEL "singleton"

/*
 * Register the buggy (example_buggy_setup) or the fixed
 * (example_fixed_setup) Singleton controller with mgr (before it starts, or
 * while it runs), and nothing else. config (borrowed, may be NULL) is a
 * JSON object with optional fields:
 *   "name"                     the controller's name (default
 *                              "singleton-buggy" / "singleton-fixed")
 *   "maxConcurrentReconciles"  workers (default 1)
 *   "noLeaderElection"         run without waiting for leadership
 * Returns 0, CTRL_ERR_ARG (a malformed config, a duplicate name) or what
 * ctrl_builder_complete returns. Neither variant keeps state of its own.
 * Thread: the thread that owns mgr.
 */
int example_buggy_setup(ctrl_manager *mgr, const json_t *config);
int example_fixed_setup(ctrl_manager *mgr, const json_t *config);
int example_dedup_setup(ctrl_manager *mgr, const json_t *config); /* default name singleton-dedup */

#ifdef __cplusplus
}
#endif

#endif
