/*
 * inprocess.c - the cluster in a test's process: kc_cluster_start runs a
 * manager with the built-in controllers on a thread of its own.
 *
 * DESIGN: one thread, started here, blocks in ctrl_manager_start until
 * kc_cluster_stop calls ctrl_manager_stop and joins it. The caller's thread
 * waits for the manager to be running and for the configured nodes to
 * exist, so a test can create a Deployment right after the call.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster_int.h"
#include "ctrl/config.h"

#define START_TIMEOUT (30 * CTRL_SECOND)

struct kc_cluster {
    ctrl_manager *mgr;
    pthread_t thread;
    bool running;
    int rc;
};

static void *run(void *arg)
{
    kc_cluster *cl = arg;
    cl->rc = ctrl_manager_start(cl->mgr, NULL);
    return NULL;
}

static void discard(const char *line, void *user)
{
    (void)line;
    (void)user;
}

static void nap(void)
{
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* Wait (real time) until every configured node exists. */
static int wait_nodes(kc_cluster *cl, const kc_config *cfg, char *errbuf, size_t errlen)
{
    if (!kc_config_enabled(cfg, "nodes") || cfg->n_nodes == 0)
        return 0;
    ctrl_client *c = ctrl_manager_client(cl->mgr);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        size_t found = 0;
        for (size_t i = 0; i < cfg->n_nodes; i++) {
            json_t *node = NULL;
            if (ctrl_client_get(c, "v1", "Node", "", cfg->nodes[i].name, &node, NULL) == 0)
                found++;
            json_decref(node);
        }
        if (found == cfg->n_nodes)
            return 0;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * CTRL_SECOND + (t.tv_nsec - t0.tv_nsec) > START_TIMEOUT) {
            if (errbuf && errlen)
                snprintf(errbuf, errlen, "%zu of %zu nodes exist after 30 s", found, cfg->n_nodes);
            return KC_ERR_START;
        }
        nap();
    }
}

int kc_cluster_start(const char *url, const kc_cluster_options *opts, kc_cluster **out,
                     char *errbuf, size_t errlen)
{
    static const kc_cluster_options none;
    if (!opts)
        opts = &none;
    if (errbuf && errlen)
        *errbuf = 0;
    kc_config *cfg = opts->config ? kc_config_ref(opts->config) : NULL;
    ctrl_config *cc = NULL;
    ctrl_error cerr = {0};
    int rc = 0;
    kc_cluster *cl = calloc(1, sizeof *cl);
    if (!cl) {
        rc = KC_ERR_NOMEM;
        goto out;
    }
    if (!cfg && (rc = kc_config_new(NULL, NULL, &cfg, errbuf, errlen)) < 0)
        goto out;
    rc = opts->kubeconfig ? ctrl_config_from_kubeconfig(opts->kubeconfig, NULL, &cc, &cerr)
                          : ctrl_config_from_url(url, &cc, &cerr);
    if (rc < 0) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "%s: %s",
                     opts->kubeconfig ? opts->kubeconfig
                     : url            ? url
                                      : "(no url)",
                     cerr.message);
        goto out;
    }
    ctrl_manager_options mo = {
        .metrics_addr = "0",
        .health_probe_addr = "0",
        .graceful_shutdown_ns = 5 * CTRL_SECOND,
        .user_agent = "kube-harness-cluster",
        .clock = opts->clock,
        .log_level = opts->log_level,
        .log_sink = opts->quiet ? discard : opts->log_sink,
        .log_user = opts->log_user,
    };
    if ((rc = ctrl_manager_new_for_config(cc, &mo, &cl->mgr, &cerr)) < 0) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "manager: %s", cerr.message);
        goto out;
    }
    /* A server that does not answer fails here, at once, with its reason,
     * rather than as caches that never sync. */
    json_t *version = NULL;
    if ((rc = ctrl_client_request(ctrl_manager_client(cl->mgr), "GET", "/version", NULL, NULL,
                                  &version, &cerr)) < 0) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "%s: %s", ctrl_config_server(cc), cerr.message);
        goto out;
    }
    json_decref(version);
    if ((rc = kc_setup(cl->mgr, cfg, errbuf, errlen)) < 0)
        goto out;
    if (pthread_create(&cl->thread, NULL, run, cl) != 0) {
        rc = KC_ERR_START;
        goto out;
    }
    cl->running = true;
    if (ctrl_manager_elected(cl->mgr, START_TIMEOUT) < 0) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "the cluster's manager did not start (%d)", cl->rc);
        rc = KC_ERR_START;
        goto out;
    }
    if ((rc = wait_nodes(cl, cfg, errbuf, errlen)) < 0)
        goto out;
    *out = cl;
    cl = NULL;
out:
    kc_cluster_stop(cl);
    ctrl_config_free(cc);
    kc_config_free(cfg);
    ctrl_error_deinit(&cerr);
    return rc;
}

ctrl_manager *kc_cluster_manager(kc_cluster *cl)
{
    return cl ? cl->mgr : NULL;
}

void kc_cluster_stop(kc_cluster *cl)
{
    if (!cl)
        return;
    if (cl->running) {
        ctrl_manager_stop(cl->mgr);
        pthread_join(cl->thread, NULL);
    }
    ctrl_manager_free(cl->mgr);
    free(cl);
}
