/*
 * cli.c - the `scenario` program's commands (scn_main):
 *
 *   scenario run FILE... [--seed N] [--trace FILE] [--record FILE] [--junit FILE] [--json FILE]
 *                [--shard K/N]
 *   scenario explore FILE --seeds N..M [--jobs J] [--junit FILE] [--json FILE] [--shard K/N]
 *   scenario replay FILE --seed N --trace OUT
 *   scenario replay FILE --seed N --check-determinism [--runs K] [--trace OUT]
 *   scenario diff, scenario shrink (cli_shrink.c)
 *   scenario merge REPORT... [--junit OUT] [--json OUT] (cli_merge.c)
 *   scenario hunt (cli_hunt.c)
 *   scenario list
 *   scenario import audit ... | trace-to-audit ... | audit-to-trace ...  (cli_import.c)
 *   common: [--plugin LIB.so]... [--shard-count N] [-v]
 *
 * Exit codes: 0 all passed, 1 a scenario failed, 2 bad input. Every failure
 * prints the command that replays it.
 *
 * `explore --jobs J` runs seeds in J child processes (a run owns its
 * process's scheduler), each reporting one line back through a pipe.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_import.h"
#include "cpu_pin.h"
#include "junit.h"
#include "report.h"
#include "scn/run.h"
#include "scn_int.h"
#include "shard.h"

#define MAX_FILES 256
#define MAX_JOBS 64

typedef struct cli {
    const char *cmd;
    const char *files[MAX_FILES];
    int nfiles;
    uint64_t seed;
    bool seed_given;
    uint64_t seed_lo, seed_hi;
    bool seeds_given;
    int jobs;
    const char *trace;
    const char *record;
    const char *junit;
    const char *json;
    const char *shard;
    int shard_count;
    bool verbose;
    bool check_determinism;
    unsigned runs; /* --check-determinism: runs compared with the first */
} cli;

static void usage(FILE *f)
{
    fprintf(
        f, "usage: scenario run FILE... [--seed N] [--trace FILE] [--record FILE] [--junit FILE]\n"
           "                [--json FILE]\n"
           "       scenario explore FILE --seeds N..M [--jobs J] [--junit FILE] [--json FILE]\n"
           "       scenario replay FILE --seed N --trace OUT\n"
           "       scenario replay FILE --seed N --check-determinism [--runs K] [--trace OUT]\n"
           "       scenario diff FILE --seed N (--against LIB.so | --controllers A=B)\n"
           "       scenario shrink FILE --seed N [-o OUT.yaml] [--budget 60s] [--same-failure]\n"
           "       scenario merge REPORT... [--junit OUT] [--json OUT]\n"
           "       scenario hunt FILE... [--budget 60s] [--seeds N..M] [--jobs J]\n"
           "                [--classes C,...] [-o DIR | --no-write] [--json FILE] [--junit FILE]\n"
           "                [--shrink] [--settle 5m] [--tail 2m]\n"
           "       scenario list\n"
           "       scenario import audit FILE... [--snapshot FILE] [--controller NAME]...\n"
           "                [--actor-user U] [--actor-agent A] [--expect-writes] [--expect-state]\n"
           "                [--name NAME] -o OUT.yaml\n"
           "       scenario trace-to-audit TRACE -o AUDIT | audit-to-trace AUDIT -o TRACE\n"
           "options: --plugin LIB.so (repeatable), --shard K/N, --shard-count N, -v,\n"
           "         --http (managers reach the server over loopback HTTP, not in-process)\n"
           "exit codes: 0 all passed, 1 a scenario failed, 2 bad input\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

static int load_plugin(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "scenario: --plugin %s: %s\n", path, dlerror());
        return -1;
    }
    int (*init)(void);
    /* POSIX's way to turn dlsym's object pointer into a function pointer. */
    *(void **)(&init) = dlsym(h, "scn_plugin_init");
    if (!init) {
        fprintf(stderr, "scenario: --plugin %s: no function scn_plugin_init\n", path);
        return -1;
    }
    if (init() < 0) {
        fprintf(stderr, "scenario: --plugin %s: scn_plugin_init failed\n", path);
        return -1;
    }
    return 0;
}

static int parse_seeds(const char *s, cli *c)
{
    const char *dots = strstr(s, "..");
    char lo[32];
    if (!dots || (size_t)(dots - s) >= sizeof lo)
        return -1;
    memcpy(lo, s, (size_t)(dots - s));
    lo[dots - s] = '\0';
    if (parse_u64(lo, &c->seed_lo) < 0 || parse_u64(dots + 2, &c->seed_hi) < 0 ||
        c->seed_hi < c->seed_lo)
        return -1;
    c->seeds_given = true;
    return 0;
}

