/*
 * merge.h - the reports of a campaign's shards combined into one (`scenario
 * merge`, docs/scenarios.md "Sharding").
 *
 * Each report (a JSON report of report.h, or a JUnit report of junit.h) is
 * read whole; its header (JSON) or properties (JUnit: command, shard,
 * seeds, file) say which campaign it belongs to and which shard it is.
 * scn__merge_finish then checks that the reports fit together:
 *   - those that name their shard all belong to one campaign (the same
 *     command, files, seeds and number of shards);
 *   - every shard of that campaign is there;
 *   - each run belongs to the shard its report claims;
 *   - a run found in two reports (overlapping shards, or a shard's JSON and
 *     JUnit reports both given) has the same verdict in both, and the same
 *     trace hash when both have one;
 * and orders the runs: by file (in the campaign's order, else by name),
 * then by seed, one entry per run.
 *
 * Ownership: the merge owns what it read; scn__merge_get and
 * scn__merge_meta borrow from it until scn__merge_free. Threads: one.
 */
#ifndef SCN_MERGE_H
#define SCN_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"

typedef struct scn_merge scn_merge;

typedef struct scn_merged_run {
    char *file, *scenario;
    uint64_t seed;
    scn_verdict verdict;
    char *message, *replay;
    bool has_trace;
    uint64_t trace;
    double time_s;
    const char *source; /* the report it came from */
    size_t report;      /* which report that is, from 0 in the order read */
} scn_merged_run;

scn_merge *scn__merge_new(void);
void scn__merge_free(scn_merge *m);

/*
 * Read the report at path (JSON or JUnit, told apart by its first
 * character). 0; or SCN_ERR_IO (it cannot be read), SCN_ERR_INPUT (it is
 * not a report, or a malformed one), SCN_ERR_NOMEM, with err (errlen
 * bytes) naming the file and what is wrong. On error the merge is as
 * before.
 */
int scn__merge_add_file(scn_merge *m, const char *path, char *err, size_t errlen);

/* The same from memory: text (len bytes) read as the report called name. */
int scn__merge_add_text(scn_merge *m, const char *name, const char *text, size_t len, char *err,
                        size_t errlen);

/* Check and order (above): 0, or SCN_ERR_INPUT with err naming the
 * reports that do not fit, SCN_ERR_NOMEM. Once only. */
int scn__merge_finish(scn_merge *m, char *err, size_t errlen);

size_t scn__merge_count(const scn_merge *m);
const scn_merged_run *scn__merge_get(const scn_merge *m, size_t i);

/* The campaign as a whole (shard 0 of 1): its command, files and seeds as
 * the reports name them (the files in the order first seen when no report
 * names them). nshards: how many shards it was split into (0: unknown). */
void scn__merge_meta(const scn_merge *m, scn_report_meta *out, int *nshards);

/* How many reports were read. */
size_t scn__merge_reports(const scn_merge *m);

#endif
