/*
 * bench_scenarios.c - how many seeds a second the example scenarios explore,
 * and where one run's real time goes. One JSON object a line:
 *
 *   scenario_rate       `scenario explore FILE --seeds 1..N --jobs J` run as
 *                       a program (J = 1 and 2), wall time from spawn to
 *                       exit: seeds/s, median of --repeat runs, min and max.
 *   scenario_breakdown  the same scenario, one seed a forked child as
 *                       explore does, each child reporting its run's
 *                       scn_run_timing: medians over the seeds of the real
 *                       time of each phase (fakeapi start, trace open,
 *                       fixtures, managers start, steps, teardown, trace
 *                       hash), of the fork-to-reap time around it (process
 *                       start and exit), HTTP round trips (count, time,
 *                       time each), trace writes, the driver's wait on
 *                       hand-offs, scheduler turns, context switches; real
 *                       time per scheduler step and per virtual hour.
 *
 *   scenario_rss        --rss: memory of a campaign. `scenario explore
 *                       FILE --seeds 1..N --jobs 2` (N = 1,000 and 10,000,
 *                       with and without --json/--junit reports) run by
 *                       scn_main in a forked child: peak RSS of the explore
 *                       process (getrusage RUSAGE_SELF ru_maxrss, and
 *                       VmHWM) and of its largest worker (RUSAGE_CHILDREN).
 *   scenario_worker_rss --rss: one process running seed after seed as an
 *                       explore worker does: its VmRSS after 1, 10, 50,
 *                       100, 200 and 500 seeds.
 *
 *   With --reuse, the breakdown runs its seeds one after another in one
 *   forked child, as a reused explore worker does (fork_and_exit_s is then
 *   the fork-to-reap time shared out over the seeds).
 *
 * Usage: bench_scenarios SCENARIO_PROGRAM [--only NAME] [--scale X]
 *        [--repeat R] [--no-rate] [--no-breakdown] [--reuse] [--rss]
 * (meson passes the program; seeds per scenario are fixed below, times X).
 * It asserts nothing; the exit status is 2 only if it could not run.
 */
#include <inttypes.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scn/run.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif

extern char **environ;

typedef struct bench_case {
    const char *name;
    int seeds; /* for the rate; the breakdown takes a third, at least 3 */
} bench_case;

static const bench_case cases[] = {
    {"singleton-fixed", 60},    {"replicaset-basic", 40},   {"leader-failover", 12},
    {"cronjob-day", 4},         {"webapp-node-failure", 6}, {"replicaset-faults", 20},
    {"replicaset-restart", 20}, {"cronjob-count", 10},
};

/* What a child sends back: its result's figures. */
typedef struct child_report {
    scn_run_timing tm;
    double real;
    int64_t virtual_ns;
    unsigned long steps;
    int passed;
} child_report;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* `scenario explore` as a program: its wall time, or -1. */
static double explore_once(const char *prog, const char *file, int seeds, int jobs)
{
    char range[64], j[16];
    snprintf(range, sizeof range, "1..%d", seeds);
    snprintf(j, sizeof j, "%d", jobs);
    char explore[] = "explore", opt_seeds[] = "--seeds", opt_jobs[] = "--jobs";
    char *argv[] = {(char *)prog, explore, (char *)file, opt_seeds, range, opt_jobs, j, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", 01 /* O_WRONLY */, 0);
    double t0 = now_s();
    pid_t pid;
    int rc = posix_spawn(&pid, prog, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) > 1)
        return -1;
    return now_s() - t0;
}

static int bench_rate(const char *prog, const bench_case *c, const char *file, int seeds,
                      int repeat)
{
    for (int jobs = 1; jobs <= 2; jobs++) {
        double rates[32];
        int n = 0;
        for (int i = 0; i < repeat && i < 32; i++) {
            double w = explore_once(prog, file, seeds, jobs);
            if (w < 0) {
                fprintf(stderr, "bench_scenarios: %s explore %s failed\n", prog, file);
                return -1;
            }
            rates[n++] = seeds / w;
        }
        double lo = rates[0], hi = rates[0];
        for (int i = 1; i < n; i++) {
            lo = fmin(lo, rates[i]);
            hi = fmax(hi, rates[i]);
        }
        printf("{\"bench\":\"scenario_rate\",\"scenario\":\"%s\",\"jobs\":%d,\"seeds\":%d,"
               "\"repeats\":%d,\"value\":%.2f,\"unit\":\"seeds/s\",\"stat\":\"median\","
               "\"min\":%.2f,\"max\":%.2f}\n",
               c->name, jobs, seeds, n, median(rates, (size_t)n), lo, hi);
        fflush(stdout);
    }
    return 0;
}