static int parse_option(cli *c, const char *opt, const char *val)
{
    uint64_t n;
    if (!strcmp(opt, "--seed") && val && parse_u64(val, &c->seed) == 0)
        c->seed_given = true;
    else if (!strcmp(opt, "--seeds") && val && parse_seeds(val, c) == 0)
        ;
    else if (!strcmp(opt, "--jobs") && val && parse_u64(val, &n) == 0 && n >= 1 && n <= MAX_JOBS)
        c->jobs = (int)n;
    else if (!strcmp(opt, "--trace") && val)
        c->trace = val;
    else if (!strcmp(opt, "--record") && val)
        c->record = val;
    else if (!strcmp(opt, "--junit") && val)
        c->junit = val;
    else if (!strcmp(opt, "--json") && val)
        c->json = val;
    else if (!strcmp(opt, "--shard") && val)
        c->shard = val;
    else if (!strcmp(opt, "--shard-count") && val && parse_u64(val, &n) == 0)
        c->shard_count = (int)n;
    else if (!strcmp(opt, "--runs") && val && parse_u64(val, &n) == 0 && n >= 1 && n <= 100000)
        c->runs = (unsigned)n;
    else if (!strcmp(opt, "--plugin") && val) {
        if (load_plugin(val) < 0)
            return -1;
        scn__hint_plugin(val);
    } else
        return -1;
    return 1;
}

static int parse_args(int argc, char **argv, cli *c)
{
    if (argc < 2)
        return -1;
    c->cmd = argv[1];
    c->jobs = 1;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) {
            c->verbose = true;
        } else if (!strcmp(argv[i], "--check-determinism")) {
            c->check_determinism = true;
        } else if (!strcmp(argv[i], "--http")) {
            /* Every run of this process, explore's workers included. */
            setenv("SCENARIO_TRANSPORT", "http", 1);
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            if (parse_option(c, argv[i], i + 1 < argc ? argv[i + 1] : NULL) < 0) {
                fprintf(stderr, "scenario: bad option or value: %s %s\n", argv[i],
                        i + 1 < argc ? argv[i + 1] : "");
                return -1;
            }
            i++;
        } else if (c->nfiles < MAX_FILES) {
            c->files[c->nfiles++] = argv[i];
        }
    }
    return 0;
}

static void replay_hint(FILE *f, const char *file, uint64_t seed)
{
    char cmd[4096];
    scn__replay_command(cmd, sizeof cmd, file, seed);
    fprintf(f, "  replay: %s\n", cmd);
}

static void print_result(const char *file, const scn_scenario *sc, const scn_run_result *r)
{
    if (r->passed) {
        printf("PASS %s (%s) seed=%" PRIu64 " virtual=%.1fs real=%.3fs steps=%lu trace=%016" PRIx64
               "\n",
               sc->name ? sc->name : file, file, r->seed, (double)r->virtual_ns / 1e9,
               r->real_seconds, r->steps, r->trace_hash);
        return;
    }
    printf("FAIL %s (%s) seed=%" PRIu64 "\n  %s\n", sc->name ? sc->name : file, file, r->seed,
           r->message);
    replay_hint(stdout, file, r->seed);
}

/* The --json report of this command (report.h), or NULL: one command line
 * a process, so one report. */
static scn_jreport *json_report;

static void junit_add(scn_junit *j, const char *file, const scn_scenario *sc,
                      const scn_run_result *r, bool error)
{
    char name[300], out[4100];
    scn__replay_command(out, sizeof out - 1, file, r->seed);
    if (json_report) {
        scn_report_entry e = {.file = file,
                              .scenario = sc && sc->name ? sc->name : file,
                              .seed = r->seed,
                              .verdict = error       ? SCN_VERDICT_ERROR
                                         : r->passed ? SCN_VERDICT_PASS
                                                     : SCN_VERDICT_FAIL,
                              .message = r->passed ? "" : r->message,
                              .has_trace = !error && r->trace_hash != 0,
                              .trace = r->trace_hash,
                              .time_s = r->real_seconds,
                              .replay = out};
        scn__jreport_add(json_report, &e);
    }
    if (!j)
        return;
    snprintf(name, sizeof name, "%s seed=%" PRIu64, sc && sc->name ? sc->name : file, r->seed);
    strcat(out, "\n");
    scn_junit_case jc = {.name = name,
                         .classname = file,
                         .time_s = r->real_seconds,
                         .status = error       ? SCN_JUNIT_ERROR
                                   : r->passed ? SCN_JUNIT_PASSED
                                               : SCN_JUNIT_FAILED,
                         .message = r->passed ? NULL : r->message,
                         .system_out = out};
    scn__junit_add(j, "scenarios", &jc);
}

