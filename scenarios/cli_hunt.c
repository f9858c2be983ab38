/*
 * cli_hunt.c - the `scenario hunt` command (called by scn_main, cli.c):
 *
 *   scenario hunt FILE... [--budget 60s] [--seeds N..M] [--jobs J]
 *   scenario hunt --crd FILE --controller NAME [--cr FILE] [--fixture FILE]...
 *                 [--changes K] [--sequences N] [--valid-only] [FILE...] (as above)
 *                 [--classes crash,stale,unobserved,error] [--settle 5m] [--tail 2m]
 *                 [-o DIR | --no-write] [--json FILE] [--junit FILE] [--shrink]
 *                 [--plugin LIB.so]... [-v]
 *
 * Prints one FINDING paragraph per distinct failure (scn/hunt.h) with the
 * command that replays it, then a summary line. Exit codes: 0 no finding,
 * 1 findings, 2 bad input. Main thread only.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hunt_gen.h"
#include "junit.h"
#include "scn/hunt.h"
#include "scn_int.h"

#define MAX_FILES 256

static int bad(const char *fmt, const char *arg) __attribute__((format(printf, 1, 0)));

static int bad(const char *fmt, const char *arg)
{
    char msg[600];
    snprintf(msg, sizeof msg, "%s", fmt);
    char *at = strstr(msg, "%s");
    if (at)
        fprintf(stderr, "scenario: hunt: %.*s%s%s\n", (int)(at - msg), msg, arg, at + 2);
    else
        fprintf(stderr, "scenario: hunt: %s\n", msg);
    return 2;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (*s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_seeds(const char *s, scn_hunt_options *o)
{
    const char *dots = strstr(s, "..");
    char lo[32];
    if (!dots) /* one seed */
        return parse_u64(s, &o->seed_lo) < 0 ? -1 : (o->seed_hi = o->seed_lo, 0);
    if ((size_t)(dots - s) >= sizeof lo)
        return -1;
    memcpy(lo, s, (size_t)(dots - s));
    lo[dots - s] = '\0';
    if (parse_u64(lo, &o->seed_lo) < 0 || parse_u64(dots + 2, &o->seed_hi) < 0 ||
        o->seed_hi < o->seed_lo || o->seed_hi - o->seed_lo >= 100000)
        return -1;
    return 0;
}

static int parse_dur(const char *s, int64_t *ns)
{
    json_t *d = json_string(s);
    int rc = d ? scn_parse_duration(d, ns) : -1;
    json_decref(d);
    return rc < 0 || *ns <= 0 ? -1 : 0;
}

static int parse_classes(const char *s, unsigned *mask)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    *mask = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int c = scn_hunt_class_parse(t);
        if (c <= SCN_HUNT_BASELINE)
            return -1;
        *mask |= 1u << c;
    }
    return *mask ? 0 : -1;
}

static int load_plugin(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "scenario: --plugin %s: %s\n", path, dlerror());
        return -1;
    }
    int (*init)(void);
    *(void **)(&init) = dlsym(h, "scn_plugin_init");
    if (!init || init() < 0) {
        fprintf(stderr, "scenario: --plugin %s: %s\n", path,
                init ? "scn_plugin_init failed" : "no function scn_plugin_init");
        return -1;
    }
    scn__hint_plugin(path);
    return 0;
}

static void indent(FILE *f, const char *text, const char *pad)
{
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        fprintf(f, "%s%.*s\n", pad, (int)n, p);
        p = nl ? nl + 1 : NULL;
    }
}