/* Seeds first .. first + n - 1 in a forked child, one after another as a
 * reused explore worker runs them; one report each on fd. */
static void child(const scn_scenario *sc, uint64_t first, int n, int fd)
{
    int status = 0;
    for (int i = 0; i < n; i++) {
        scn_run_options o = {.seed = first + (uint64_t)i, .seed_given = true};
        scn_run_result r;
        child_report rep = {0};
        if (scn_run(sc, &o, &r) == 0) {
            rep.tm = r.timing;
            rep.real = r.real_seconds;
            rep.virtual_ns = r.virtual_ns;
            rep.steps = r.steps;
            rep.passed = r.passed;
        }
        if (write(fd, &rep, sizeof rep) != (ssize_t)sizeof rep)
            status = 2;
    }
    close(fd);
    _exit(status);
}

enum {
    F_REAL,
    F_PROCESS,
    F_FAKEAPI,
    F_TRACE_OPEN,
    F_FIXTURES,
    F_MANAGERS,
    F_STEPS,
    F_TEARDOWN,
    F_HASH,
    F_CPU,
    F_HANDOFF,
    F_HTTP_N,
    F_HTTP_S,
    F_HTTP_EACH,
    F_TRACE_N,
    F_TRACE_S,
    F_TURNS,
    F_OUTSIDE,
    F_ADVANCES,
    F_CTXV,
    F_CTXI,
    F_SCHED_STEPS,
    F_PER_STEP,
    F_PER_HOUR,
    F_VIRTUAL,
    F_N
};

static const char *const field_names[F_N] = {
    "real_s",
    "fork_and_exit_s",
    "fakeapi_start_s",
    "trace_open_s",
    "fixtures_s",
    "managers_start_s",
    "steps_s",
    "teardown_s",
    "trace_hash_s",
    "cpu_s",
    "handoff_wait_s",
    "http_requests",
    "http_s",
    "http_each_us",
    "trace_writes",
    "trace_write_s",
    "thread_turns",
    "outside_turns",
    "clock_advances",
    "ctx_switches_voluntary",
    "ctx_switches_involuntary",
    "scheduler_steps",
    "per_step_us",
    "per_virtual_hour_s",
    "virtual_s",
};

