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

/* Add a controller to the registry (name copied). SCN_ERR_INPUT if taken,
 * empty, or longer than SCN_CONTROLLER_NAME_MAX bytes. */
int scn_register_controller(const char *name, scn_setup_fn fn, void *user);
/* The longest controller name: its replicas' User-Agents,
 * "scenario/<name>-<k>.r<n>", must fit the 128 bytes the fake server
 * keeps of a watch's client, by which a run matches a watch to the
 * informer reading it. */
#define SCN_CONTROLLER_NAME_MAX 100
/* The example controllers (replicaset, ...), registered once. Defined by
 * the `scenario` program (scenarios/builtin.c), not by libscenario. */
void scn_register_examples(void);

typedef struct scn_run_options {
    uint64_t seed;           /* used unless the scenario fixes one */
    bool seed_given;         /* the seed was chosen on the command line: it wins */
    const char *trace_path;  /* write the trace there (NULL: only its hash) */
    const char *record_path; /* record every request there as an audit log
                              * (fakeapi_record_open); NULL: none */
    long max_steps;          /* scheduler steps before a run counts as a livelock; 0 = 200000 */
    bool verbose;            /* progress on stderr */
    /* The managers reach the server over loopback HTTP (libcurl to
     * libmicrohttpd) instead of in-process (fakeapi_exchange through a
     * libctrl round-tripper, the default, which is faster). Traces are the
     * same either way. The environment variable SCENARIO_TRANSPORT=http
     * sets it for every run of a process. */
    bool over_http;

    /* Called at each quiescent point, before the invariants are checked
     * there, and once more when the run ends (passed or not): step is -1
     * during setup, the step's index, or sc->n_steps at the end; objects is
     * every object in the store (borrowed; fakeapi_objects). NULL: none
     * (and no cost). Runs on the driver thread, between turns: it must not
     * block, and it cannot change the run. */
    void (*on_state)(void *ud, int step, int64_t virtual_ns, const json_t *objects);
    void *state_ud;
} scn_run_options;

/* Where one run's real time went (wall-clock seconds unless said), for
 * benchmarks (tests/bench/bench_scenarios.c); no trace depends on them. */
typedef struct scn_run_timing {
    double fakeapi_start;  /* fakeapi_start: store, schema, HTTP listener */
    double trace_open;     /* the trace (and audit record) files opened */
    double fixtures;       /* the fixtures applied */
    double managers_start; /* every manager made, started and run to quiescence */
    double steps;          /* the scenario's steps (turns, clock moves, checks) */
    double teardown;       /* managers stopped and joined, the server stopped */
    double trace_hash;     /* the trace file read back and hashed */
    double cpu;            /* process CPU time (all threads) over the run */
    double handoff_wait;   /* the driver waiting for an actor to give the turn back */
    unsigned long thread_turns, outside_turns, advances;
    unsigned long http_requests;         /* client side, every manager's (libctrl transport) */
    double http_seconds;                 /* summed over those requests, curl's perform call */
    unsigned long trace_writes;          /* trace lines written by the server */
    double trace_write_seconds;          /* summed over those lines: format and write */
    long ctx_voluntary, ctx_involuntary; /* context switches of the process (getrusage) */
} scn_run_timing;

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
    bool stalled; /* failed on the scheduler's watchdog: a thread blocked outside the clock */
    /* controller_runtime_reconcile_errors_total of the controllers under test
     * (every replica and incarnation, not the cluster's), over the run and
     * during its last step alone */
    unsigned long reconcile_errors;
    unsigned long reconcile_errors_last_step;
    /* keys of the running controllers under test whose last reconcile
     * failed, at the end (workqueue_failing_keys): an error that persists
     * even when its backoff has outgrown the last step */
    unsigned long failing_keys;
    scn_run_timing timing;
} scn_run_result;

/*
 * Run one scenario. Returns 0 when it ran (result->passed says whether it
 * passed), or a negative scn_errcode when it could not run (setup failed).
 */
int scn_run(const scn_scenario *sc, const scn_run_options *opts, scn_run_result *result);

/* What scn_check_determinism found. */
typedef struct scn_determinism {
    unsigned runs;            /* runs compared with the reference */
    unsigned differing;       /* of those, runs whose trace is not byte-identical */
    unsigned stalled;         /* of those, runs that failed on the scheduler's watchdog */
    unsigned first_diff;      /* 1-based index of the first differing run, 0 = none */
    unsigned long line;       /* its first differing trace line, 1-based */
    char expected[512];       /* that line in the reference ("" = the reference ended) */
    char got[512];            /* and in the differing run ("" = that run ended) */
    scn_run_result reference; /* the reference run (unset when reference_trace is given) */
    scn_run_result last;      /* the last run made */
} scn_determinism;

/*
 * Run sc `runs` times with opts (the seed must be given) and compare every
 * trace byte for byte with a reference: the trace file reference_trace
 * (a run recorded earlier, e.g. on a quiet machine), or when that is NULL
 * a first run of its own, made first and written to opts->trace_path if
 * set. Fills *out (the first difference in detail). Returns 0 when the
 * comparisons were made (out->differing says whether they agreed), or a
 * negative scn_errcode (a run could not start, a trace cannot be read).
 * Threads: as scn_run.
 */
int scn_check_determinism(const scn_scenario *sc, const scn_run_options *opts, unsigned runs,
                          const char *reference_trace, scn_determinism *out);

/*
 * The `scenario` program: run, explore, replay (docs/scenarios.md). Returns
 * the exit code: 0 all passed, 1 a scenario failed, 2 bad input.
 */
int scn_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
