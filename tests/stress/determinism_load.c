/*
 * determinism_load.c - the same seed gives the same run on a loaded
 * machine. For every scenario file and seed: one reference run on the
 * machine as it is, then busy loops start (child processes, one per core
 * by default, bounded in time) and the same seed is replayed again and
 * again, each trace compared byte for byte with the reference. Any stall
 * or difference fails (exit 1) and names the first differing trace line.
 *
 *   determinism_load [--runs N] [--seeds A..B] [--busy K] [--max-seconds S] FILE...
 *
 * Prints one JSON object a line: one per scenario and seed, then a total.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scn/run.h"

#define MAX_BUSY 16

static pid_t busy[MAX_BUSY];
static int nbusy;

/* A busy loop that ends with its parent, or after max_s at the latest. */
static void busy_start(int n, unsigned max_s)
{
    for (int i = 0; i < n && nbusy < MAX_BUSY; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            alarm(max_s);
            volatile unsigned long spin = 0;
            for (;;)
                spin++;
        }
        if (pid > 0)
            busy[nbusy++] = pid;
    }
}

static void busy_stop(void)
{
    for (int i = 0; i < nbusy; i++)
        kill(busy[i], SIGKILL);
    for (int i = 0; i < nbusy; i++)
        waitpid(busy[i], NULL, 0);
    nbusy = 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Print s as a JSON string's contents (quotes, backslashes, controls). */
static void json_str(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
}

int main(int argc, char **argv)
{
    unsigned runs = 10, busy_n = 2, max_s = 1800;
    uint64_t lo = 1, hi = 3;
    const char *files[64];
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--runs") && v)
            runs = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--busy") && v)
            busy_n = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--max-seconds") && v)
            max_s = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--seeds") && v &&
                 sscanf(argv[++i], "%" SCNu64 "..%" SCNu64, &lo, &hi) == 2 && lo <= hi)
            ;
        else if (argv[i][0] != '-' && nfiles < 64)
            files[nfiles++] = argv[i];
        else {
            fprintf(stderr, "usage: determinism_load [--runs N] [--seeds A..B] [--busy K] "
                            "[--max-seconds S] FILE...\n");
            return 2;
        }
    }
    if (nfiles == 0 || runs == 0) {
        fprintf(stderr, "determinism_load: no scenario files\n");
        return 2;
    }
    scn_register_examples();
    unsigned long total = 0, differing = 0, stalled = 0, errors = 0;
    double t0 = now_s();
    char ref[256];
    const char *dir = getenv("TMPDIR");
    snprintf(ref, sizeof ref, "%s/determinism-ref-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(ref);
    if (fd < 0) {
        perror("determinism_load: mkstemp");
        return 2;
    }
    close(fd);
    for (int f = 0; f < nfiles; f++) {
        scn_scenario *sc = NULL;
        scn_error err = {0};
        if (scn_scenario_load(files[f], &sc, &err) < 0) {
            fprintf(stderr, "determinism_load: %s:%d: %s: %s\n", files[f], err.line, err.field,
                    err.message);
            errors++;
            continue;
        }
        for (uint64_t seed = lo; seed <= hi; seed++) {
            scn_run_options o = {.seed = seed, .seed_given = true, .trace_path = ref};
            scn_run_result quiet;
            double ts = now_s();
            int rc = scn_run(sc, &o, &quiet);
            scn_determinism d = {0};
            if (rc == 0 && !quiet.stalled) {
                busy_start((int)busy_n, max_s);
                o.trace_path = NULL;
                rc = scn_check_determinism(sc, &o, runs, ref, &d);
                busy_stop();
            }
            total += d.runs;
            differing += d.differing;
            stalled += d.stalled + (quiet.stalled ? 1 : 0);
            errors += rc < 0;
            printf("{\"scenario\":\"");
            json_str(files[f]);
            printf("\",\"seed\":%" PRIu64 ",\"runs\":%u,\"differing\":%u,\"stalled\":%u,"
                   "\"reference_stalled\":%s,\"trace\":\"%016" PRIx64 "\",\"lines\":%lu,"
                   "\"seconds\":%.2f",
                   seed, d.runs, d.differing, d.stalled, quiet.stalled ? "true" : "false",
                   quiet.trace_hash, quiet.trace_lines, now_s() - ts);
            if (rc < 0) {
                printf(",\"error\":\"%s\"", scn_strerror(rc));
            } else if (quiet.stalled) {
                printf(",\"error\":\"");
                json_str(quiet.message);
                printf("\"");
            } else if (d.differing) {
                printf(",\"first_diff_run\":%u,\"line\":%lu,\"expected\":\"", d.first_diff, d.line);
                json_str(d.expected);
                printf("\",\"got\":\"");
                json_str(d.got);
                printf("\"");
            }
            if (d.stalled) {
                printf(",\"last_message\":\"");
                json_str(d.last.message);
                printf("\"");
            }
            printf("}\n");
            fflush(stdout);
        }
        scn_scenario_free(sc);
    }
    unlink(ref);
    printf("{\"total_runs\":%lu,\"differing\":%lu,\"stalled\":%lu,\"errors\":%lu,\"busy_loops\":%u,"
           "\"seconds\":%.1f}\n",
           total, differing, stalled, errors, busy_n, now_s() - t0);
    return differing || stalled || errors ? 1 : 0;
}