static int bench_breakdown(const bench_case *c, const char *file, int seeds, bool reuse)
{
    scn_scenario *sc = NULL;
    scn_error err = {0};
    if (scn_scenario_load(file, &sc, &err) < 0) {
        char buf[1024];
        scn_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "bench_scenarios: %s\n", buf);
        return -1;
    }
    double *v[F_N];
    for (int f = 0; f < F_N; f++)
        v[f] = calloc((size_t)seeds, sizeof(double));
    int n = 0, passed = 0;
    child_report *reps = calloc((size_t)seeds, sizeof *reps);
    int per_child = reuse ? seeds : 1;
    for (int s = 1; reps && s <= seeds; s += per_child) {
        int fds[2];
        if (pipe(fds) < 0)
            break;
        fflush(NULL);
        double t0 = now_s();
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            child(sc, (uint64_t)s, per_child, fds[1]);
        }
        close(fds[1]);
        int got = 0;
        double real = 0;
        while (pid > 0 && got < per_child) {
            size_t off = 0;
            char *p = (char *)&reps[s - 1 + got];
            while (off < sizeof *reps) {
                ssize_t k = read(fds[0], p + off, sizeof *reps - off);
                if (k <= 0)
                    break;
                off += (size_t)k;
            }
            if (off != sizeof *reps)
                break;
            real += reps[s - 1 + got].real;
            got++;
        }
        close(fds[0]);
        int status;
        if (pid > 0)
            waitpid(pid, &status, 0);
        double process = got ? (now_s() - t0 - real) / got : 0;
        for (int i = 0; i < got; i++) {
            child_report rep = reps[s - 1 + i];
            if (rep.real <= 0)
                continue;
            const scn_run_timing *t = &rep.tm;
            double row[F_N] = {
                [F_REAL] = rep.real,
                [F_PROCESS] = process,
                [F_FAKEAPI] = t->fakeapi_start,
                [F_TRACE_OPEN] = t->trace_open,
                [F_FIXTURES] = t->fixtures,
                [F_MANAGERS] = t->managers_start,
                [F_STEPS] = t->steps,
                [F_TEARDOWN] = t->teardown,
                [F_HASH] = t->trace_hash,
                [F_CPU] = t->cpu,
                [F_HANDOFF] = t->handoff_wait,
                [F_HTTP_N] = (double)t->http_requests,
                [F_HTTP_S] = t->http_seconds,
                [F_HTTP_EACH] = t->http_requests ? t->http_seconds / t->http_requests * 1e6 : 0,
                [F_TRACE_N] = (double)t->trace_writes,
                [F_TRACE_S] = t->trace_write_seconds,
                [F_TURNS] = (double)t->thread_turns,
                [F_OUTSIDE] = (double)t->outside_turns,
                [F_ADVANCES] = (double)t->advances,
                [F_CTXV] = (double)t->ctx_voluntary,
                [F_CTXI] = (double)t->ctx_involuntary,
                [F_SCHED_STEPS] = (double)rep.steps,
                [F_PER_STEP] = rep.steps ? rep.real / rep.steps * 1e6 : 0,
                [F_PER_HOUR] =
                    rep.virtual_ns > 0 ? rep.real / ((double)rep.virtual_ns / 3.6e12) : 0,
                [F_VIRTUAL] = (double)rep.virtual_ns / 1e9,
            };
            for (int f = 0; f < F_N; f++)
                v[f][n] = row[f];
            n++;
            passed += rep.passed;
        }
    }
    free(reps);
    printf("{\"bench\":\"scenario_breakdown\",\"scenario\":\"%s\",\"runs\":%d,\"passed\":%d,"
           "\"reused_process\":%s,\"stat\":\"median\"",
           c->name, n, passed, reuse ? "true" : "false");
    for (int f = 0; f < F_N; f++)
        printf(",\"%s\":%.6g", field_names[f], median(v[f], (size_t)n));
    printf("}\n");
    fflush(stdout);
    for (int f = 0; f < F_N; f++)
        free(v[f]);
    scn_scenario_free(sc);
    return n > 0 ? 0 : -1;
}

/* A line "Name:  N kB" of /proc/self/status, in kB; -1 if absent. */
static long proc_status_kb(const char *name)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(name);
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, name, n) == 0 && line[n] == ':') {
            v = atol(line + n + 1);
            break;
        }
    }
    if (f)
        fclose(f);
    return v;
}

/* What the forked explore reports back. */
typedef struct rss_report {
    long self_maxrss, self_hwm, children_maxrss;
    int rc;
} rss_report;

/* `scenario explore FILE --seeds 1..seeds --jobs 2 [--json --junit]` by
 * scn_main in a forked child, whose peak RSS and its workers' it reports. */
