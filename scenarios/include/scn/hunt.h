/*
 * scn/hunt.h - bug-hunting campaigns (`scenario hunt`): perturb what the
 * controllers under test see, at every point a run can enumerate, and
 * check oracles; report each distinct failure once, with a scenario file
 * that `scenario run` replays exactly.
 *
 * For each base scenario and seed, a baseline run (the base, then a settle
 * advance and a tail advance) gives the reference: its verdict, its final
 * state (masked, scn/state_mask.h), how many writes each controller's
 * replica 0 made. Then every perturbation is an edit of the scenario
 * (docs/scenarios.md, "Hunting bugs"):
 *   crash       replica 0 crashes at its kth write and restarts at once
 *               (atStart crash {atWrite: k, restart: true}), k = 1..writes;
 *   stale       replica 0 restarts before a step reading a view lagging 2
 *               or 8 revisions (all resources, or one it lists or watches)
 *               or with its watch events a minute late, until two minutes
 *               after the step, then restarts again and reads the present;
 *   unobserved  the same window with every watch event withheld (at steps
 *               that act), then a relist: intermediate states never seen;
 *   error       a controller's kth write is answered 409, 500 or never
 *               answered (loseResponse).
 * Oracles on each perturbed run: the scenario's own checks (invariants,
 * the base's last expects, waits given at least the settle time);
 * quiescence (no write by a controller under test during the tail, when
 * the baseline made none); the differential (the masked final state
 * equals the baseline's); reconcile errors (none during the tail, when
 * the baseline had none). A finding's signature is its base, oracle,
 * class and what broke (the invariant or step, the first differing kind
 * and field); the first perturbation that shows it is kept.
 *
 * Ownership: the base scenarios are borrowed; a report's findings are the
 * caller's (scn_hunt_report_deinit).
 * Threads: as scn_run: the caller's thread drives every run; with jobs > 1
 * perturbed runs happen in child processes (fork), so call it from a
 * process with one thread.
 */
#ifndef SCN_HUNT_H
#define SCN_HUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scn/run.h"
#include "scn/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum scn_hunt_class {
    SCN_HUNT_BASELINE = 0, /* the base itself, unperturbed */
    SCN_HUNT_CRASH,        /* intermediate state */
    SCN_HUNT_STALE,        /* stale state */
    SCN_HUNT_UNOBSERVED,   /* unobserved state */
    SCN_HUNT_ERROR,        /* conflicts, server errors, lost answers */
    SCN_HUNT_N_CLASSES
} scn_hunt_class;

typedef enum scn_hunt_oracle {
    SCN_HUNT_CHECKS = 0,       /* the scenario's steps and invariants */
    SCN_HUNT_QUIESCENCE,       /* writes during the tail */
    SCN_HUNT_DIFFERENTIAL,     /* the final state differs from the baseline's */
    SCN_HUNT_RECONCILE_ERRORS, /* reconcile errors during the tail */
    SCN_HUNT_N_ORACLES
} scn_hunt_oracle;

/* "baseline", "crash", "stale", "unobserved", "error"; and the inverse
 * (-1 if unknown). */
const char *scn_hunt_class_name(scn_hunt_class c);
int scn_hunt_class_parse(const char *name);
/* "checks", "quiescence", "differential", "reconcile-errors". */
const char *scn_hunt_oracle_name(scn_hunt_oracle o);

typedef struct scn_hunt_options {
    uint64_t seed_lo, seed_hi; /* with seeds_given: every base under each seed */
    bool seeds_given;          /* else the base's own seed, or 1 */
    int64_t budget_ns;         /* real time for the campaign; 0 = 60 s */
    int jobs;                  /* child processes for perturbed runs; <= 1: in-process */
    unsigned classes;          /* bits (1u << scn_hunt_class); 0 = every class */
    int64_t settle_ns;         /* virtual time appended after the steps; 0 = 5 min */
    int64_t tail_ns;           /* then the tail the quiescence and error oracles watch;
                                * 0 = 2 min */
    const char *out_dir;       /* each finding's scenario is written there (created if
                                * missing); NULL: not written */
    bool shrink;               /* shrink findings of the checks oracle (scn_shrink) */
    int64_t shrink_budget_ns;  /* per finding; 0 = 10 s */
    long max_steps;            /* scheduler turns per perturbed run (scn_run_options);
                                * 0: 20 times the baseline's, at least 20000 */
    bool verbose;              /* a line per run on stderr */
} scn_hunt_options;

typedef struct scn_hunt_finding {
    size_t base;           /* index in the bases given */
    const char *base_name; /* borrowed from the base scenario */
    const char *base_file; /* borrowed; may be NULL */
    scn_hunt_oracle oracle;
    scn_hunt_class cls;
    char *signature;    /* "differential crash ConfigMap .status.x" */
    char *perturbation; /* "crash replica 0 at its write 3 of 12, restarted at once" */
    uint64_t seed;
    char *message;          /* what broke, one paragraph */
    char *report;           /* the differential's state diff (A baseline, B perturbed), or NULL */
    char *yaml;             /* the scenario that replays it (seed set) */
    char *path;             /* where yaml was written, or NULL */
    char *replay;           /* "scenario run PATH --seed N" (malloc'ed; a caller may
                             * replace it, e.g. with its program and plugins) */
    unsigned long shown_by; /* perturbations that showed the same signature */
    bool shrunk;            /* yaml is scn_shrink's result */
    double found_seconds;   /* real time into the campaign when it was first shown */
} scn_hunt_finding;

typedef struct scn_hunt_report {
    scn_hunt_finding *findings;
    size_t n_findings;
    unsigned long planned[SCN_HUNT_N_CLASSES]; /* runs planned, by class */
    unsigned long ran[SCN_HUNT_N_CLASSES];     /* runs made, by class */
    unsigned long skipped;      /* baselines that failed their checks: not perturbed */
    unsigned long not_tried;    /* perturbed runs not made: the budget ran out */
    unsigned long run_errors;   /* runs that could not start (setup) or crashed */
    unsigned long inapplicable; /* perturbed runs in which a base step could not act
                                 * (e.g. `restart: {replica: leader}` while the
                                 * leader restarts): no finding */
    bool budget_exhausted;
    double seconds;
} scn_hunt_report;

/*
 * Run a campaign over bases[0..n) (borrowed, each parsed and checked).
 * 0 and *out filled (out->n_findings says whether anything was found);
 * SCN_ERR_INPUT (no bases, bad options), SCN_ERR_NOMEM, SCN_ERR_IO (the
 * out_dir cannot be written), with *err filled if non-NULL.
 */
int scn_hunt(const scn_scenario *const *bases, size_t n, const scn_hunt_options *opts,
             scn_hunt_report *out, scn_error *err);
void scn_hunt_report_deinit(scn_hunt_report *r);

/*
 * The report as a JSON document (a new reference, NULL without memory):
 * {"findings": [{oracle, class, signature, base, file, seed, perturbation,
 * message, report, scenario (path), replay, shownBy}], "planned": {class:
 * n}, "ran": {class: n}, "skipped", "notTried", "runErrors", "inapplicable",
 * "budgetExhausted", "seconds"}.
 */
json_t *scn_hunt_report_json(const scn_hunt_report *r);

#ifdef __cplusplus
}
#endif

#endif
