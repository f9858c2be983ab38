/*
 * hunt.h - four small controllers with a planted bug each, and their
 * fixed twins: the targets of `scenario hunt` (docs/scenarios.md,
 * "Planted bugs for `scenario hunt`"). Each bug is one of the classes
 * Sieve and Acto find in real operators, written as the realistic mistake
 * it is; each fixed variant shares every line with the buggy one but the
 * fix, so a scenario that tells them apart tells apart exactly that.
 *
 *   hunt-backup-*    Backup (backups.hunt.example.com): one Job per Backup.
 *                    buggy: creates the Job with generateName and only then
 *                    records its name in status; a crash between the two
 *                    makes the next incarnation create a second Job
 *                    (intermediate state). fixed: a deterministic Job name,
 *                    409 AlreadyExists taken as "it is there".
 *   hunt-pool-*      Pool (pools.hunt.example.com): spec.replicas Pods.
 *                    buggy: deletes every Pod at or beyond the count its
 *                    status records, reading the status from its cache and
 *                    the Pods live; when its cache of Pools lags (its own
 *                    status write not seen yet) it deletes the Pod it has
 *                    just created (stale state). fixed: a Pod whose
 *                    generation label is newer than the status it reads is
 *                    left alone (the view is behind, not the Pod).
 *   hunt-team-*      Team (teams.hunt.example.com): an entry in the shared
 *                    namespace "directory" (a ConfigMap no owner reference
 *                    can reach, so no garbage collection). buggy: removes
 *                    the entry when a reconcile finds the Team gone, which
 *                    only the Team's delete event brings; a delete it never
 *                    sees (it was down) leaks the entry for good
 *                    (unobserved state). fixed: a finalizer, so the
 *                    deletion is a state any later view shows.
 *   hunt-frontend-*  Frontend (frontends.hunt.example.com): a Service with
 *                    spec.ports. buggy: an absent list means the default
 *                    port, but the empty list the schema allows goes to the
 *                    Service as it is, which the API server refuses (422):
 *                    the reconcile fails for ever (a value the schema
 *                    allows). fixed: no ports, no Service.
 *
 * Each example_hunt_*_setup registers one controller with mgr and nothing
 * else; config (borrowed, may be NULL) is a JSON object with optional
 * "name" (the controller's name; default the registered one, e.g.
 * "hunt-pool-buggy"), "maxConcurrentReconciles" (1..1024) and
 * "noLeaderElection". Returns 0, CTRL_ERR_ARG (a malformed config, a
 * duplicate name) or what ctrl_builder_complete returns. None of them
 * keeps state of its own. Thread: the thread that owns mgr.
 *
 * Uses only libctrl's public headers.
 */
#ifndef EXAMPLE_HUNT_H
#define EXAMPLE_HUNT_H

#include <jansson.h>

#include "ctrl/manager.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXAMPLE_HUNT_GROUP "hunt.example.com"
#define EXAMPLE_HUNT_API_VERSION EXAMPLE_HUNT_GROUP "/v1"

int example_hunt_backup_buggy_setup(ctrl_manager *mgr, const json_t *config);
int example_hunt_backup_fixed_setup(ctrl_manager *mgr, const json_t *config);
int example_hunt_pool_buggy_setup(ctrl_manager *mgr, const json_t *config);
int example_hunt_pool_fixed_setup(ctrl_manager *mgr, const json_t *config);
int example_hunt_team_buggy_setup(ctrl_manager *mgr, const json_t *config);
int example_hunt_team_fixed_setup(ctrl_manager *mgr, const json_t *config);
int example_hunt_frontend_buggy_setup(ctrl_manager *mgr, const json_t *config);
int example_hunt_frontend_fixed_setup(ctrl_manager *mgr, const json_t *config);

#ifdef __cplusplus
}
#endif

#endif
