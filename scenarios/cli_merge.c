/*
 * cli_merge.c - `scenario merge REPORT... [--junit OUT] [--json OUT]`: the
 * reports of a campaign's shards (run/explore --json or --junit) combined
 * into one, checked for missing and disagreeing shards (merge.h).
 *
 * Prints the failing runs with their replay commands, in file and seed
 * order, and a summary line. Exit codes as the other commands: 0 every run
 * passed, 1 some failed, 2 bad input (a report unreadable or malformed,
 * shards missing or disagreeing: the message names the file).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "junit.h"
#include "merge.h"
#include "report.h"
#include "scn/scenario.h"
#include "scn_int.h"

#define MAX_REPORTS 100000

static void usage(void)
{
    fprintf(stderr, "usage: scenario merge REPORT... [--junit OUT] [--json OUT]\n"
                    "  REPORT: a JSON (--json) or JUnit (--junit) report of run or explore\n");
}

static int write_json(const scn_merge *m, const char *path)
{
    scn_report_meta meta;
    int rc;
    scn_jreport *r;

    scn__merge_meta(m, &meta, NULL);
    r = scn__jreport_open(path, &meta, &rc);
    if (!r)
        return rc;
    for (size_t i = 0; i < scn__merge_count(m); i++) {
        const scn_merged_run *x = scn__merge_get(m, i);
        scn_report_entry e = {.file = x->file,
                              .scenario = x->scenario,
                              .seed = x->seed,
                              .verdict = x->verdict,
                              .message = x->message,
                              .has_trace = x->has_trace,
                              .trace = x->trace,
                              .time_s = x->time_s,
                              .replay = x->replay};
        if ((rc = scn__jreport_add(r, &e)) != 0) {
            scn__jreport_discard(r);
            return rc;
        }
    }
    return scn__jreport_close(r);
}

/* The same properties as run/explore write (cli.c), for the whole. */
static int junit_properties(scn_junit *j, const scn_report_meta *meta)
{
    char v[64];
    int rc = scn__junit_property(j, "command", meta->command);

    rc |= scn__junit_property(j, "shard", "0/1");
    if (meta->seeds_given) {
        snprintf(v, sizeof v, "%" PRIu64 "..%" PRIu64, meta->seed_first, meta->seed_last);
        rc |= scn__junit_property(j, "seeds", v);
    }
    for (size_t i = 0; i < meta->nfiles; i++)
        rc |= scn__junit_property(j, "file", meta->files[i]);
    return rc ? SCN_ERR_NOMEM : 0;
}

static int write_junit(const scn_merge *m, const char *path)
{
    scn_report_meta meta;
    scn_junit *j = scn__junit_new("scenarios");
    int rc = SCN_ERR_NOMEM;

    scn__merge_meta(m, &meta, NULL);
    if (!j || junit_properties(j, &meta) != 0)
        goto out;
    for (size_t i = 0; i < scn__merge_count(m); i++) {
        const scn_merged_run *x = scn__merge_get(m, i);
        char name[300], out[4100];
        snprintf(name, sizeof name, "%s seed=%" PRIu64, x->scenario, x->seed);
        snprintf(out, sizeof out, "%s\n", x->replay);
        scn_junit_case c = {.name = name,
                            .classname = x->file,
                            .time_s = x->time_s,
                            .status = x->verdict == SCN_VERDICT_PASS   ? SCN_JUNIT_PASSED
                                      : x->verdict == SCN_VERDICT_FAIL ? SCN_JUNIT_FAILED
                                                                       : SCN_JUNIT_ERROR,
                            .message = x->verdict == SCN_VERDICT_PASS ? NULL : x->message,
                            .system_out = x->replay[0] ? out : NULL};
        if ((rc = scn__junit_add(j, "scenarios", &c)) != 0)
            goto out;
    }
    rc = scn__junit_save(j, path);
out:
    scn__junit_free(j);
    return rc;
}

