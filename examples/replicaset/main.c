/*
 * replicaset-controller - run the PodSet controller (replicaset.h) against
 * a cluster: the one in --kubeconfig, else $KUBECONFIG, in-cluster or
 * ~/.kube/config. The PodSet CRD (fixtures/replicaset/crd.yaml) must be
 * installed. SIGINT/SIGTERM stop it gracefully; a second one exits at once.
 *
 * Usage: replicaset-controller [--kubeconfig FILE] [--leader-elect]
 *                              [--metrics-addr ADDR] [--workers N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/manager.h"
#include "replicaset.h"

static int usage(FILE *f)
{
    fprintf(f, "usage: replicaset-controller [--kubeconfig FILE] [--leader-elect]\n"
               "                             [--metrics-addr ADDR] [--workers N]\n");
    return f == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL, *metrics = "0";
    bool leader_elect = false;
    long workers = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--kubeconfig") && i + 1 < argc)
            kubeconfig = argv[++i];
        else if (!strcmp(argv[i], "--leader-elect"))
            leader_elect = true;
        else if (!strcmp(argv[i], "--metrics-addr") && i + 1 < argc)
            metrics = argv[++i];
        else if (!strcmp(argv[i], "--workers") && i + 1 < argc)
            workers = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return usage(stdout);
        else
            return usage(stderr);
    }
    if (workers < 1 || workers > 1024)
        return usage(stderr);

    /* Before any thread exists, so that every thread blocks the signals. */
    ctrl_stop *stop = ctrl_signal_context();

    ctrl_manager *mgr = NULL;
    ctrl_error err = {0};
    if (ctrl_manager_new(kubeconfig,
                         &(ctrl_manager_options){.leader_election = leader_elect,
                                                 .leader_election_id = "replicaset-controller",
                                                 .metrics_addr = metrics},
                         &mgr, &err) < 0) {
        fprintf(stderr, "replicaset-controller: %s\n", err.message);
        ctrl_error_deinit(&err);
        return 1;
    }
    json_t *config = json_pack("{s:I}", "maxConcurrentReconciles", (json_int_t)workers);
    int rc = example_replicaset_setup(mgr, config);
    json_decref(config);
    if (rc < 0) {
        fprintf(stderr, "replicaset-controller: setup: %s\n", ctrl_strerror(rc));
        ctrl_manager_free(mgr);
        return 1;
    }
    rc = ctrl_manager_start(mgr, stop);
    if (rc < 0)
        fprintf(stderr, "replicaset-controller: %s\n", ctrl_strerror(rc));
    ctrl_manager_free(mgr);
    return rc < 0;
}
