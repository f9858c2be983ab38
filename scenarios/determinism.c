/*
 * determinism.c - the same seed, the same run: run a scenario again and
 * again and compare the traces byte for byte with a reference, reporting
 * the first line that differs (scn_check_determinism in scn/run.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scn/run.h"

/* Copy a trace line for a report: without its newline, cut to fit. */
static void keep_line(char *dst, size_t len, const char *line, ssize_t n)
{
    if (n > 0 && line[n - 1] == '\n')
        n--;
    snprintf(dst, len, "%.*s", n > 0 ? (int)n : 0, n > 0 ? line : "");
}

/*
 * Compare two trace files: 0 if identical, 1 if not (*line is the first
 * differing line, its text in a and b kept in ea and eb), -1 if one cannot
 * be read.
 */
static int trace_diff(const char *a, const char *b, unsigned long *line, char *ea, char *eb,
                      size_t len)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int rc = -1;
    char *la = NULL, *lb = NULL;
    size_t ca = 0, cb = 0;
    if (!fa || !fb)
        goto out;
    for (unsigned long n = 1;; n++) {
        ssize_t na = getline(&la, &ca, fa), nb = getline(&lb, &cb, fb);
        if (na < 0 && nb < 0) {
            rc = 0;
            break;
        }
        if (na != nb || memcmp(la, lb, (size_t)na) != 0) {
            *line = n;
            keep_line(ea, len, la, na);
            keep_line(eb, len, lb, nb);
            rc = 1;
            break;
        }
    }
out:
    free(la);
    free(lb);
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return rc;
}

/* A temporary file for one run's trace; its path in buf. */
static int temp_trace(char *buf, size_t len)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, len, "%s/scn-det-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(buf);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

int scn_check_determinism(const scn_scenario *sc, const scn_run_options *opts, unsigned runs,
                          const char *reference_trace, scn_determinism *out)
{
    char ref[512] = "", cur[512] = "";
    int rc = SCN_ERR_IO;
    memset(out, 0, sizeof *out);
    scn_run_options o = *opts;
    if (reference_trace) {
        snprintf(ref, sizeof ref, "%s", reference_trace);
    } else {
        if (opts->trace_path)
            snprintf(ref, sizeof ref, "%s", opts->trace_path);
        else if (temp_trace(ref, sizeof ref) < 0)
            return SCN_ERR_IO;
        o.trace_path = ref;
        if ((rc = scn_run(sc, &o, &out->reference)) < 0)
            goto out;
    }
    if (temp_trace(cur, sizeof cur) < 0) {
        rc = SCN_ERR_IO;
        goto out;
    }
    o.trace_path = cur;
    for (unsigned i = 1; i <= runs; i++) {
        if ((rc = scn_run(sc, &o, &out->last)) < 0)
            goto out;
        out->runs++;
        out->stalled += out->last.stalled;
        char ea[sizeof out->expected], eb[sizeof out->got];
        unsigned long line = 0;
        int d = trace_diff(ref, cur, &line, ea, eb, sizeof ea);
        if (d < 0) {
            rc = SCN_ERR_IO;
            goto out;
        }
        if (d == 0)
            continue;
        if (out->differing++ == 0) {
            out->first_diff = i;
            out->line = line;
            memcpy(out->expected, ea, sizeof ea);
            memcpy(out->got, eb, sizeof eb);
        }
    }
    rc = 0;
out:
    if (cur[0])
        unlink(cur);
    if (!reference_trace && !opts->trace_path && ref[0])
        unlink(ref);
    return rc;
}
