/*
 * main.c - the scenario runner with this operator's controller registered
 * as "memcached": `memcached-scenarios run scenarios/memcached-basic.yaml`
 * (every command of the `scenario` program works; see `--help`).
 */
#include <scn/run.h>

#include "memcached.h"

static int setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)config, (void)user;
    return memcached_setup(mgr);
}

int main(int argc, char **argv)
{
    if (scn_register_controller("memcached", setup, NULL) < 0)
        return 2;
    return scn_main(argc, argv);
}
