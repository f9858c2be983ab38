/*
 * scn/run.h - running scenarios: controllers against an in-process fake API
 * server under a virtual clock and a seeded scheduler. The same scenario
 * with the same seed gives a byte-identical trace.
 *
 * Controllers come from a registry: the examples register themselves; a
 * program linking libscenario registers its own before calling scn_main(),
 * or a shared library loaded with --plugin registers them from a function
 * named scn_plugin_init (see docs/scenarios.md).
 *
 * Threads: scn_register_controller before any run, from one thread. A run
 * uses the calling thread as the scenario's driver and starts its own
 * threads; runs in one process happen one at a time (scn_main runs
 * parallel jobs in child processes).
 */
#ifndef SCN_RUN_H
#define SCN_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "ctrl/manager.h"
#include "scn/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Register a controller's setup on a manager (config: the scenario's
 * controllers[].config, may be NULL). 0 or a negative code. */
typedef int (*scn_setup_fn)(ctrl_manager *mgr, const json_t *config, void *user);

/* Add a controller to the registry (name copied). SCN_ERR_INPUT if taken. */
int scn_register_controller(const char *name, scn_setup_fn fn, void *user);
/* The example controllers (replicaset, ...), registered once. Defined by
 * the `scenario` program (scenarios/builtin.c), not by libscenario. */
void scn_register_examples(void);

typedef struct scn_run_options {
    uint64_t seed;          /* used unless the scenario fixes one */
    bool seed_given;        /* the seed was chosen on the command line: it wins */
    const char *trace_path; /* write the trace there (NULL: only its hash) */
    long max_steps;         /* scheduler steps before a run counts as a livelock; 0 = 200000 */
    bool verbose;           /* progress on stderr */
} scn_run_options;

typedef struct scn_run_result {
    bool passed;
    uint64_t seed;
    char message[2048]; /* why it failed: the step, the condition, what was found */
    int failed_step;    /* index, or -1 (setup, an invariant between steps) */
    int64_t virtual_ns; /* virtual time the run took */
    double real_seconds;
    unsigned long steps; /* scheduler turns */
    uint64_t trace_hash; /* FNV-1a of the trace: equal runs, equal hashes */
    unsigned long trace_lines;
} scn_run_result;

/*
 * Run one scenario. Returns 0 when it ran (result->passed says whether it
 * passed), or a negative scn_errcode when it could not run (setup failed).
 */
int scn_run(const scn_scenario *sc, const scn_run_options *opts, scn_run_result *result);

/*
 * The `scenario` program: run, explore, replay (docs/scenarios.md). Returns
 * the exit code: 0 all passed, 1 a scenario failed, 2 bad input.
 */
int scn_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
