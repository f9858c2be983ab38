/*
 * bench_hunt.c - what `scenario hunt` finds and how long it takes: each
 * base scenario hunted on its own (one campaign per file), one JSON object
 * a line:
 *   {"bench":"hunt","base":"singleton-buggy","file":F,"findings":2,
 *    "signatures":["checks stale invariant 0",...],"runs":108,
 *    "ran":{"baseline":1,"crash":6,...},"notTried":0,"seconds":4.4,"jobs":2}
 * then a summary {"bench":"hunt_total","bases":N,"with_findings":N,
 * "seconds":S}.
 * Usage: bench_hunt [--budget 60s] [--jobs J] [FILE...]; without files,
 * scenarios/examples/singleton-{buggy,fixed}.yaml and every
 * scenarios/examples/hunt-*.yaml (the planted bugs and their fixed twins).
 * Main thread only (workers are child processes).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn/hunt.h"
#include "scn/run.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif

static int bench_one(const char *file, const scn_hunt_options *o, double *seconds)
{
    scn_scenario *sc = NULL;
    scn_error err = {0};
    if (scn_scenario_load(file, &sc, &err) < 0) {
        char msg[1200];
        scn_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "bench_hunt: %s\n", msg);
        return -1;
    }
    scn_hunt_report r;
    int rc = scn_hunt((const scn_scenario *const[]){sc}, 1, o, &r, &err);
    if (rc < 0) {
        fprintf(stderr, "bench_hunt: %s: %s\n", file, err.message);
        scn_scenario_free(sc);
        return -1;
    }
    json_t *sigs = json_array(), *ran = json_object();
    unsigned long runs = 0;
    for (size_t i = 0; i < r.n_findings; i++)
        json_array_append_new(sigs, json_string(r.findings[i].signature));
    for (int c = 0; c < SCN_HUNT_N_CLASSES; c++) {
        json_object_set_new(ran, scn_hunt_class_name(c), json_integer((json_int_t)r.ran[c]));
        runs += r.ran[c];
    }
    json_t *line =
        json_pack("{s:s, s:s, s:s, s:I, s:o, s:I, s:o, s:I, s:f, s:i}", "bench", "hunt", "base",
                  sc->name, "file", file, "findings", (json_int_t)r.n_findings, "signatures", sigs,
                  "runs", (json_int_t)runs, "ran", ran, "notTried", (json_int_t)r.not_tried,
                  "seconds", r.seconds, "jobs", o->jobs > 1 ? o->jobs : 1);
    char *text = line ? json_dumps(line, JSON_COMPACT | JSON_REAL_PRECISION(5)) : NULL;
    if (text)
        printf("%s\n", text);
    fflush(stdout);
    free(text);
    json_decref(line);
    *seconds += r.seconds;
    rc = r.n_findings > 0;
    scn_hunt_report_deinit(&r);
    scn_scenario_free(sc);
    return rc;
}

int main(int argc, char **argv)
{
    scn_hunt_options o = {.jobs = 2};
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    size_t n = 0;
    glob_t g = {0};
    bool globbed = false;
    if (!files)
        return 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--budget") && i + 1 < argc) {
            json_t *d = json_string(argv[++i]);
            int rc = scn_parse_duration(d, &o.budget_ns);
            json_decref(d);
            if (rc < 0) {
                fprintf(stderr, "bench_hunt: --budget %s: not a duration\n", argv[i]);
                free(files);
                return 2;
            }
        } else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) {
            o.jobs = atoi(argv[++i]);
        } else {
            files[n++] = argv[i];
        }
    }
    scn_register_examples();
    if (n == 0) {
        static const char *const pair[] = {KH_SCENARIOS "/singleton-buggy.yaml",
                                           KH_SCENARIOS "/singleton-fixed.yaml"};
        const char **more = realloc(files, 2 * sizeof *files);
        if (!more) {
            free(files);
            return 2;
        }
        files = more;
        files[n++] = pair[0];
        files[n++] = pair[1];
        if (glob(KH_SCENARIOS "/hunt-*.yaml", 0, NULL, &g) == 0) {
            globbed = true;
            more = realloc(files, (n + g.gl_pathc) * sizeof *files);
            if (more) {
                files = more;
                for (size_t i = 0; i < g.gl_pathc; i++)
                    files[n++] = g.gl_pathv[i];
            }
        }
    }
    double seconds = 0;
    int found = 0, status = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = bench_one(files[i], &o, &seconds);
        if (rc < 0)
            status = 1;
        else
            found += rc;
    }
    printf("{\"bench\":\"hunt_total\",\"bases\":%zu,\"with_findings\":%d,\"seconds\":%.1f}\n", n,
           found, seconds);
    if (globbed)
        globfree(&g);
    free(files);
    return status;
}