/* Load a scenario, reporting input errors; 2 on bad input. */
static int load(const char *file, scn_scenario **sc)
{
    scn_error err = {0};
    if (scn_scenario_load(file, sc, &err) < 0) {
        fprintf(stderr, "scenario: %s:%d: %s: %s\n", err.file[0] ? err.file : file, err.line,
                err.field, err.message);
        return 2;
    }
    return 0;
}

static int cmd_run(cli *c, scn_junit *j, int k, int n)
{
    int status = 0;
    for (int i = 0; i < c->nfiles; i++) {
        if (!scn__shard_owns(k, n, (size_t)i))
            continue;
        scn_scenario *sc;
        if (load(c->files[i], &sc)) {
            status = 2;
            continue;
        }
        scn_run_options o = {.seed = c->seed_given ? c->seed : 1,
                             .seed_given = c->seed_given,
                             .trace_path = c->trace,
                             .record_path = c->record,
                             .verbose = c->verbose};
        scn_run_result r;
        int rc = scn_run(sc, &o, &r);
        if (rc < 0 && !r.message[0])
            snprintf(r.message, sizeof r.message, "could not run: %s", scn_strerror(rc));
        print_result(c->files[i], sc, &r);
        junit_add(j, c->files[i], sc, &r, rc < 0);
        if (!r.passed && status == 0)
            status = 1;
        scn_scenario_free(sc);
    }
    return status;
}

/*
 * Explore's workers: a child process runs seed after seed, so that what a
 * process costs (fork, first touches of its memory, libcurl's and TLS's
 * one-time set-up, lazy symbol binding) is paid once per worker and not
 * once per seed. scn_run leaves nothing behind that a later run reads (the
 * scenario replay --check-determinism compares runs made in one process),
 * so a seed's trace is the same in a fresh process or a reused one. A
 * worker still ends after a failed run (a stalled run may leave threads
 * behind) and after WORKER_SEEDS runs (memory stays flat), and a new one
 * takes over.
 */
#define WORKER_SEEDS 200

/* One seed's result as one line on fd; false if the line could not go. */
static bool report_seed(const scn_scenario *sc, uint64_t seed, int fd)
{
    scn_run_options o = {.seed = seed, .seed_given = true};
    scn_run_result r;
    scn_run(sc, &o, &r);
    for (char *p = r.message; *p; p++)
        if (*p == '\n' || *p == '\t')
            *p = ' ';
    /* One write under PIPE_BUF (the message is cut): the parent reads whole lines. */
    char line[3072];
    int len = snprintf(line, sizeof line, "%" PRIu64 "\t%d\t%016" PRIx64 "\t%.6f\t%.2000s\n",
                       r.seed, r.passed ? 1 : 0, r.trace_hash, r.real_seconds, r.message);
    return len > 0 && write(fd, line, (size_t)len) == len && r.passed;
}

/* A worker: its first seed, then one seed a line on in until EOF. */
static void worker_main(const scn_scenario *sc, uint64_t first, int in, int out)
{
    FILE *f = fdopen(in, "r");
    char line[64];
    uint64_t seed = first;
    for (int runs = 1; f && report_seed(sc, seed, out) && runs < WORKER_SEEDS; runs++) {
        if (!fgets(line, sizeof line, f) || sscanf(line, "%" SCNu64, &seed) != 1)
            break;
    }
    _exit(0);
}

typedef struct worker {
    pid_t pid;
    int to;    /* seeds go there */
    FILE *out; /* result lines come from there */
    uint64_t seed;
    int runs;
} worker;

/* Start w on its first seed; all[0..n) are the other workers, whose pipe
 * ends the new process must not keep open (they would hide their EOFs). */