static void print_summary(const scn_merge *m)
{
    unsigned long passed = 0, failed = 0, errors = 0;
    scn_report_meta meta;
    int nshards;
    bool one_file;

    scn__merge_meta(m, &meta, &nshards);
    one_file = meta.nfiles == 1;
    for (size_t i = 0; i < scn__merge_count(m); i++) {
        const scn_merged_run *x = scn__merge_get(m, i);
        passed += x->verdict == SCN_VERDICT_PASS;
        failed += x->verdict == SCN_VERDICT_FAIL;
        errors += x->verdict == SCN_VERDICT_ERROR;
        if (x->verdict != SCN_VERDICT_PASS)
            printf("%s %s (%s) seed=%" PRIu64 "\n  %s\n  replay: %s\n",
                   x->verdict == SCN_VERDICT_FAIL ? "FAIL" : "ERROR", x->scenario, x->file, x->seed,
                   x->message, x->replay);
    }
    printf("merge: %zu reports", scn__merge_reports(m));
    if (nshards)
        printf(" (%d shards)", nshards);
    printf(", %zu runs, %lu passed, %lu failed, %lu errors", scn__merge_count(m), passed, failed,
           errors);
    if (failed + errors) {
        printf("; failing:");
        for (size_t i = 0; i < scn__merge_count(m); i++) {
            const scn_merged_run *x = scn__merge_get(m, i);
            if (x->verdict == SCN_VERDICT_PASS)
                continue;
            if (one_file)
                printf(" %" PRIu64, x->seed);
            else
                printf(" %s:%" PRIu64, x->file, x->seed);
        }
    }
    printf("\n");
}

int scn__cmd_merge(int argc, char **argv)
{
    const char *junit = NULL, *json = NULL;
    scn_merge *m = scn__merge_new();
    char err[1024];
    int status = 2, n = 0, rc;

    if (!m) {
        fprintf(stderr, "scenario merge: out of memory\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if ((!strcmp(argv[i], "--junit") || !strcmp(argv[i], "--json")) && i + 1 < argc) {
            *(argv[i][3] == 'u' ? &junit : &json) = argv[i + 1];
            i++;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage();
            status = 0;
            goto out;
        } else if (!strcmp(argv[i], "--junit") || !strcmp(argv[i], "--json")) {
            fprintf(stderr, "scenario merge: %s needs a file name\n", argv[i]);
            goto out;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "scenario merge: unknown option %s\n", argv[i]);
            usage();
            goto out;
        } else if (n++ >= MAX_REPORTS) {
            fprintf(stderr, "scenario merge: more than %d reports\n", MAX_REPORTS);
            goto out;
        } else if ((rc = scn__merge_add_file(m, argv[i], err, sizeof err)) != 0) {
            fprintf(stderr, "scenario merge: %s\n", err[0] ? err : scn_strerror(rc));
            goto out;
        }
    }
    if (n == 0) {
        usage();
        goto out;
    }
    if ((rc = scn__merge_finish(m, err, sizeof err)) != 0) {
        fprintf(stderr, "scenario merge: %s\n", err[0] ? err : scn_strerror(rc));
        goto out;
    }
    print_summary(m);
    status = 0;
    for (size_t i = 0; i < scn__merge_count(m); i++)
        if (scn__merge_get(m, i)->verdict != SCN_VERDICT_PASS)
            status = 1;
    if (json && (rc = write_json(m, json)) != 0) {
        fprintf(stderr, "scenario merge: --json %s: cannot write it: %s\n", json, scn_strerror(rc));
        status = 2;
    }
    if (junit && (rc = write_junit(m, junit)) != 0) {
        fprintf(stderr, "scenario merge: --junit %s: cannot write it: %s\n", junit,
                scn_strerror(rc));
        status = 2;
    }
out:
    scn__merge_free(m);
    return status;
}
