/*
 * scn/diff.h - differential replay: one scenario, one seed, two controller
 * builds. Run A uses the registered controllers; run B the same, except
 * the controllers that have a replacement (scn_diff_replace: another
 * registered controller, or one a plugin registers). The masked cluster
 * states (scn/state_mask.h) are compared at matching points: after setup,
 * after each step (its last quiescent point) and at the end; the first
 * point where they differ is reported as a readable diff of objects.
 *
 * Ownership: the scenario and mask are borrowed; a result's report is the
 * caller's (scn_diff_result_deinit).
 * Threads: as scn_run; replacements are set before any run, from one thread.
 */
#ifndef SCN_DIFF_H
#define SCN_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "scn/run.h"
#include "scn/scenario.h"
#include "scn/state_mask.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Run B uses fn/user for the controller called name. 0, SCN_ERR_INPUT
 * (NULL, or the table is full), SCN_ERR_NOMEM. */
int scn_diff_replace(const char *name, scn_setup_fn fn, void *user);
/* Run B uses the registered controller `with` for `name`. SCN_ERR_INPUT if
 * `with` is not registered. */
int scn_diff_replace_with(const char *name, const char *with);
/* While on, scn_register_controller adds replacements instead (for loading
 * a plugin whose controllers replace those of the same name). */
void scn_diff_capture(bool on);
/* Whether a replacement exists for name. */
bool scn_diff_replaced(const char *name);

typedef struct scn_diff_options {
    uint64_t seed;
    const scn_mask *mask; /* NULL: the defaults plus the scenario's diff section */
    long max_steps;       /* scn_run_options */
    bool verbose;
} scn_diff_options;

typedef struct scn_diff_result {
    bool differ;
    int step;             /* the first differing point: -1 setup, a step index,
                           * n_steps the end; meaningful when differ */
    int64_t virtual_ns_a; /* virtual time of that point in each run */
    int64_t virtual_ns_b;
    size_t points;       /* points compared */
    char *report;        /* what differs, readable (malloc'ed); NULL if equal */
    scn_run_result a, b; /* the two runs */
} scn_diff_result;

/*
 * Run sc under opts->seed twice (A, then B with the replacements) and
 * compare. 0 and *out filled (out->differ: a state or the verdicts
 * differ); SCN_ERR_INPUT (no replacement names one of the scenario's
 * controllers; a bad diff section), SCN_ERR_SETUP (a run could not start),
 * SCN_ERR_NOMEM, with *err filled if non-NULL.
 */
int scn_diff(const scn_scenario *sc, const scn_diff_options *opts, scn_diff_result *out,
             scn_error *err);
void scn_diff_result_deinit(scn_diff_result *r);

/*
 * Two masked states (arrays, borrowed) compared object by object (by
 * apiVersion, kind, namespace, name) and field by field. 0 if equal; 1 and
 * a readable report in *report (malloc'ed) if not:
 *   ConfigMap default/demo-data (v1): only in B
 *   Singleton default/demo (example.com/v1):
 *     .status.configMapName: "demo-<generated-1>" -> "demo-data"
 * SCN_ERR_NOMEM on allocation failure. At most ~200 lines are written.
 */
int scn_diff_states(const json_t *a, const json_t *b, char **report);

#ifdef __cplusplus
}
#endif

#endif
