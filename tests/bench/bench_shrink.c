/*
 * bench_shrink.c - how fast `scenario shrink` works: the noisy 200-step
 * fixture (tests/fixtures/shrink/noisy-200.yaml, one relevant step) shrunk
 * with --same-failure, and one run of the whole fixture for scale. Prints
 * one JSON object a line:
 *   {"bench":"shrink_noisy200","steps_before":200,"steps_after":1,
 *    "candidates":N,"invalid":N,"seconds":S,"candidates_per_s":R,
 *    "full_run_s":S}
 * Usage: bench_shrink [--rounds N] [FILE]  (default 1 round, the fixture)
 * Main thread only (the runs are in-process, one at a time).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replicaset.h"
#include "scn/run.h"
#include "scn/shrink.h"

#ifndef KH_SHRINK_FIXTURE
#define KH_SHRINK_FIXTURE "tests/fixtures/shrink/noisy-200.yaml"
#endif

static int replicaset_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_replicaset_setup(mgr, config);
}

int main(int argc, char **argv)
{
    const char *file = KH_SHRINK_FIXTURE;
    int rounds = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else
            file = argv[i];
    }
    if (rounds < 1) {
        fprintf(stderr, "bench_shrink: --rounds N (N >= 1)\n");
        return 2;
    }
    scn_register_controller("replicaset", replicaset_setup, NULL);
    scn_scenario *sc = NULL;
    scn_error err = {0};
    if (scn_scenario_load(file, &sc, &err) < 0) {
        char msg[1200];
        scn_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "bench_shrink: %s\n", msg);
        return 2;
    }
    scn_run_options ro = {.seed = 1, .seed_given = true};
    scn_run_result full;
    if (scn_run(sc, &ro, &full) < 0) {
        fprintf(stderr, "bench_shrink: %s\n", full.message);
        scn_scenario_free(sc);
        return 1;
    }
    int status = 0;
    for (int k = 0; k < rounds; k++) {
        scn_shrink_options o = {.seed = 1, .same_failure = true};
        scn_shrink_result r;
        if (scn_shrink(sc, &o, &r, &err) < 0) {
            fprintf(stderr, "bench_shrink: %s\n", err.message);
            status = 1;
            break;
        }
        printf("{\"bench\":\"shrink_noisy200\",\"steps_before\":%zu,\"steps_after\":%zu,"
               "\"fixtures_before\":%zu,\"fixtures_after\":%zu,\"candidates\":%lu,"
               "\"invalid\":%lu,\"seconds\":%.3f,\"candidates_per_s\":%.1f,\"full_run_s\":%.3f,"
               "\"budget_exhausted\":%s}\n",
               r.steps_before, r.steps_after, r.fixtures_before, r.fixtures_after, r.candidates,
               r.invalid, r.seconds, r.candidates_per_s, full.real_seconds,
               r.budget_exhausted ? "true" : "false");
        fflush(stdout);
        scn_shrink_result_deinit(&r);
    }
    scn_scenario_free(sc);
    return status;
}
