/*
 * builtin.c - the table of built-in controllers, and kc_setup.
 *
 * Start order is the table's order: nodes first (so that pods have somewhere
 * to go), then the scheduler and the kubelet, then the workload controllers
 * and the rest. A new built-in controller is a module with a
 * kc__<name>_setup and one row here.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cluster_int.h"

typedef struct builtin {
    const char *name;
    kc__setup_fn setup;
} builtin;

static const builtin table[] = {
    {"nodes", kc__nodes_setup},
    {"scheduler", kc__scheduler_setup},
    {"kubelet", kc__kubelet_setup},
    {"nodelifecycle", kc__nodelifecycle_setup},
    {"replicaset", kc__replicaset_setup},
    {"deployment", kc__deployment_setup},
    {"statefulset", kc__statefulset_setup},
    {"daemonset", kc__daemonset_setup},
    {"job", kc__job_setup},
    {"cronjob", kc__cronjob_setup},
    {"endpoints", kc__endpoints_setup},
    {"endpointslice", kc__endpointslice_setup},
    {"serviceaccount", kc__serviceaccount_setup},
    {"serviceaccount-token", kc__satoken_setup},
    {"root-ca-cert-publisher", kc__rootca_setup},
    {"disruption", kc__disruption_setup},
    {NULL, NULL},
};

static const char *names[sizeof table / sizeof table[0]];

static void fill_names(void)
{
    size_t i = 0;
    for (const builtin *b = table; b->name; b++)
        names[i++] = b->name;
    names[i] = NULL;
}

const char *const *kc_controller_names(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fill_names);
    return names;
}

const char *kc__controller_name(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "kc-%s", name);
    return buf;
}

static const builtin *find(const char *name)
{
    for (const builtin *b = table; b->name; b++)
        if (!strcmp(b->name, name))
            return b;
    return NULL;
}

int kc_setup_one(ctrl_manager *mgr, kc_config *cfg, const char *name, char *errbuf, size_t errlen)
{
    const builtin *b = name ? find(name) : NULL;
    if (!b) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "no built-in controller named \"%s\"", name ? name : "");
        return KC_ERR_UNKNOWN;
    }
    kc_config *own = NULL;
    if (!cfg) {
        int rc = kc_config_new(NULL, NULL, &own, errbuf, errlen);
        if (rc < 0)
            return rc;
        cfg = own;
    }
    int rc = b->setup(mgr, cfg, errbuf, errlen);
    if (rc < 0 && errbuf && errlen && !*errbuf)
        snprintf(errbuf, errlen, "%s: setup failed (%d)", name, rc);
    kc_config_free(own);
    return rc;
}

int kc_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    kc_config *own = NULL;
    if (errbuf && errlen)
        *errbuf = 0;
    if (!cfg) {
        int rc = kc_config_new(NULL, NULL, &own, errbuf, errlen);
        if (rc < 0)
            return rc;
        cfg = own;
    }
    int rc = 0;
    for (const builtin *b = table; b->name && rc == 0; b++)
        if (kc_config_enabled(cfg, b->name))
            rc = kc_setup_one(mgr, cfg, b->name, errbuf, errlen);
    kc_config_free(own);
    return rc;
}

const char *kc_strerror(int code)
{
    switch (code) {
    case KC_OK:
        return "ok";
    case KC_ERR_INPUT:
        return "malformed cluster document";
    case KC_ERR_NOMEM:
        return "out of memory";
    case KC_ERR_UNKNOWN:
        return "no such built-in controller";
    case KC_ERR_START:
        return "the cluster's manager could not start";
    default:
        return "unknown error";
    }
}
