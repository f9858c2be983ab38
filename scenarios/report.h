/*
 * report.h - the JSON report of a campaign (`scenario run/explore --json
 * FILE`, and what `scenario merge` writes), written as the results come.
 *
 * The file (docs/scenarios.md, "Reports"):
 *   {"report": "scenario", "version": 1, "command": "explore",
 *    "files": ["a.yaml"], "seeds": {"first": 1, "last": 40},
 *    "shard": {"index": 0, "count": 4},
 *    "results": [
 *     {"file": "a.yaml", "scenario": "a", "seed": 1, "verdict": "pass",
 *      "message": "", "trace": "00ab...", "time": 0.031,
 *      "replay": "scenario replay a.yaml --seed 1 --trace trace.jsonl"},
 *     ...],
 *    "summary": {"runs": 10, "passed": 8, "failed": 2, "errors": 0,
 *                "time": 0.31, "failing": [{"file", "seed", "message", "replay"}, ...]}}
 * "seeds" is null for `run`; "trace" is null when the run left no trace
 * (it crashed, or it could not start). One result a line, so a report is
 * also easy to grep.
 *
 * Memory stays flat: each result is written at once, the failing ones
 * also to an anonymous temporary file copied into the summary at the end.
 * The report goes to a temporary file beside path, renamed over path by
 * scn__jreport_close: a reader never sees half a report, and a path that
 * cannot be written is found before the first run.
 *
 * Ownership: the functions copy what they are given. Threads: a report is
 * not thread-safe; one thread (the command line's).
 */
#ifndef SCN_REPORT_H
#define SCN_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct scn_jreport scn_jreport;

typedef enum scn_verdict {
    SCN_VERDICT_PASS = 0,
    SCN_VERDICT_FAIL,  /* a check failed, or the run crashed */
    SCN_VERDICT_ERROR, /* it could not run (bad input, set-up) */
} scn_verdict;

/* "pass", "fail", "error"; and back (-1 for anything else). */
const char *scn__verdict_name(scn_verdict v);
int scn__verdict_parse(const char *s);

/* What the report covers: the work that was split into shards. */
typedef struct scn_report_meta {
    const char *command;      /* "run", "explore" */
    const char *const *files; /* the scenario files, in the order given */
    size_t nfiles;
    bool seeds_given; /* explore's --seeds first..last */
    uint64_t seed_first, seed_last;
    int shard_index, shard_count; /* 0/1 for the whole */
} scn_report_meta;

/* One run. */
typedef struct scn_report_entry {
    const char *file;     /* the scenario file */
    const char *scenario; /* its name (NULL: the file) */
    uint64_t seed;
    scn_verdict verdict;
    const char *message; /* why it failed (NULL: "") */
    bool has_trace;
    uint64_t trace; /* the trace's hash */
    double time_s;  /* real seconds */
    const char *replay;
} scn_report_entry;

/* Start a report at path (a temporary file beside it until closed). NULL
 * with *rc set (SCN_ERR_IO: it cannot be created; SCN_ERR_NOMEM;
 * SCN_ERR_INPUT: a NULL argument). */
scn_jreport *scn__jreport_open(const char *path, const scn_report_meta *m, int *rc);

/* Add a run: 0, SCN_ERR_INPUT (NULL, no file), SCN_ERR_IO. */
int scn__jreport_add(scn_jreport *r, const scn_report_entry *e);

/* Write the summary, rename the file over path and free r: 0 or
 * SCN_ERR_IO (then path is untouched and the temporary file removed).
 * NULL: 0. */
int scn__jreport_close(scn_jreport *r);

/* Remove the temporary file and free r, leaving path untouched. */
void scn__jreport_discard(scn_jreport *r);

#endif
