/*
 * scn/shrink.h - shrinking a failing scenario to the least that still
 * fails: delta debugging (ddmin) over its steps (fault steps among them),
 * its fixtures, its controllers and the objects of each apply step,
 * one-at-a-time removals and fewer
 * controller replicas until nothing more can go, and nearby seeds when a
 * removal alone makes the failure hide.
 *
 * Every candidate is a scenario document made from the original (fixtures
 * and manifests inline, so it stands alone), parsed again (a candidate that
 * does not parse, e.g. a fault removal whose fault is gone, is skipped) and
 * run in-process with scn_run.
 *
 * Ownership: the input scenario is borrowed; the result's scenario and text
 * are the caller's (scn_shrink_result_deinit).
 * Threads: as scn_run (one run at a time in a process; the calling thread
 * drives every run).
 */
#ifndef SCN_SHRINK_H
#define SCN_SHRINK_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "scn/run.h"
#include "scn/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Whether a candidate still fails the way that matters. r is the finished
 * run of candidate under seed (borrowed). NULL in the options: any failure
 * of a run that ran (not a setup error, not a scheduler stall), or with
 * same_failure, one with the same signature (scn_shrink_signature) as the
 * original's. A failure is a check that failed: an invariant, an expect, a
 * wait that timed out, or no quiescence; a step that could not act (an
 * apply of a kind whose CRD was removed) is not.
 */
typedef bool (*scn_shrink_pred)(const scn_scenario *candidate, uint64_t seed,
                                const scn_run_result *r, void *ud);

typedef struct scn_shrink_options {
    uint64_t seed;               /* the failing seed */
    bool same_failure;           /* the same invariant or step condition must fail */
    int64_t budget_ns;           /* real time for the whole shrink; 0 = 60 s */
    unsigned nearby_seeds;       /* seeds tried after seed when a removal hides the
                                  * failure; 0 = 4 */
    bool no_seeds;               /* never change the seed */
    scn_shrink_pred still_fails; /* NULL: see scn_shrink_pred */
    void *ud;
    long max_steps; /* scheduler turns per run (scn_run_options) */
    bool verbose;   /* one line per kept removal on stderr */
} scn_shrink_options;

typedef struct scn_shrink_result {
    json_t *doc;              /* the minimal scenario as a document (new reference) */
    char *yaml;               /* it as YAML (malloc'ed), with `seed:` set */
    scn_scenario *scenario;   /* the YAML parsed (its file: the original's name) */
    uint64_t seed;            /* the seed it fails with */
    scn_run_result failure;   /* its failing run */
    unsigned long candidates; /* runs made (including the first) */
    unsigned long invalid;    /* candidates that did not parse */
    double seconds;
    double candidates_per_s;
    bool budget_exhausted; /* stopped by the budget: smaller, maybe not least */
    size_t steps_before, steps_after;
    size_t fixtures_before, fixtures_after;
    size_t controllers_before, controllers_after;
    int replicas_before, replicas_after; /* summed over controllers */
} scn_shrink_result;

/*
 * Shrink sc, which must fail under opts->seed (else SCN_ERR_INPUT with the
 * reason in err->message: "the scenario passes with seed N"). 0 and *out
 * filled; or SCN_ERR_INPUT, SCN_ERR_NOMEM, SCN_ERR_SETUP (the first run
 * could not start) with *out zeroed and *err filled if non-NULL.
 */
int scn_shrink(const scn_scenario *sc, const scn_shrink_options *opts, scn_shrink_result *out,
               scn_error *err);
void scn_shrink_result_deinit(scn_shrink_result *r);

/*
 * What failed, without the parts that move while shrinking (line numbers,
 * counts): "invariant 2" or "step expect {...}" into buf. sc and r borrowed.
 */
void scn_shrink_signature(const scn_scenario *sc, const scn_run_result *r, char *buf, size_t len);

/*
 * The scenario as a self-contained document: fixtures as inline objects,
 * apply steps as inline manifests, other parts as written. A new reference,
 * or NULL on allocation failure. scn_scenario_parse of its YAML (kh_yaml_dump)
 * gives the same fixtures, steps, controllers and invariants.
 */
json_t *scn_scenario_to_doc(const scn_scenario *sc);

/* scn_scenario_to_doc as YAML text (malloc'ed), or NULL. */
char *scn_scenario_to_yaml(const scn_scenario *sc);

#ifdef __cplusplus
}
#endif

#endif