static int rss_once(const char *file, int seeds, bool reports, rss_report *out, double *secs)
{
    char range[32], json[64], junit[64];
    int fds[2];
    snprintf(range, sizeof range, "1..%d", seeds);
    snprintf(json, sizeof json, "/tmp/bench-rss-%d.json", (int)getpid());
    snprintf(junit, sizeof junit, "/tmp/bench-rss-%d.xml", (int)getpid());
    if (pipe(fds) < 0)
        return -1;
    double t0 = now_s();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char prog[] = "scenario", explore[] = "explore", o_seeds[] = "--seeds", o_jobs[] = "--jobs",
             two[] = "2", o_json[] = "--json", o_junit[] = "--junit";
        char *argv[] = {prog, explore, (char *)file, o_seeds, range, o_jobs,
                        two,  o_json,  json,         o_junit, junit, NULL};
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDOUT_FILENO);
        dup2(devnull, STDERR_FILENO);
        close(fds[0]);
        rss_report r = {0};
        r.rc = scn_main(reports ? 11 : 7, argv);
        struct rusage self, children;
        getrusage(RUSAGE_SELF, &self);
        getrusage(RUSAGE_CHILDREN, &children);
        r.self_maxrss = self.ru_maxrss;
        r.children_maxrss = children.ru_maxrss;
        r.self_hwm = proc_status_kb("VmHWM");
        ssize_t w = write(fds[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    ssize_t got = read(fds[0], out, sizeof *out);
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    *secs = now_s() - t0;
    unlink(json);
    unlink(junit);
    return got == (ssize_t)sizeof *out && out->rc <= 1 ? 0 : -1;
}

/* One process running seeds 1..500 in turn, as an explore worker: VmRSS. */
static int worker_rss(const bench_case *c, const char *file)
{
    static const int marks[] = {1, 10, 50, 100, 200, 500};
    long rss[6] = {0};
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        scn_scenario *sc;
        if (scn_scenario_load(file, &sc, NULL) < 0)
            _exit(1);
        for (int seed = 1, m = 0; seed <= 500; seed++) {
            scn_run_options o = {.seed = (uint64_t)seed, .seed_given = true};
            scn_run_result r;
            scn_run(sc, &o, &r);
            if (seed == marks[m])
                rss[m++] = proc_status_kb("VmRSS");
        }
        scn_scenario_free(sc);
        ssize_t w = write(fds[1], rss, sizeof rss);
        _exit(w == (ssize_t)sizeof rss ? 0 : 1);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    ssize_t got = read(fds[0], rss, sizeof rss);
    close(fds[0]);
    waitpid(pid, NULL, 0);
    if (got != (ssize_t)sizeof rss)
        return -1;
    printf("{\"bench\":\"scenario_worker_rss\",\"scenario\":\"%s\",\"unit\":\"kB\",\"vmrss\":{",
           c->name);
    for (int m = 0; m < 6; m++)
        printf("%s\"%d\":%ld", m ? "," : "", marks[m], rss[m]);
    printf("}}\n");
    fflush(stdout);
    return 0;
}

static int bench_rss(const bench_case *c, const char *file)
{
    static const int campaign[] = {1000, 10000};
    for (int reports = 0; reports <= 1; reports++) {
        for (size_t i = 0; i < sizeof campaign / sizeof *campaign; i++) {
            rss_report r;
            double secs;
            if (rss_once(file, campaign[i], reports, &r, &secs) < 0) {
                fprintf(stderr, "bench_scenarios: explore %s for its RSS failed\n", file);
                return -1;
            }
            printf("{\"bench\":\"scenario_rss\",\"scenario\":\"%s\",\"seeds\":%d,\"jobs\":2,"
                   "\"reports\":%s,\"explore_maxrss_kb\":%ld,\"explore_vmhwm_kb\":%ld,"
                   "\"worker_maxrss_kb\":%ld,\"seconds\":%.1f,\"seeds_per_s\":%.1f}\n",
                   c->name, campaign[i], reports ? "true" : "false", r.self_maxrss, r.self_hwm,
                   r.children_maxrss, secs, campaign[i] / secs);
            fflush(stdout);
        }
    }
    return worker_rss(c, file);
}

int main(int argc, char **argv)
{
    const char *prog = NULL, *only = NULL;
    double scale = 1;
    int repeat = 3;
    bool rate = true, breakdown = true, rss = false, reuse = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--scale") && i + 1 < argc)
            scale = atof(argv[++i]);
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-rate"))
            rate = false;
        else if (!strcmp(argv[i], "--no-breakdown"))
            breakdown = false;
        else if (!strcmp(argv[i], "--rss"))
            rss = true;
        else if (!strcmp(argv[i], "--reuse"))
            reuse = true;
        else if (argv[i][0] != '-' && !prog)
            prog = argv[i];
        else
            break;
    }
    if (!prog || scale <= 0 || repeat < 1 || repeat > 32) {
        fprintf(stderr, "usage: bench_scenarios SCENARIO_PROGRAM [--only NAME] [--scale X] "
                        "[--repeat 1..32] [--no-rate] [--no-breakdown] [--reuse] [--rss]\n");
        return 2;
    }
    scn_register_examples();
    int status = 0, matched = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const bench_case *c = &cases[i];
        if (only && strcmp(only, c->name) != 0)
            continue;
        matched++;
        char file[512];
        snprintf(file, sizeof file, "%s/%s.yaml", KH_SCENARIOS, c->name);
        int seeds = (int)lround(c->seeds * scale);
        if (seeds < 2)
            seeds = 2;
        if (rss) {
            if (bench_rss(c, file) < 0)
                status = 2;
            continue;
        }
        if (rate && bench_rate(prog, c, file, seeds, repeat) < 0)
            status = 2;
        if (breakdown && bench_breakdown(c, file, seeds / 3 > 3 ? seeds / 3 : 3, reuse) < 0)
            status = 2;
    }
    if (!matched) {
        fprintf(stderr, "bench_scenarios: no scenario named %s\n", only);
        return 2;
    }
    return status;
}
