/*
 * builtin.c - the example controllers the `scenario` program knows by name.
 * Linked into the program, not into libscenario, so that a user's own test
 * program registers only what it wants.
 */
#include <stdbool.h>

#include "buggy.h"
#include "cronjob.h"
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
}
