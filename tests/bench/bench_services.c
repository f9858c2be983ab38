/*
 * bench_services.c - the Endpoints, EndpointSlice and disruption
 * controllers at scale: N ready pods behind one Service and one PDB, then
 * a tenth of them turning unready. Prints one JSON object per phase: how
 * long creating the pods took, and how long after the last write the
 * Endpoints (N addresses), the EndpointSlices (N endpoints) and the PDB
 * status (N healthy) agreed with them. Real time, fakeapi in-process, the
 * cluster on its own thread over HTTP.
 *
 *   bench_services [pods]        (default 1000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakeapi/fakeapi.h"
#include "kc/cluster.h"

static fakeapi_server *api;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static json_t *req(const char *method, const char *path, const char *body)
{
    int status = 0;
    json_t *out = NULL;
    const char *ct =
        body ? (!strcmp(method, "PATCH") ? "application/merge-patch+json" : "application/json")
             : NULL;
    if (fakeapi_request(api, method, path, ct, body, &status, &out) < 0 || status >= 300) {
        fprintf(stderr, "%s %s: %d\n", method, path, status);
        exit(1);
    }
    return out;
}

static void ready(int i, bool on)
{
    char path[128], body[256];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/p%05d/status", i);
    snprintf(body, sizeof body,
             "{\"status\":{\"phase\":\"Running\",\"podIP\":\"10.%d.%d.%d\",\"conditions\":"
             "[{\"type\":\"Ready\",\"status\":\"%s\",\"lastTransitionTime\":"
             "\"2026-01-01T00:00:00Z\"}]}}",
             1 + i / 62500, i / 250 % 250, i % 250 + 1, on ? "True" : "False");
    json_decref(req("PATCH", path, body));
}

/* Counts the controllers' objects show: ready and not-ready addresses of
 * the Endpoints, ready and not-ready endpoints over the slices, the PDB's
 * currentHealthy. */
typedef struct seen {
    long ep_ready, ep_not, sl_ready, sl_not, healthy;
} seen;

static void look(seen *s)
{
    memset(s, 0, sizeof *s);
    json_t *ep = req("GET", "/api/v1/namespaces/default/endpoints/web", NULL);
    size_t i;
    json_t *sub;
    json_array_foreach(json_object_get(ep, "subsets"), i, sub)
    {
        s->ep_ready += (long)json_array_size(json_object_get(sub, "addresses"));
        s->ep_not += (long)json_array_size(json_object_get(sub, "notReadyAddresses"));
    }
    json_decref(ep);
    json_t *l = req("GET",
                    "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector="
                    "kubernetes.io/service-name=web",
                    NULL);
    json_t *sl;
    json_array_foreach(json_object_get(l, "items"), i, sl)
    {
        size_t j;
        json_t *e;
        json_array_foreach(json_object_get(sl, "endpoints"), j, e)
        {
            if (json_is_true(json_object_get(json_object_get(e, "conditions"), "ready")))
                s->sl_ready++;
            else
                s->sl_not++;
        }
    }
    json_decref(l);
    json_t *pdb = req("GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web", NULL);
    s->healthy =
        (long)json_integer_value(json_object_get(json_object_get(pdb, "status"), "currentHealthy"));
    json_decref(pdb);
}

/* Wait until the objects show want ready and want_not not-ready pods;
 * the time it took (ms), or -1 after 120 s. */
static double converge(long want, long want_not)
{
    double t0 = now_ms();
    for (;;) {
        seen s;
        look(&s);
        if (s.ep_ready == want && s.ep_not == want_not && s.sl_ready == want &&
            s.sl_not == want_not && s.healthy == want)
            return now_ms() - t0;
        if (now_ms() - t0 > 120e3) {
            fprintf(stderr,
                    "no convergence: endpoints %ld/%ld, slices %ld/%ld, healthy %ld (want "
                    "%ld/%ld)\n",
                    s.ep_ready, s.ep_not, s.sl_ready, s.sl_not, s.healthy, want, want_not);
            return -1;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    if (n < 10 || n > 50000) {
        fprintf(stderr, "usage: bench_services [pods: 10 to 50000]\n");
        return 2;
    }
    fakeapi_options fo = {.seed = 11};
    if (fakeapi_start(&fo, &api) != 0)
        return 1;
    json_t *doc = json_pack("{s:[s, s, s], s:i}", "controllers", "endpoints", "endpointslice",
                            "disruption", "nodes", 0);
    kc_config *cfg = NULL;
    kc_cluster *cl = NULL;
    char err[512];
    if (kc_config_new(doc, NULL, &cfg, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    json_decref(doc);
    kc_cluster_options co = {.config = cfg, .quiet = true};
    if (kc_cluster_start(fakeapi_url(api), &co, &cl, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    kc_config_free(cfg);
    json_decref(req("POST", "/api/v1/namespaces/default/services",
                    "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"selector\":{\"app\":\"web\"},"
                    "\"ports\":[{\"name\":\"http\",\"port\":80,\"targetPort\":8080}]}}"));
    char body[512];
    snprintf(body, sizeof body,
             "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"minAvailable\":%ld,\"selector\":"
             "{\"matchLabels\":{\"app\":\"web\"}}}}",
             n * 9 / 10);
    json_decref(req("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", body));

    double t0 = now_ms();
    for (long i = 0; i < n; i++) {
        snprintf(body, sizeof body,
                 "{\"metadata\":{\"name\":\"p%05ld\",\"labels\":{\"app\":\"web\"}},\"spec\":"
                 "{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
                 i);
        json_decref(req("POST", "/api/v1/namespaces/default/pods", body));
        ready((int)i, true);
    }
    double made = now_ms() - t0;
    double conv = converge(n, 0);
    printf("{\"bench\":\"cluster_services\",\"phase\":\"create\",\"pods\":%ld,\"writes_ms\":%.1f,"
           "\"converge_ms\":%.1f}\n",
           n, made, conv);
    fflush(stdout);

    long flip = n / 10;
    t0 = now_ms();
    for (long i = 0; i < flip; i++)
        ready((int)(i * 10), false);
    made = now_ms() - t0;
    double conv2 = converge(n - flip, flip);
    printf("{\"bench\":\"cluster_services\",\"phase\":\"unready\",\"pods\":%ld,\"changed\":%ld,"
           "\"writes_ms\":%.1f,\"converge_ms\":%.1f}\n",
           n, flip, made, conv2);
    kc_cluster_stop(cl);
    fakeapi_stop(api);
    return conv < 0 || conv2 < 0;
}
