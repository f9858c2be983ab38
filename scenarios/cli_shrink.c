/*
 * cli_shrink.c - the `scenario diff` and `scenario shrink` commands
 * (called by scn_main, cli.c):
 *
 *   scenario diff FILE --seed N (--against PLUGIN.so | --controllers A=B)...
 *                 [--ignore SPEC]... [--keep SPEC]...
 *   scenario shrink FILE --seed N [-o OUT.yaml] [--budget 60s] [--same-failure]
 *                 [--nearby K] [--no-seeds]
 *   common: [--plugin LIB.so]... [-v]
 *
 * Exit codes: diff 0 equal, 1 a difference, 2 bad input; shrink 0 written,
 * 2 bad input (including a scenario that does not fail with the seed).
 * Main thread only.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scn/diff.h"
#include "scn/shrink.h"
#include "scn/state_mask.h"
#include "scn_int.h"

#define MAX_SPECS 64

static int plugin(const char *path, bool replacing)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "scenario: %s: %s\n", path, dlerror());
        return -1;
    }
    int (*init)(void);
    *(void **)(&init) = dlsym(h, "scn_plugin_init");
    if (!init) {
        fprintf(stderr, "scenario: %s: no function scn_plugin_init\n", path);
        return -1;
    }
    scn_diff_capture(replacing);
    int rc = init();
    scn_diff_capture(false);
    if (rc < 0) {
        fprintf(stderr, "scenario: %s: scn_plugin_init failed\n", path);
        return -1;
    }
    if (!replacing) /* the replay runs the scenario's own controllers */
        scn__hint_plugin(path);
    return 0;
}

static int parse_seed(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-')
        return -1;
    *out = v;
    return 0;
}

static int load(const char *file, scn_scenario **sc)
{
    scn_error err = {0};
    if (scn_scenario_load(file, sc, &err) < 0) {
        char msg[1200];
        scn_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "scenario: %s\n", msg);
        return 2;
    }
    return 0;
}

static int bad(const char *what)
{
    fprintf(stderr, "scenario: %s\n", what);
    return 2;
}

/* ---- diff ---- */

int scn__cmd_diff(int argc, char **argv)
{
    const char *file = NULL, *ignore[MAX_SPECS], *keep[MAX_SPECS];
    size_t ni = 0, nk = 0, replacements = 0;
    uint64_t seed = 0;
    bool seed_given = false, verbose = false;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v")) {
            verbose = true;
            continue;
        }
        if (a[0] != '-') {
            if (file)
                return bad("diff takes one FILE");
            file = a;
            continue;
        }
        if (!v) {
            fprintf(stderr, "scenario: %s needs a value\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--seed")) {
            if (parse_seed(v, &seed) < 0) {
                fprintf(stderr, "scenario: --seed %s: not a seed\n", v);
                return 2;
            }
            seed_given = true;
        } else if (!strcmp(a, "--plugin")) {
            if (plugin(v, false) < 0)
                return 2;
        } else if (!strcmp(a, "--against")) {
            if (plugin(v, true) < 0)
                return 2;
            replacements++;
        } else if (!strcmp(a, "--controllers")) {
            const char *eq = strchr(v, '=');
            char name[256];
            if (!eq || eq == v || !eq[1] || (size_t)(eq - v) >= sizeof name) {
                fprintf(stderr, "scenario: --controllers %s: expected A=B\n", v);
                return 2;
            }
            memcpy(name, v, (size_t)(eq - v));
            name[eq - v] = '\0';
            if (scn_diff_replace_with(name, eq + 1) < 0) {
                char known[1024];
                scn__list_controllers(known, sizeof known);
                fprintf(stderr,
                        "scenario: --controllers %s: no controller named %s (registered: %s)\n", v,
                        eq + 1, known);
                return 2;
            }
            replacements++;
        } else if (!strcmp(a, "--ignore") && ni < MAX_SPECS) {
            ignore[ni++] = v;
        } else if (!strcmp(a, "--keep") && nk < MAX_SPECS) {
            keep[nk++] = v;
        } else {
            fprintf(stderr, "scenario: diff: unknown option %s\n", a);
            return 2;
        }
    }
    if (!file || !seed_given || !replacements)
        return bad("diff needs FILE --seed N and --against PLUGIN.so or --controllers A=B");
    scn_scenario *sc;
    if (load(file, &sc))
        return 2;
    scn_mask *m = NULL;
    scn_error err = {0};
    int status = 2;
    if (scn_mask_new(&m) < 0 || scn_mask_add_scenario(m, sc, &err) < 0) {
        char msg[1200];
        scn_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "scenario: %s\n", msg);
        goto out;
    }
    for (size_t i = 0; i < ni + nk; i++) {
        int rc =
            i < ni ? scn_mask_ignore(m, ignore[i], &err) : scn_mask_keep(m, keep[i - ni], &err);
        if (rc < 0) {
            fprintf(stderr, "scenario: --%s: %s\n", i < ni ? "ignore" : "keep", err.message);
            goto out;
        }
    }
    scn_diff_options o = {.seed = seed, .mask = m, .verbose = verbose};
    scn_diff_result r;
    int rc = scn_diff(sc, &o, &r, &err);
    if (rc < 0) {
        fprintf(stderr, "scenario: %s: %s\n", file, err.message);
        goto out;
    }
    printf("%s %s (%s) seed=%" PRIu64 ": %zu points compared\n", r.differ ? "DIFFER" : "EQUAL",
           sc->name, file, seed, r.points);
    printf("  A: the scenario's controllers; B: with");
    for (size_t i = 0; i < sc->n_controllers; i++)
        if (scn_diff_replaced(sc->controllers[i].name))
            printf(" %s", sc->controllers[i].name);
    printf(" replaced\n");
    if (r.differ)
        printf("%s", r.report);
    char cmd[4096];
    scn__replay_command(cmd, sizeof cmd, file, seed);
    printf("  replay: %s\n", cmd);
    status = r.differ ? 1 : 0;
    scn_diff_result_deinit(&r);
