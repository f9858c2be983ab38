/*
 * seed-controller - the seed's program of DESIGN.md, compiled: a
 * controller for MyObject (fixtures/seed/crd.yaml) that owns Pods, logs
 * each reconcile and looks again after 5 s. Leader-elected on the Lease
 * "my-controller"; the cluster comes from $KUBECONFIG, in-cluster or
 * ~/.kube/config (or --kubeconfig FILE).
 */
#include <stdio.h>
#include <string.h>

#include "ctrl/manager.h"

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)user;
    json_t *obj = NULL;
    int rc = ctrl_client_get(ctrl_ctx_client(ctx), "example.com/v1", "MyObject", req->ns, req->name,
                             &obj, NULL);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done(); /* deleted meanwhile: nothing to do */
    if (rc < 0)
        return ctrl_err(rc); /* retried with backoff */
    ctrl_log_info(ctx, "processing object", "name", req->name);
    json_decref(obj);
    return ctrl_requeue_after(5 * CTRL_SECOND);
}

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL;
    if (argc == 3 && !strcmp(argv[1], "--kubeconfig")) {
        kubeconfig = argv[2];
    } else if (argc != 1) {
        fprintf(stderr, "usage: seed-controller [--kubeconfig FILE]\n");
        return 2;
    }
    ctrl_stop *stop = ctrl_signal_context(); /* before any thread */
    ctrl_manager *mgr;
    if (ctrl_manager_new(kubeconfig,
                         &(ctrl_manager_options){.leader_election = true,
                                                 .leader_election_id = "my-controller",
                                                 .metrics_addr = "0"},
                         &mgr, NULL) < 0)
        return 1;
    ctrl_builder *b = ctrl_builder_for(mgr, "example.com/v1", "MyObject");
    ctrl_builder_owns(b, "v1", "Pod");
    int rc = ctrl_builder_complete(b, reconcile, NULL);
    if (rc == 0)
        rc = ctrl_manager_start(mgr, stop);
    if (rc < 0)
        fprintf(stderr, "seed-controller: %s\n", ctrl_strerror(rc));
    ctrl_manager_free(mgr);
    return rc < 0;
}
