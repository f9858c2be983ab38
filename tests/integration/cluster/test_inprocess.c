/*
 * test_inprocess.c - the cluster as a test uses it: one call after
 * fakeapi_start (kc_cluster_start with every default), then a Deployment
 * created through fakeapi's C API rolls out with no help from the test;
 * and the calls' errors.
 *
 * Every wait is a poll with a bound; nothing asserts on timing.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctrl/object.h"
#include "fakeapi/fakeapi.h"
#include "kc/cluster.h"

static fakeapi_server *api;
static kc_cluster *cl;

static void teardown(void)
{
    kc_cluster_stop(cl);
    cl = NULL;
    fakeapi_stop(api);
    api = NULL;
}

TestSuite(inprocess, .fini = teardown);

static int64_t field_of(const char *av, const char *kind, const char *ns, const char *name,
                        const char *path)
{
    json_t *obj = NULL;
    if (fakeapi_get(api, av, kind, ns, name, &obj, NULL) < 0)
        return -1;
    int64_t v = ctrl_obj_get_int(obj, path, -1);
    json_decref(obj);
    return v;
}

/* Poll (real time, 20 s at most) until the field equals want. */
static bool wait_field(const char *av, const char *kind, const char *ns, const char *name,
                       const char *path, int64_t want)
{
    for (int i = 0; i < 2000; i++) {
        if (field_of(av, kind, ns, name, path) == want)
            return true;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    return false;
}

Test(inprocess, one_call_and_a_deployment_rolls_out)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){0}, &api), 0);
    char err[512];
    cr_assert_eq(kc_cluster_start(fakeapi_url(api), &(kc_cluster_options){.quiet = true}, &cl, err,
                                  sizeof err),
                 0, "%s", err);
    /* The call returns once the default three nodes exist. */
    json_t *nodes = NULL;
    cr_assert_eq(fakeapi_list(api, "v1", "Node", NULL, NULL, &nodes, NULL), 0);
    cr_assert_eq(json_array_size(nodes), 3);
    json_decref(nodes);
    cr_assert_not_null(kc_cluster_manager(cl));

    const char *dep = "{\"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\", \"metadata\": "
                      "{\"name\": \"web\", \"namespace\": \"default\"}, \"spec\": {\"replicas\": "
                      "4, \"selector\": {\"matchLabels\": {\"app\": \"web\"}}, \"template\": "
                      "{\"metadata\": {\"labels\": {\"app\": \"web\"}}, \"spec\": "
                      "{\"containers\": [{\"name\": \"c\", \"image\": \"nginx\"}]}}}}";
    fakeapi_error ferr = {0};
    cr_assert_eq(fakeapi_apply(api, dep, strlen(dep), &ferr), 0, "%s", ferr.message);
    cr_assert(
        wait_field("apps/v1", "Deployment", "default", "web", "status.availableReplicas", 4),
        "the Deployment did not become available: %lld",
        (long long)field_of("apps/v1", "Deployment", "default", "web", "status.availableReplicas"));
    /* Its pods run on the nodes, each with an IP of its node's /24. */
    json_t *pods = NULL;
    cr_assert_eq(fakeapi_list(api, "v1", "Pod", "default", NULL, &pods, NULL), 0);
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        const char *node = ctrl_obj_get_string(pod, "spec.nodeName");
        const char *ip = ctrl_obj_get_string(pod, "status.podIP");
        cr_assert_str_eq(ctrl_obj_get_string(pod, "status.phase"), "Running");
        cr_assert(node && !strncmp(node, "node-", 5), "node %s", node ? node : "(none)");
        char prefix[32];
        snprintf(prefix, sizeof prefix, "10.244.%s.", node + 5);
        cr_assert(ip && !strncmp(ip, prefix, strlen(prefix)), "pod IP %s on %s", ip ? ip : "(none)",
                  node);
    }
    cr_assert_eq(i, 4);
    json_decref(pods);
}

Test(inprocess, errors_say_why_and_leave_nothing)
{
    char err[512] = "";
    kc_cluster *out = (kc_cluster *)&err; /* a sentinel: untouched on error */
    /* Nothing listens on port 1: an error naming the server, at once. */
    int rc = kc_cluster_start("http://127.0.0.1:1", &(kc_cluster_options){.quiet = true}, &out, err,
                              sizeof err);
    cr_assert_lt(rc, 0);
    cr_assert_eq(out, (kc_cluster *)&err);
    cr_assert(strstr(err, "http://127.0.0.1:1"), "%s", err);
    rc = kc_cluster_start("not a url", &(kc_cluster_options){.quiet = true}, &out, err, sizeof err);
    cr_assert_lt(rc, 0);
    cr_assert_eq(out, (kc_cluster *)&err);
    cr_assert(err[0], "no message");

    json_t *doc = json_pack("{s:[s]}", "controllers", "no-such-controller");
    kc_config *cfg = (kc_config *)&err;
    rc = kc_config_new(doc, NULL, &cfg, err, sizeof err);
    json_decref(doc);
    cr_assert_eq(rc, KC_ERR_INPUT);
    cr_assert_eq(cfg, (kc_config *)&err);
    cr_assert(strstr(err, "no built-in controller named \"no-such-controller\""), "%s", err);
    cr_assert_str_eq(kc_strerror(KC_ERR_UNKNOWN), "no such built-in controller");
}