static int worker_start(worker *w, const worker *all, int n, const scn_scenario *sc, uint64_t seed)
{
    int to[2], from[2];
    if (pipe(to) < 0)
        return -1;
    if (pipe(from) < 0) {
        close(to[0]);
        close(to[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(to[1]);
        close(from[0]);
        for (int i = 0; i < n; i++) {
            if (all[i].pid && &all[i] != w) {
                close(all[i].to);
                if (all[i].out)
                    close(fileno(all[i].out));
            }
        }
        scn__cpu_pin_slot((int)(w - all), n);
        worker_main(sc, seed, to[0], from[1]);
    }
    close(to[0]);
    close(from[1]);
    if (pid < 0) {
        close(to[1]);
        close(from[0]);
        return -1;
    }
    *w = (worker){.pid = pid, .to = to[1], .out = fdopen(from[0], "r"), .seed = seed, .runs = 1};
    if (!w->out)
        close(from[0]);
    return 0;
}

static void worker_end(worker *w)
{
    close(w->to);
    if (w->out)
        fclose(w->out);
    waitpid(w->pid, NULL, 0);
    w->pid = 0;
}

typedef struct explore_state {
    const char *file;
    const scn_scenario *sc;
    scn_junit *j;
    unsigned long done, failed, total;
    bool verbose; /* a line per seed, with its trace hash */
    uint64_t *failing;
    size_t nfailing;
} explore_state;

static bool explore_record(explore_state *st, const char *line)
{
    scn_run_result r = {0};
    int passed = 0;
    double real = 0;
    char msg[2048] = "";
    if (sscanf(line, "%" SCNu64 "\t%d\t%" SCNx64 "\t%lf\t%2047[^\n]", &r.seed, &passed,
               &r.trace_hash, &real, msg) < 4)
        return false;
    r.passed = passed;
    r.real_seconds = real;
    snprintf(r.message, sizeof r.message, "%s", msg);
    st->done++;
    if (!r.passed) {
        st->failed++;
        uint64_t *f = realloc(st->failing, (st->nfailing + 1) * sizeof *f);
        if (f) {
            st->failing = f;
            st->failing[st->nfailing++] = r.seed;
        }
        printf("FAIL seed=%" PRIu64 ": %s\n", r.seed, r.message);
        replay_hint(stdout, st->file, r.seed);
    }
    junit_add(st->j, st->file, st->sc, &r, false);
    if (st->verbose)
        printf("%s seed=%" PRIu64 " real=%.3fs trace=%016" PRIx64 "\n", r.passed ? "PASS" : "FAIL",
               r.seed, r.real_seconds, r.trace_hash);
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\rexplore: %lu/%lu seeds, %lu failing", st->done, st->total, st->failed);
    return r.passed;
}

/* A seed whose worker died before it answered (or never started). */
static void explore_crash(explore_state *st, uint64_t seed, const char *why)
{
    char line[256];
    snprintf(line, sizeof line, "%" PRIu64 "\t0\t0\t0\t%s", seed, why);
    explore_record(st, line);
}

/* The next seed from *next on that shard k/n owns (false: none left). */
static bool next_seed(int k, int n, uint64_t lo, uint64_t hi, uint64_t *next, uint64_t *out)
{
    while (*next <= hi && *next >= lo) {
        uint64_t s = (*next)++;
        if (s == UINT64_MAX)
            *next = 0; /* past the end: the loop stops */
        if (scn__shard_owns(k, n, (size_t)(s - lo))) {
            *out = s;
            return true;
        }
    }
    return false;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmd_explore(cli *c, scn_junit *j, int k, int n)
{
    if (c->nfiles != 1 || !c->seeds_given) {
        fprintf(stderr, "scenario: explore needs one FILE and --seeds N..M\n");
        return 2;
    }
    scn_scenario *sc;
    if (load(c->files[0], &sc))
        return 2;
    explore_state st = {.file = c->files[0], .sc = sc, .j = j, .verbose = c->verbose};
    for (uint64_t s = c->seed_lo; s <= c->seed_hi; s++)
        st.total += scn__shard_owns(k, n, (size_t)(s - c->seed_lo));
    worker w[MAX_JOBS] = {{0}};
    uint64_t next = c->seed_lo;
    bool more = true;
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    for (;;) {
        int running = 0;
        for (int i = 0; i < c->jobs; i++) {
            uint64_t seed;
            if (!w[i].pid && more &&
                (more = next_seed(k, n, c->seed_lo, c->seed_hi, &next, &seed)) &&
                worker_start(&w[i], w, c->jobs, sc, seed) < 0)
                explore_crash(&st, seed, "could not start a worker process");
            running += w[i].pid != 0;
        }
        if (running == 0)
            break;
        struct pollfd pf[MAX_JOBS];
        int timeout = -1;
        for (int i = 0; i < c->jobs; i++) {
            pf[i] = (struct pollfd){.fd = w[i].pid && w[i].out ? fileno(w[i].out) : -1,
                                    .events = POLLIN};
            if (w[i].pid && !w[i].out)
                timeout = 0; /* a worker that cannot answer: counted as crashed at once */
        }
        if (poll(pf, (nfds_t)c->jobs, timeout) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < c->jobs; i++) {
            if (!w[i].pid || !(pf[i].revents || !w[i].out))
                continue;
            char line[4096];
            if (!w[i].out || !fgets(line, sizeof line, w[i].out)) {
                explore_crash(&st, w[i].seed, "the run crashed");
                worker_end(&w[i]);
                continue;
            }
            bool passed = explore_record(&st, line);
            uint64_t seed;
            if (!passed || w[i].runs >= WORKER_SEEDS || !more ||
                !(more = next_seed(k, n, c->seed_lo, c->seed_hi, &next, &seed))) {
                worker_end(&w[i]);
                continue;
            }
            char msg[32];
            int len = snprintf(msg, sizeof msg, "%" PRIu64 "\n", seed);
            if (write(w[i].to, msg, (size_t)len) != len) {
                worker_end(&w[i]); /* it is gone: a new one runs the seed */
                if (worker_start(&w[i], w, c->jobs, sc, seed) < 0)
                    explore_crash(&st, seed, "could not start a worker process");
                continue;
            }
            w[i].seed = seed;
            w[i].runs++;
        }
    }
    signal(SIGPIPE, old_pipe);
    if (isatty(STDERR_FILENO))
        fputc('\n', stderr);
    printf("explore %s: %lu seeds, %lu passed, %lu failed", c->files[0], st.done,
           st.done - st.failed, st.failed);
    if (st.nfailing) {
        qsort(st.failing, st.nfailing, sizeof *st.failing, cmp_u64);
        printf("; failing seeds:");
        for (size_t i = 0; i < st.nfailing; i++)
            printf(" %" PRIu64, st.failing[i]);
    }
    printf("\n");
    free(st.failing);
    scn_scenario_free(sc);
    return st.failed ? 1 : 0;
}

/* replay --check-determinism: run it 1 + K times, compare the traces. */
static int cmd_check_determinism(cli *c)
{
    scn_scenario *sc;
    if (load(c->files[0], &sc))
        return 2;
    scn_run_options o = {
        .seed = c->seed, .seed_given = true, .trace_path = c->trace, .verbose = c->verbose};
    scn_determinism d;
    unsigned runs = c->runs ? c->runs : 1;
    int rc = scn_check_determinism(sc, &o, runs, NULL, &d);
    const char *name = sc->name ? sc->name : c->files[0];
    int status = 0;
    if (rc < 0) {
        printf("ERROR %s (%s) seed=%" PRIu64 ": %s%s%s\n", name, c->files[0], c->seed,
               scn_strerror(rc), d.reference.message[0] ? ": " : "", d.reference.message);
        status = 2;
    } else if (d.differing) {
        printf("NOT DETERMINISTIC %s (%s) seed=%" PRIu64 ": %u of %u runs differ from the first"
               "%s; run %u differs at trace line %lu:\n  first: %s\n  run %u: %s\n",
               name, c->files[0], c->seed, d.differing, runs, d.stalled ? " (some stalled)" : "",
               d.first_diff + 1, d.line, d.expected[0] ? d.expected : "(its trace ended)",
               d.first_diff + 1, d.got[0] ? d.got : "(its trace ended)");
        status = 1;
    } else {
        printf("DETERMINISTIC %s (%s) seed=%" PRIu64 " runs=%u trace=%016" PRIx64 " lines=%lu "
               "(%s)\n",
               name, c->files[0], c->seed, runs + 1, d.reference.trace_hash,
               d.reference.trace_lines, d.reference.passed ? "passed" : "failed, the same way");
    }
    scn_scenario_free(sc);
    return status;
}

static int cmd_replay(cli *c)
{
    if (c->nfiles == 1 && c->seed_given && c->check_determinism)
        return cmd_check_determinism(c);
    if (c->nfiles != 1 || !c->seed_given || !c->trace) {
        fprintf(stderr,
                "scenario: replay needs FILE --seed N --trace OUT (or --check-determinism)\n");
        return 2;
    }
    return cmd_run(c, NULL, 0, 1);
}

/* The reports say what was split and which share this is, for `scenario
 * merge`: the JUnit report as properties, the JSON report in its header.
 * The JSON report's file is created now, so a path that cannot be written
 * fails before the first run. 0 or 2. */
static int open_reports(const cli *c, scn_junit *j, int k, int n)
{
    bool explore = !strcmp(c->cmd, "explore");
    char v[64];
    int rc = 0;

    if (c->junit && !j) {
        fprintf(stderr, "scenario: --junit %s: out of memory\n", c->junit);
        return 2;
    }
    if (j) {
        snprintf(v, sizeof v, "%d/%d", k, n);
        rc |= scn__junit_property(j, "command", c->cmd);
        rc |= scn__junit_property(j, "shard", v);
        if (explore && c->seeds_given) {
            snprintf(v, sizeof v, "%" PRIu64 "..%" PRIu64, c->seed_lo, c->seed_hi);
            rc |= scn__junit_property(j, "seeds", v);
        }
        for (int i = 0; i < c->nfiles; i++)
            rc |= scn__junit_property(j, "file", c->files[i]);
        if (rc != 0) {
            fprintf(stderr, "scenario: --junit %s: out of memory\n", c->junit);
            return 2;
        }
    }
    if (c->json && (!strcmp(c->cmd, "run") || explore)) {
        scn_report_meta m = {.command = c->cmd,
                             .files = c->files,
                             .nfiles = (size_t)c->nfiles,
                             .seeds_given = explore && c->seeds_given,
                             .seed_first = c->seed_lo,
                             .seed_last = c->seed_hi,
                             .shard_index = k,
                             .shard_count = n};
        json_report = scn__jreport_open(c->json, &m, &rc);
        if (!json_report) {
            fprintf(stderr, "scenario: --json %s: cannot write it: %s\n", c->json,
                    scn_strerror(rc));
            return 2;
        }
    }
    return 0;
}

int scn_main(int argc, char **argv)
{
    scn__hint_program(argc > 0 ? argv[0] : NULL);
    if (argc >= 2 && !strcmp(argv[1], "import"))
        return scn__cmd_import(argc, argv);
    if (argc >= 2 && (!strcmp(argv[1], "trace-to-audit") || !strcmp(argv[1], "audit-to-trace")))
        return scn__cmd_convert(argc, argv);
    cli c = {0};
    if (argc >= 2 && !strcmp(argv[1], "diff"))
        return scn__cmd_diff(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "shrink"))
        return scn__cmd_shrink(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "merge"))
        return scn__cmd_merge(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "hunt"))
        return scn__cmd_hunt(argc, argv);
    if (parse_args(argc, argv, &c) < 0) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(c.cmd, "-h") || !strcmp(c.cmd, "--help") || !strcmp(c.cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(c.cmd, "list")) {
        char names[1024];
        scn__list_controllers(names, sizeof names);
        printf("%s\n", names);
        return 0;
    }
    int k = 0, n = 1;
    char err[300];
    if (scn__shard_select(c.shard, c.shard_count, NULL, &k, &n, err, sizeof err) < 0) {
        fprintf(stderr, "scenario: %s\n", err);
        return 2;
    }
    scn_junit *j = c.junit ? scn__junit_new("scenarios") : NULL;
    int rc = open_reports(&c, j, k, n);
    if (rc != 0) {
        scn__junit_free(j);
        return rc;
    }
    if (!strcmp(c.cmd, "run") && c.nfiles > 0)
        rc = cmd_run(&c, j, k, n);
    else if (!strcmp(c.cmd, "explore"))
        rc = cmd_explore(&c, j, k, n);
    else if (!strcmp(c.cmd, "replay"))
        rc = cmd_replay(&c);
    else {
        usage(stderr);
        rc = 2;
    }
    if (j && scn__junit_save(j, c.junit) < 0) {
        fprintf(stderr, "scenario: cannot write %s\n", c.junit);
        rc = rc ? rc : 2;
    }
    scn__junit_free(j);
    /* Bad input: no JSON report, so that `scenario merge` finds the shard
     * missing rather than merging a shard that did not run its share. */
    if (json_report && rc == 2)
        scn__jreport_discard(json_report);
    else if (json_report && scn__jreport_close(json_report) < 0) {
        fprintf(stderr, "scenario: cannot write %s\n", c.json);
        rc = rc ? rc : 2;
    }
    json_report = NULL;
    return rc;
}