out:
    scn_mask_free(m);
    scn_scenario_free(sc);
    return status;
}

/* ---- shrink ---- */

static void default_out(const char *file, char *buf, size_t len)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    size_t n = strlen(base);
    if (n > 5 && !strcmp(base + n - 5, ".yaml"))
        n -= 5;
    else if (n > 4 && !strcmp(base + n - 4, ".yml"))
        n -= 4;
    snprintf(buf, len, "%.*s-shrunk.yaml", (int)n, base);
}

/* Write text to path through a temporary file and a rename. */
static int write_file(const char *path, const char *head, const char *text)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "we");
    if (!f)
        return -1;
    size_t n = strlen(text);
    int ok = fputs(head, f) >= 0 && fputs(text, f) >= 0 &&
             (n == 0 || text[n - 1] == '\n' || fputc('\n', f) != EOF);
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) < 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int scn__cmd_shrink(int argc, char **argv)
{
    const char *file = NULL, *outp = NULL;
    scn_shrink_options o = {0};
    bool seed_given = false;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v")) {
            o.verbose = true;
            continue;
        }
        if (!strcmp(a, "--same-failure")) {
            o.same_failure = true;
            continue;
        }
        if (!strcmp(a, "--no-seeds")) {
            o.no_seeds = true;
            continue;
        }
        if (a[0] != '-') {
            if (file)
                return bad("shrink takes one FILE");
            file = a;
            continue;
        }
        if (!v) {
            fprintf(stderr, "scenario: %s needs a value\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--seed")) {
            if (parse_seed(v, &o.seed) < 0) {
                fprintf(stderr, "scenario: --seed %s: not a seed\n", v);
                return 2;
            }
            seed_given = true;
        } else if (!strcmp(a, "-o")) {
            outp = v;
        } else if (!strcmp(a, "--budget")) {
            json_t *d = json_string(v);
            int rc = scn_parse_duration(d, &o.budget_ns);
            json_decref(d);
            if (rc < 0 || o.budget_ns <= 0) {
                fprintf(stderr, "scenario: --budget %s: not a duration above 0 (e.g. 60s)\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--nearby")) {
            uint64_t n;
            if (parse_seed(v, &n) < 0 || n > 1000) {
                fprintf(stderr, "scenario: --nearby %s: expected 0..1000\n", v);
                return 2;
            }
            o.nearby_seeds = (unsigned)n;
            o.no_seeds = n == 0;
        } else if (!strcmp(a, "--plugin")) {
            if (plugin(v, false) < 0)
                return 2;
        } else {
            fprintf(stderr, "scenario: shrink: unknown option %s\n", a);
            return 2;
        }
    }
    if (!file || !seed_given)
        return bad("shrink needs FILE --seed N");
    char defpath[600];
    if (!outp) {
        default_out(file, defpath, sizeof defpath);
        outp = defpath;
    }
    scn_scenario *sc;
    if (load(file, &sc))
        return 2;
    scn_shrink_result r;
    scn_error err = {0};
    int status = 2;
    int rc = scn_shrink(sc, &o, &r, &err);
    if (rc < 0) {
        fprintf(stderr, "scenario: %s: %s\n", file, err.message);
        goto out;
    }
    char head[1400], msg[620];
    snprintf(msg, sizeof msg, "%.600s", r.failure.message);
    for (char *p = msg; *p; p++)
        if (*p == '\n')
            *p = ' ';
    snprintf(head, sizeof head,
             "# %s shrunk by `scenario shrink` from %s (seed %" PRIu64 "): %zu of %zu steps,\n"
             "# %zu of %zu fixtures, %zu of %zu controllers, %d of %d replicas. It fails with:\n"
             "#   %s\n",
             sc->name, file, o.seed, r.steps_after, r.steps_before, r.fixtures_after,
             r.fixtures_before, r.controllers_after, r.controllers_before, r.replicas_after,
             r.replicas_before, msg);
    if (write_file(outp, head, r.yaml) < 0) {
        fprintf(stderr, "scenario: cannot write %s: %s\n", outp, strerror(errno));
        scn_shrink_result_deinit(&r);
        goto out;
    }
    printf("SHRUNK %s (%s) seed=%" PRIu64 " -> seed=%" PRIu64 ": steps %zu -> %zu, fixtures %zu "
           "-> %zu, controllers %zu -> %zu, replicas %d -> %d\n",
           sc->name, file, o.seed, r.seed, r.steps_before, r.steps_after, r.fixtures_before,
           r.fixtures_after, r.controllers_before, r.controllers_after, r.replicas_before,
           r.replicas_after);
    printf("  %lu candidates (%lu did not parse) in %.2fs, %.1f candidates/s%s\n", r.candidates,
           r.invalid, r.seconds, r.candidates_per_s,
           r.budget_exhausted ? "; the budget ran out (smaller, maybe not the least)" : "");
    printf("  fails: %s\n", r.failure.message);
    printf("  wrote %s\n", outp);
    char cmd[4096];
    scn__replay_command(cmd, sizeof cmd, outp, r.seed);
    printf("  replay: %s\n", cmd);
    status = 0;
    scn_shrink_result_deinit(&r);
out:
    scn_scenario_free(sc);
    return status;
}