/* The text report: a paragraph per finding, then the summary. */
static void print_report(FILE *f, const scn_hunt_report *r)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        const scn_hunt_finding *x = &r->findings[i];
        fprintf(f, "FINDING %zu [%s/%s] %s (%s) seed=%" PRIu64 "\n", i + 1,
                scn_hunt_oracle_name(x->oracle), scn_hunt_class_name(x->cls), x->base_name,
                x->base_file ? x->base_file : "generated", x->seed);
        fprintf(f, "  perturbation: %s\n", x->perturbation);
        indent(f, x->message, "  ");
        if (x->report) {
            fprintf(f, "  state diff (A: the baseline, B: the perturbed run):\n");
            indent(f, x->report, "  ");
        }
        fprintf(f, "  shown by %lu perturbation%s%s\n", x->shown_by, x->shown_by == 1 ? "" : "s",
                x->shrunk ? "; shrunk" : "");
        if (x->path)
            fprintf(f, "  scenario: %s\n", x->path);
        fprintf(f, "  replay: %s\n", x->replay);
    }
    unsigned long ran = 0, planned = 0;
    for (int c = 0; c < SCN_HUNT_N_CLASSES; c++) {
        ran += r->ran[c];
        planned += r->planned[c];
    }
    fprintf(f, "hunt: %zu finding%s in %lu runs (", r->n_findings, r->n_findings == 1 ? "" : "s",
            ran);
    for (int c = 0; c < SCN_HUNT_N_CLASSES; c++)
        fprintf(f, "%s%s %lu", c ? ", " : "", scn_hunt_class_name(c), r->ran[c]);
    fprintf(f, ") in %.1fs", r->seconds);
    if (r->not_tried)
        fprintf(f, "; the budget ran out: %lu of %lu perturbed runs not tried", r->not_tried,
                planned);
    if (r->skipped)
        fprintf(f, "; %lu baseline%s failed and %s not perturbed", r->skipped,
                r->skipped == 1 ? "" : "s", r->skipped == 1 ? "was" : "were");
    if (r->run_errors)
        fprintf(f, "; %lu runs could not run", r->run_errors);
    if (r->inapplicable)
        fprintf(f, "; in %lu a base step could not act under the perturbation", r->inapplicable);
    fprintf(f, "\n");
}

