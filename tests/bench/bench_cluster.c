/*
 * bench_cluster.c - what a cluster that moves costs (docs/cluster.md): runs
 * under the scenario runner (virtual clock, seeded scheduler), in process.
 * Prints one JSON object a line:
 *   {"bench":"deployment_1000_ready","passed":true,"real_s":S,"virtual_s":V,
 *    "steps":N,"pods":1000}
 *   {"bench":"rolling_update_100",...}
 *   {"bench":"day_10_nodes_5_deployments",...}
 * Targets (issue: a cluster that moves): the first under 2 s real, the day
 * under 2 s real, on a 2-core machine.
 * Usage: bench_cluster [--only NAME] [--seed N]
 * Main thread only (the runs are in-process, one at a time).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn/run.h"

typedef struct bench {
    const char *name;
    int pods;
    const char *text;
} bench;

#define DEPLOYMENT(NAME, REPLICAS, IMAGE)                                                          \
    "{apiVersion: apps/v1, kind: Deployment, metadata: {name: " NAME ", namespace: default}, "     \
    "spec: {replicas: " #REPLICAS ", selector: {matchLabels: {app: " NAME "}}, "                   \
    "template: {metadata: {labels: {app: " NAME "}}, spec: {containers: [{name: c, image: " IMAGE  \
    ", resources: {requests: {cpu: 10m, memory: 16Mi}}}]}}}}"

#define AVAILABLE(NAME, N)                                                                         \
    "{field: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: " NAME              \
    ", path: .status.availableReplicas, equals: " #N "}}"

#define UPDATED(NAME, N)                                                                           \
    "{field: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: " NAME              \
    ", path: .status.updatedReplicas, equals: " #N "}}"

static const bench benches[] = {
    {"deployment_1000_ready", 1000,
     "name: deployment-1000-ready\n"
     "cluster: {nodes: 10}\n"
     "maxVirtualTime: 2h\n"
     "steps:\n"
     "  - apply: [" DEPLOYMENT("web", 1000, "nginx:1.26") "]\n"
                                                          "  - wait: {for: " AVAILABLE(
                                                              "web", 1000) ", timeout: 1h}\n"},
    {"rolling_update_100", 100,
     "name: rolling-update-100\n"
     "cluster: {nodes: 3}\n"
     "maxVirtualTime: 2h\n"
     "steps:\n"
     "  - apply: [" DEPLOYMENT(
         "web", 100,
         "nginx:1.26") "]\n"
                       "  - wait: {for: " AVAILABLE(
                           "web", 100) ", timeout: 30m}\n"
                                       "  - patch: {apiVersion: apps/v1, kind: Deployment, "
                                       "namespace: default, name: web,\n"
                                       "           type: strategic, patch: {spec: {template: "
                                       "{spec: {containers: [{name: c, image: "
                                       "nginx:1.27}]}}}}}\n"
                                       "  - wait: {for: {all: [" UPDATED("web", 100) ", " AVAILABLE(
                                           "web",
                                           100) "]}, timeout: 30m}\n"
                                                "  - wait: {for: {field: {apiVersion: apps/v1, "
                                                "kind: Deployment, namespace: default, name: "
                                                "web, path: .status.replicas, equals: 100}}, "
                                                "timeout: 30m}\n"},
    {"day_10_nodes_5_deployments", 50,
     "name: day-10-nodes-5-deployments\n"
     "cluster: {nodes: 10}\n"
     "maxVirtualTime: 25h\n"
     "steps:\n"
     "  - apply: [" DEPLOYMENT("a", 10, "nginx") ", " DEPLOYMENT("b", 10, "nginx") ", " DEPLOYMENT("c", 10, "nginx") ", " DEPLOYMENT(
         "d", 10, "nginx") ", " DEPLOYMENT("e",
                                           10, "nginx") "]\n"
                                                        "  - wait: {for: {all: [" AVAILABLE("a", 10) ", " AVAILABLE("b", 10) ", " AVAILABLE(
                                                            "c",
                                                            10) ", " AVAILABLE("d",
                                                                               10) ", " AVAILABLE("e",
                                                                                                  10) "]}, timeout: 1h}\n"
                                                                                                      "  - advance: 24h\n"
                                                                                                      "  - expect: " AVAILABLE(
                                                                                                          "e",
                                                                                                          10) "\n"},
};

int main(int argc, char **argv)
{
    const char *only = NULL;
    unsigned long long seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_cluster [--only NAME] [--seed N]\n");
            return 2;
        }
    }
    int status = 0;
    for (size_t b = 0; b < sizeof benches / sizeof benches[0]; b++) {
        if (only && strcmp(only, benches[b].name))
            continue;
        scn_scenario *sc = NULL;
        scn_error err = {0};
        const char *text = benches[b].text;
        if (scn_scenario_parse(benches[b].name, text, strlen(text), &sc, &err) < 0) {
            char msg[1200];
            scn_error_format(&err, msg, sizeof msg);
            fprintf(stderr, "bench_cluster: %s\n", msg);
            return 2;
        }
        scn_run_options ro = {.seed = seed, .seed_given = true, .max_steps = 5000000};
        scn_run_result res = {0};
        int rc = scn_run(sc, &ro, &res);
        printf("{\"bench\":\"%s\",\"passed\":%s,\"real_s\":%.3f,\"virtual_s\":%.1f,"
               "\"steps\":%lu,\"pods\":%d}\n",
               benches[b].name, rc == 0 && res.passed ? "true" : "false", res.real_seconds,
               (double)res.virtual_ns / 1e9, res.steps, benches[b].pods);
        fflush(stdout);
        if (rc < 0 || !res.passed) {
            fprintf(stderr, "bench_cluster: %s: %s\n", benches[b].name, res.message);
            status = 1;
        }
        scn_scenario_free(sc);
    }
    return status;
}
