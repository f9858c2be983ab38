/*
 * report.c - the JSON report, streamed (format in report.h).
 *
 * Values go through jansson (json_dumps) so that strings are escaped as
 * JSON wants; the layout around them (one result a line) is written here.
 */
#include "report.h"
#include "junit.h"

#include "scn/scenario.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct scn_jreport {
    char *path, *tmp;
    FILE *f;
    FILE *failing; /* the summary's "failing" entries, as they come */
    unsigned long runs, passed, failed, errors, nfailing;
    double time;
};

static const char *const verdicts[] = {"pass", "fail", "error"};

const char *scn__verdict_name(scn_verdict v)
{
    return (unsigned)v <= SCN_VERDICT_ERROR ? verdicts[v] : "error";
}

int scn__verdict_parse(const char *s)
{
    for (int i = 0; s && i <= SCN_VERDICT_ERROR; i++)
        if (strcmp(s, verdicts[i]) == 0)
            return i;
    return -1;
}

/* A JSON string of s; bytes that are not valid UTF-8 (a message may quote
 * anything) become '?'. */
static json_t *text(const char *s)
{
    json_t *v = json_string(s ? s : "");
    char *copy;

    if (v || !s)
        return v;
    copy = strdup(s);
    if (!copy)
        return NULL;
    for (char *p = copy; *p; p++)
        if ((unsigned char)*p >= 0x80)
            *p = '?';
    v = json_string(copy);
    free(copy);
    return v;
}

static json_t *header(const scn_report_meta *m)
{
    json_t *files = json_array();

    for (size_t i = 0; files && i < m->nfiles; i++)
        json_array_append_new(files, text(m->files[i]));
    return json_pack("{s:s, s:i, s:s, s:o, s:o, s:{s:i, s:i}}", "report", "scenario", "version", 1,
                     "command", m->command ? m->command : "run", "files", files, "seeds",
                     m->seeds_given ? json_pack("{s:I, s:I}", "first", (json_int_t)m->seed_first,
                                                "last", (json_int_t)m->seed_last)
                                    : json_null(),
                     "shard", "index", m->shard_index, "count",
                     m->shard_count > 0 ? m->shard_count : 1);
}

scn_jreport *scn__jreport_open(const char *path, const scn_report_meta *m, int *rc)
{
    scn_jreport *r = NULL;
    json_t *h = NULL;
    char *head = NULL;
    int fd = -1, code = SCN_ERR_NOMEM;

    if (!path || !m) {
        code = SCN_ERR_INPUT;
        goto out;
    }
    r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path)) || asprintf(&r->tmp, "%s.XXXXXX", path) < 0)
        goto out;
    h = header(m);
    /* The header, less its closing brace: the results and summary follow. */
    head = h ? json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    if (!head)
        goto out;
    head[strlen(head) - 1] = '\0';
    code = SCN_ERR_IO;
    fd = mkstemp(r->tmp);
    if (fd < 0) {
        free(r->tmp);
        r->tmp = NULL;
        goto out;
    }
    r->f = fdopen(fd, "w");
    if (!r->f) {
        close(fd);
        goto out;
    }
    r->failing = tmpfile();
    if (!r->failing || fprintf(r->f, "%s,\n \"results\": [", head) < 0)
        goto out;
    code = 0;
out:
    free(head);
    json_decref(h);
    if (code != 0) {
        scn__jreport_discard(r);
        r = NULL;
    }
    if (rc)
        *rc = code;
    return r;
}

static json_t *trace_value(const scn_report_entry *e)
{
    char hex[17];

    if (!e->has_trace)
        return json_null();
    snprintf(hex, sizeof hex, "%016" PRIx64, e->trace);
    return json_string(hex);
}

int scn__jreport_add(scn_jreport *r, const scn_report_entry *e)
{
    double t;
    json_t *v;

    if (!r || !e || !e->file)
        return SCN_ERR_INPUT;
    t = isfinite(e->time_s) && e->time_s > 0 ? round(e->time_s * 1e6) / 1e6 : 0;
    v = json_pack("{s:o, s:o, s:I, s:s, s:o, s:o, s:f, s:o}", "file", text(e->file), "scenario",
                  text(e->scenario ? e->scenario : e->file), "seed", (json_int_t)e->seed, "verdict",
                  scn__verdict_name(e->verdict), "message", text(e->message), "trace",
                  trace_value(e), "time", t, "replay", text(e->replay));
    if (!v)
        return SCN_ERR_NOMEM;
    if (fputs(r->runs ? ",\n  " : "\n  ", r->f) < 0)
        return SCN_ERR_IO;
    /* JSON_PRESERVE_ORDER: the fields in the order above, in every line. */
    char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    json_decref(v);
    if (!s || fputs(s, r->f) < 0) {
        free(s);
        return SCN_ERR_IO;
    }
    free(s);
    r->runs++;
    r->passed += e->verdict == SCN_VERDICT_PASS;
    r->failed += e->verdict == SCN_VERDICT_FAIL;
    r->errors += e->verdict == SCN_VERDICT_ERROR;
    r->time += t;
    if (e->verdict != SCN_VERDICT_PASS) {
        v = json_pack("{s:o, s:I, s:o, s:o}", "file", text(e->file), "seed", (json_int_t)e->seed,
                      "message", text(e->message), "replay", text(e->replay));
        if (fputs(r->nfailing++ ? ",\n   " : "\n   ", r->failing) < 0)
            return SCN_ERR_IO;
        s = v ? json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(v);
        if (!s || fputs(s, r->failing) < 0) {
            free(s);
            return SCN_ERR_IO;
        }
        free(s);
    }
    return ferror(r->f) || ferror(r->failing) ? SCN_ERR_IO : 0;
}

int scn__jreport_close(scn_jreport *r)
{
    int rc = SCN_ERR_IO;
    FILE *f;

    if (!r)
        return 0;
    fprintf(
        r->f,
        "%s],\n \"summary\": {\"runs\": %lu, \"passed\": %lu, \"failed\": %lu, \"errors\": %lu, "
        "\"time\": %.6f, \"failing\": [",
        r->runs ? "\n " : "", r->runs, r->passed, r->failed, r->errors, r->time);
    if (scn__copy_stream(r->failing, r->f) != 0)
        goto out;
    fprintf(r->f, "%s]}}\n", r->nfailing ? "\n " : "");
    f = r->f;
    r->f = NULL;
    if ((ferror(f) | fclose(f)) != 0 || ferror(r->failing))
        goto out;
    if (rename(r->tmp, r->path) != 0)
        goto out;
    free(r->tmp);
    r->tmp = NULL; /* renamed: nothing to remove */
    rc = 0;
out:
    scn__jreport_discard(r);
    return rc;
}

void scn__jreport_discard(scn_jreport *r)
{
    if (!r)
        return;
    if (r->f)
        fclose(r->f);
    if (r->failing)
        fclose(r->failing);
    if (r->tmp)
        unlink(r->tmp);
    free(r->tmp);
    free(r->path);
    free(r);
}