static int write_json(const scn_hunt_report *r, const char *path)
{
    json_t *doc = scn_hunt_report_json(r);
    if (!doc)
        return -1;
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int rc = json_dump_file(doc, tmp, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(doc);
    if (rc < 0 || rename(tmp, path) < 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* JUnit: a suite per base, a failed case per finding, and a passed case for
 * each oracle that found nothing in that base. */
static int write_junit(const scn_hunt_report *r, const scn_scenario *const *bases, size_t n,
                       const char *path)
{
    scn_junit *j = scn__junit_new("scenario hunt");
    if (!j)
        return -1;
    for (size_t b = 0; b < n; b++) {
        char suite[300];
        snprintf(suite, sizeof suite, "hunt %s", bases[b]->name);
        bool found[SCN_HUNT_N_ORACLES] = {false};
        for (size_t i = 0; i < r->n_findings; i++) {
            const scn_hunt_finding *x = &r->findings[i];
            if (x->base != b)
                continue;
            found[x->oracle] = true;
            char name[800], details[8000], out[1600];
            snprintf(name, sizeof name, "%s: %s", bases[b]->name, x->signature);
            snprintf(details, sizeof details, "perturbation: %s\n%s\n%s", x->perturbation,
                     x->message, x->report ? x->report : "");
            snprintf(out, sizeof out, "%s%s%s\n", x->path ? "scenario: " : "",
                     x->path ? x->path : "", x->path ? "\n" : "");
            strncat(out, x->replay, sizeof out - strlen(out) - 1);
            scn_junit_case jc = {.name = name,
                                 .classname = bases[b]->file ? bases[b]->file : bases[b]->name,
                                 .status = SCN_JUNIT_FAILED,
                                 .message = x->message,
                                 .details = details,
                                 .system_out = out};
            if (scn__junit_add(j, suite, &jc) < 0)
                goto fail;
        }
        for (int o = 0; o < SCN_HUNT_N_ORACLES; o++) {
            if (found[o])
                continue;
            char name[400];
            snprintf(name, sizeof name, "%s: %s", bases[b]->name,
                     scn_hunt_oracle_name((scn_hunt_oracle)o));
            scn_junit_case jc = {.name = name,
                                 .classname = bases[b]->file ? bases[b]->file : bases[b]->name,
                                 .status = SCN_JUNIT_PASSED};
            if (scn__junit_add(j, suite, &jc) < 0)
                goto fail;
        }
    }
    int rc = scn__junit_save(j, path);
    scn__junit_free(j);
    return rc;
fail:
    scn__junit_free(j);
    return -1;
}

/* The bases of a campaign: scenario files, and scenarios a program made. */
typedef struct base_list {
    scn_scenario **items;
    size_t n, cap;
} base_list;

/* Take sc (owned by the list from now on). 0, or -1 without memory (sc
 * freed). */
static int add_base(base_list *l, scn_scenario *sc)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        scn_scenario **x = realloc(l->items, cap * sizeof *x);
        if (!x) {
            scn_scenario_free(sc);
            return -1;
        }
        l->items = x;
        l->cap = cap;
    }
    l->items[l->n++] = sc;
    return 0;
}

/* Run the campaign over bl and report it: the exit code (0 nothing found,
 * 1 findings, 2 bad input or a report not written). */
static int hunt_bases(const base_list *bl, const scn_hunt_options *o, const char *json_path,
                      const char *junit_path)
{
    const scn_scenario *const *bases = (const scn_scenario *const *)bl->items;
    scn_hunt_report r;
    scn_error err = {0};
    int rc = scn_hunt(bases, bl->n, o, &r, &err);
    if (rc < 0) {
        fprintf(stderr, "scenario: hunt: %s\n", err.message[0] ? err.message : scn_strerror(rc));
        return 2;
    }
    /* the replay commands name this program and its plugins */
    for (size_t i = 0; i < r.n_findings; i++) {
        char cmd[4096];
        scn__run_command(cmd, sizeof cmd, r.findings[i].path ? r.findings[i].path : "FINDING.yaml",
                         r.findings[i].seed);
        char *c = strdup(cmd);
        if (c) {
            free(r.findings[i].replay);
            r.findings[i].replay = c;
        }
    }
    print_report(stdout, &r);
    int status = r.n_findings ? 1 : 0;
    if (json_path && write_json(&r, json_path) < 0) {
        fprintf(stderr, "scenario: cannot write %s\n", json_path);
        status = 2;
    }
    if (junit_path && write_junit(&r, bases, bl->n, junit_path) < 0) {
        fprintf(stderr, "scenario: cannot write %s\n", junit_path);
        status = 2;
    }
    scn_hunt_report_deinit(&r);
    return status;
}

int scn__cmd_hunt(int argc, char **argv)
{
    const char *files[MAX_FILES], *json_path = NULL, *junit_path = NULL, *out_dir = "hunt-findings";
    const char *fixtures[MAX_FILES], *crd = NULL, *controller = NULL, *cr = NULL;
    size_t nfiles = 0, nfixtures = 0;
    scn_hunt_options o = {0};
    scn_gen_options g = {0};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v")) {
            o.verbose = true;
            continue;
        }
        if (!strcmp(a, "--shrink")) {
            o.shrink = true;
            continue;
        }
        if (!strcmp(a, "--no-write")) {
            out_dir = NULL;
            continue;
        }
        if (!strcmp(a, "--valid-only")) {
            g.no_invalid = true;
            continue;
        }
        if (a[0] != '-') {
            if (nfiles == MAX_FILES)
                return bad("at most 256 files", "");
            files[nfiles++] = a;
            continue;
        }
        if (!v)
            return bad("%s needs a value", a);
        i++;
        uint64_t n;
        if (!strcmp(a, "--budget")) {
            if (parse_dur(v, &o.budget_ns) < 0)
                return bad("--budget %s: not a duration above 0 (e.g. 60s)", v);
        } else if (!strcmp(a, "--seeds") || !strcmp(a, "--seed")) {
            if (parse_seeds(v, &o) < 0)
                return bad("--seeds %s: expected N or N..M (at most 100000 seeds)", v);
            o.seeds_given = true;
        } else if (!strcmp(a, "--jobs")) {
            if (parse_u64(v, &n) < 0 || n < 1 || n > 64)
                return bad("--jobs %s: expected 1..64", v);
            o.jobs = (int)n;
        } else if (!strcmp(a, "--classes")) {
            if (parse_classes(v, &o.classes) < 0)
                return bad("--classes %s: expected a comma-separated list of crash, stale, "
                           "unobserved, error",
                           v);
        } else if (!strcmp(a, "--settle")) {
            if (parse_dur(v, &o.settle_ns) < 0)
                return bad("--settle %s: not a duration above 0 (e.g. 5m)", v);
        } else if (!strcmp(a, "--tail")) {
            if (parse_dur(v, &o.tail_ns) < 0)
                return bad("--tail %s: not a duration above 0 (e.g. 2m)", v);
        } else if (!strcmp(a, "-o")) {
            out_dir = v;
        } else if (!strcmp(a, "--json")) {
            json_path = v;
        } else if (!strcmp(a, "--junit")) {
            junit_path = v;
        } else if (!strcmp(a, "--plugin")) {
            if (load_plugin(v) < 0)
                return 2;
        } else if (!strcmp(a, "--crd")) {
            crd = v;
        } else if (!strcmp(a, "--controller")) {
            controller = v;
        } else if (!strcmp(a, "--cr")) {
            cr = v;
        } else if (!strcmp(a, "--fixture")) {
            if (nfixtures == MAX_FILES)
                return bad("at most 256 fixtures", "");
            fixtures[nfixtures++] = v;
        } else if (!strcmp(a, "--changes")) {
            if (parse_u64(v, &n) < 0 || n < 1 || n > 64)
                return bad("--changes %s: expected 1..64 changes per sequence", v);
            g.seq_len = (unsigned)n;
        } else if (!strcmp(a, "--sequences")) {
            if (parse_u64(v, &n) < 0 || n < 1 || n > SCN_GEN_MAX_SEQS)
                return bad("--sequences %s: expected 1..100000", v);
            g.max_seqs = (unsigned)n;
        } else {
            return bad("unknown option %s", a);
        }
    }
    if (!nfiles && !crd)
        return bad("%s", "needs at least one scenario FILE, or --crd FILE --controller NAME");
    if (crd && !controller)
        return bad("%s", "--crd needs --controller NAME (the controller under test)");
    if (!crd && (controller || cr || nfixtures || g.seq_len || g.max_seqs || g.no_invalid))
        return bad("%s", "--controller, --cr, --fixture, --changes, --sequences and "
                         "--valid-only go with --crd FILE");
    o.out_dir = out_dir;
    base_list bl = {0};
    int status = 2;
    for (size_t i = 0; i < nfiles; i++) {
        scn_error err = {0};
        scn_scenario *sc = NULL;
        if (scn_scenario_load(files[i], &sc, &err) < 0) {
            char msg[1200];
            scn_error_format(&err, msg, sizeof msg);
            fprintf(stderr, "scenario: %s\n", msg);
            goto out;
        }
        if (add_base(&bl, sc) < 0) {
            fprintf(stderr, "scenario: hunt: out of memory\n");
            goto out;
        }
    }
    /* --crd: one base per sequence of generated changes (hunt_gen.h); the
     * seed of the first --seeds picks the sequences */
    if (crd) {
        scn_scenario **gen = NULL;
        size_t ngen = 0;
        scn_error err = {0};
        g.seed = o.seeds_given ? o.seed_lo : 1;
        if (scn_hunt_crd_bases(crd, controller, cr, fixtures, nfixtures, &g, &gen, &ngen, &err) <
            0) {
            char msg[1200];
            scn_error_format(&err, msg, sizeof msg);
            fprintf(stderr, "scenario: hunt: %s\n", msg);
            goto out;
        }
        size_t i = 0;
        while (i < ngen && add_base(&bl, gen[i]) == 0)
            i++;
        for (size_t j = i + 1; j < ngen; j++)
            scn_scenario_free(gen[j]);
        free(gen);
        if (i < ngen) {
            fprintf(stderr, "scenario: hunt: out of memory\n");
            goto out;
        }
        if (o.verbose)
            fprintf(stderr, "hunt: %zu base scenarios from %s\n", ngen, crd);
    }
    status = hunt_bases(&bl, &o, json_path, junit_path);
out:
    for (size_t i = 0; i < bl.n; i++)
        scn_scenario_free(bl.items[i]);
    free(bl.items);
    return status;
}
