/*
 * builtin.c - the example controllers the `scenario` program knows by name.
 * Linked into the program, not into libscenario, so that a user's own test
 * program registers only what it wants.
 */
#include <stdbool.h>

#include "buggy.h"
#include "cronjob.h"
#include "hunt.h"
#include "replicaset.h"
#include "scn/run.h"
#include "webapp.h"

static int replicaset_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_replicaset_setup(mgr, config);
}

static int singleton_buggy_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_buggy_setup(mgr, config);
}

static int singleton_fixed_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_fixed_setup(mgr, config);
}

static int singleton_dedup_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_dedup_setup(mgr, config);
}

static int cronjob_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_cronjob_setup(mgr, config);
}

static int webapp_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_webapp_setup(mgr, config);
}

static int webapp_buggy_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_webapp_buggy_setup(mgr, config);
}

/* The planted bugs of examples/hunt, each with its fixed twin. */
#define HUNT_SETUP(x)                                                                              \
    static int hunt_##x##_setup(ctrl_manager *mgr, const json_t *config, void *user)               \
    {                                                                                              \
        (void)user;                                                                                \
        return example_hunt_##x##_setup(mgr, config);                                              \
    }
HUNT_SETUP(backup_buggy)
HUNT_SETUP(backup_fixed)
HUNT_SETUP(pool_buggy)
HUNT_SETUP(pool_fixed)
HUNT_SETUP(team_buggy)
HUNT_SETUP(team_fixed)
HUNT_SETUP(frontend_buggy)
HUNT_SETUP(frontend_fixed)

void scn_register_examples(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    scn_register_controller("replicaset", replicaset_setup, NULL);
    scn_register_controller("cronjob", cronjob_setup, NULL);
    scn_register_controller("singleton-buggy", singleton_buggy_setup, NULL);
    scn_register_controller("singleton-fixed", singleton_fixed_setup, NULL);
    scn_register_controller("singleton-dedup", singleton_dedup_setup, NULL);
    scn_register_controller("webapp", webapp_setup, NULL);
    scn_register_controller("webapp-buggy", webapp_buggy_setup, NULL);
    scn_register_controller("hunt-backup-buggy", hunt_backup_buggy_setup, NULL);
    scn_register_controller("hunt-backup-fixed", hunt_backup_fixed_setup, NULL);
    scn_register_controller("hunt-pool-buggy", hunt_pool_buggy_setup, NULL);
    scn_register_controller("hunt-pool-fixed", hunt_pool_fixed_setup, NULL);
    scn_register_controller("hunt-team-buggy", hunt_team_buggy_setup, NULL);
    scn_register_controller("hunt-team-fixed", hunt_team_fixed_setup, NULL);
    scn_register_controller("hunt-frontend-buggy", hunt_frontend_buggy_setup, NULL);
    scn_register_controller("hunt-frontend-fixed", hunt_frontend_fixed_setup, NULL);
}
