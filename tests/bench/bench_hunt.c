/*
 * bench_hunt.c - what `scenario hunt` finds and how long it takes: each
 * base scenario hunted on its own (one campaign per file), one JSON object
 * a line:
 *   {"bench":"hunt","base":"singleton-buggy","file":F,"findings":2,
 *    "signatures":["checks stale invariant 0",...],"runs":108,
 *    "ran":{"baseline":1,"crash":6,...},"notTried":0,"seconds":4.4,
 *    "firstFinding":0.8,"jobs":2}
 * (firstFinding: real seconds into the campaign when the first finding
 * was shown, null without one), then a summary {"bench":"hunt_total",
 * "bases":N,"with_findings":N,"seconds":S}.
 * Usage: bench_hunt [--budget 60s] [--jobs J] [FILE...]; without files,
 * scenarios/examples/singleton-{buggy,fixed}.yaml and every
 * scenarios/examples/hunt-*.yaml (the planted bugs and their fixed twins),
 * then the CRD campaigns (`scenario hunt --crd`) of the Frontend pair,
 * "base":"crd:hunt-frontend-buggy" and "crd:hunt-frontend-fixed".
 * Main thread only (workers are child processes).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hunt_gen.h"
#include "scn/hunt.h"
#include "scn/run.h"

#ifndef KH_FIXTURES
#define KH_FIXTURES "fixtures"
#endif
#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif

/* One campaign over bases (borrowed), printed as one line named name. */
static int bench_bases(const char *name, const char *file, const scn_scenario *const *bases,
                       size_t nb, const scn_hunt_options *o, double *seconds)
{
    scn_hunt_report r;
    scn_error err = {0};
    int rc = scn_hunt(bases, nb, o, &r, &err);
    if (rc < 0) {
        fprintf(stderr, "bench_hunt: %s: %s\n", file, err.message);
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
    json_t *line = json_pack(
        "{s:s, s:s, s:s, s:I, s:o, s:I, s:o, s:I, s:f, s:o, s:i}", "bench", "hunt", "base", name,
        "file", file, "findings", (json_int_t)r.n_findings, "signatures", sigs, "runs",
        (json_int_t)runs, "ran", ran, "notTried", (json_int_t)r.not_tried, "seconds", r.seconds,
        "firstFinding", r.n_findings ? json_real(r.findings[0].found_seconds) : json_null(), "jobs",
        o->jobs > 1 ? o->jobs : 1);
    char *text = line ? json_dumps(line, JSON_COMPACT | JSON_REAL_PRECISION(5)) : NULL;
    if (text)
        printf("%s\n", text);
    fflush(stdout);
    free(text);
    json_decref(line);
    *seconds += r.seconds;
    rc = r.n_findings > 0;
    scn_hunt_report_deinit(&r);
    return rc;
}

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
    int rc = bench_bases(sc->name, file, (const scn_scenario *const[]){sc}, 1, o, seconds);
    scn_scenario_free(sc);
    return rc;
}

/* The campaign of `scenario hunt --crd` for one controller of the
 * Frontend pair (examples/hunt/frontend.c, fixtures/hunt). */
static int bench_crd(const char *controller, const scn_hunt_options *o, double *seconds)
{
    static const char crd[] = KH_FIXTURES "/hunt/frontend-crd.yaml";
    scn_gen_options g = {.seed = 1};
    scn_scenario **bases = NULL;
    size_t nb = 0;
    scn_error err = {0};
    if (scn_hunt_crd_bases(crd, controller, KH_FIXTURES "/hunt/frontend.yaml", NULL, 0, &g, &bases,
                           &nb, &err) < 0) {
        fprintf(stderr, "bench_hunt: %s: %s\n", crd, err.message);
        return -1;
    }
    char name[200];
    snprintf(name, sizeof name, "crd:%s", controller);
    int rc = bench_bases(name, crd, (const scn_scenario *const *)bases, nb, o, seconds);
    for (size_t i = 0; i < nb; i++)
        scn_scenario_free(bases[i]);
    free(bases);
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
    if (globbed) { /* the default set: the CRD campaigns too */
        static const char *const crd_pair[] = {"hunt-frontend-buggy", "hunt-frontend-fixed"};
        for (size_t i = 0; i < 2; i++) {
            int rc = bench_crd(crd_pair[i], &o, &seconds);
            if (rc < 0)
                status = 1;
            else
                found += rc;
            n++;
        }
    }
    printf("{\"bench\":\"hunt_total\",\"bases\":%zu,\"with_findings\":%d,\"seconds\":%.1f}\n", n,
           found, seconds);
    if (globbed)
        globfree(&g);
    free(files);
    return status;
}
