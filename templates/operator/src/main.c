/*
 * main.c - the operator program: a manager for the cluster of the
 * kubeconfig ($KUBECONFIG, ~/.kube/config, or in-cluster) running the
 * Memcached controller until SIGINT or SIGTERM.
 *
 *     memcached-operator [--kubeconfig FILE]
 */
#include <stdio.h>
#include <string.h>

#include <ctrl/manager.h>
#include <ctrl/version.h>

#include "memcached.h"

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL;
    if (argc == 3 && !strcmp(argv[1], "--kubeconfig"))
        kubeconfig = argv[2];
    else if (argc != 1) {
        fprintf(stderr, "usage: %s [--kubeconfig FILE]\n", argv[0]);
        return 2;
    }
    ctrl_manager *mgr = NULL;
    ctrl_error err = {0};
    int rc = ctrl_manager_new(kubeconfig, &(ctrl_manager_options){.metrics_addr = "0"}, &mgr,
                              &err);
    if (rc < 0) {
        fprintf(stderr, "memcached-operator: %s\n", err.message);
        ctrl_error_deinit(&err);
        return 1;
    }
    rc = memcached_setup(mgr);
    if (rc == 0) {
        fprintf(stderr, "memcached-operator: libctrl %s\n", ctrl_version());
        rc = ctrl_manager_start(mgr, ctrl_signal_context());
    }
    if (rc < 0)
        fprintf(stderr, "memcached-operator: %s\n", ctrl_strerror(rc));
    ctrl_manager_free(mgr);
    return rc < 0 ? 1 : 0;
}
