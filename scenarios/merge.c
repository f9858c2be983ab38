/*
 * merge.c - shard reports read, checked against each other and combined
 * (merge.h).
 */
#include "merge.h"

#include "junit_read.h"
#include "shard.h"
#include "scn/scenario.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPORT_BYTES (1u << 30)
#define MAX_CAMPAIGN_FILES 1000 /* under junit.c's 1024 properties */

typedef struct source {
    char *path;
    bool known; /* it names its campaign and shard */
    char *command;
    char **files;
    size_t nfiles;
    bool seeds_given;
    uint64_t first, last;
    int k, n;
} source;

struct scn_merge {
    source *src;
    size_t nsrc;
    scn_merged_run *runs;
    size_t nruns;
    bool finished;
    /* the campaign (after finish) */
    const source *ref; /* a report that names it, or NULL */
    char **files;      /* when no report names it: the files as first seen */
    size_t nfiles;
    const char *command;
};

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return SCN_ERR_INPUT;
}

scn_merge *scn__merge_new(void)
{
    return calloc(1, sizeof(scn_merge));
}

static void run_clear(scn_merged_run *r)
{
    free(r->file);
    free(r->scenario);
    free(r->message);
    free(r->replay);
}

static void source_clear(source *s)
{
    free(s->path);
    free(s->command);
    for (size_t i = 0; i < s->nfiles; i++)
        free(s->files[i]);
    free(s->files);
}

void scn__merge_free(scn_merge *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nruns; i++)
        run_clear(&m->runs[i]);
    for (size_t i = 0; i < m->nsrc; i++)
        source_clear(&m->src[i]);
    free(m->runs);
    free(m->src);
    free(m->files); /* borrowed strings */
    free(m);
}

/* ---- reading ---- */

/* What one report adds, before it joins the merge. */
typedef struct reading {
    const char *name;
    source s;
    scn_merged_run *runs;
    size_t nruns, cap;
    bool props_done; /* JUnit: the properties of the first suite only */
    char *err;
    size_t errlen;
} reading;

static int add_run(reading *rd, const scn_merged_run *r)
{
    if (rd->nruns == rd->cap) {
        size_t cap = rd->cap ? rd->cap * 2 : 64;
        scn_merged_run *p = realloc(rd->runs, cap * sizeof *p);
        if (!p)
            return SCN_ERR_NOMEM;
        rd->runs = p;
        rd->cap = cap;
    }
    rd->runs[rd->nruns++] = *r;
    return 0;
}

static int add_file_name(source *s, const char *f)
{
    char **p;

    if (s->nfiles >= MAX_CAMPAIGN_FILES)
        return SCN_ERR_INPUT;
    p = realloc(s->files, (s->nfiles + 1) * sizeof *p);
    if (!p)
        return SCN_ERR_NOMEM;
    s->files = p;
    if (!(s->files[s->nfiles] = strdup(f)))
        return SCN_ERR_NOMEM;
    s->nfiles++;
    return 0;
}

/* Digits only, no sign: 0 and *out, or -1. */
static int parse_u64(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;

    if (len == 0 || len > 20)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static bool parse_hash(const char *s, uint64_t *out)
{
    uint64_t v = 0;

    if (!s || strlen(s) != 16)
        return false;
    for (int i = 0; i < 16; i++) {
        int d = s[i] >= '0' && s[i] <= '9'   ? s[i] - '0'
                : s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10
                : s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 10
                                             : -1;
        if (d < 0)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return true;
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* -- JSON -- */

static int json_run(reading *rd, size_t i, json_t *o)
{
    json_t *seed = json_object_get(o, "seed"), *trace = json_object_get(o, "trace");
    json_t *time = json_object_get(o, "time");
    const char *file = json_string_value(json_object_get(o, "file"));
    const char *scenario = json_string_value(json_object_get(o, "scenario"));
    const char *message = json_string_value(json_object_get(o, "message"));
    const char *replay = json_string_value(json_object_get(o, "replay"));
    int verdict = scn__verdict_parse(json_string_value(json_object_get(o, "verdict")));
    scn_merged_run r = {0};

    if (!json_is_object(o))
        return fail(rd->err, rd->errlen, "%s: results[%zu] is not an object", rd->name, i);
    if (!file || !file[0])
        return fail(rd->err, rd->errlen, "%s: results[%zu]: no \"file\"", rd->name, i);
    if (!json_is_integer(seed) || json_integer_value(seed) < 0)
        return fail(rd->err, rd->errlen, "%s: results[%zu]: no \"seed\" (a whole number >= 0)",
                    rd->name, i);
    if (verdict < 0)
        return fail(rd->err, rd->errlen,
                    "%s: results[%zu]: \"verdict\" must be \"pass\", \"fail\" or \"error\"",
                    rd->name, i);
    if (trace && !json_is_null(trace) && !parse_hash(json_string_value(trace), &r.trace))
        return fail(rd->err, rd->errlen,
                    "%s: results[%zu]: \"trace\" must be null or 16 hexadecimal digits", rd->name,
                    i);
    if (time && !json_is_number(time))
        return fail(rd->err, rd->errlen, "%s: results[%zu]: \"time\" is not a number", rd->name, i);
    r.has_trace = trace && !json_is_null(trace);
    r.seed = (uint64_t)json_integer_value(seed);
    r.verdict = (scn_verdict)verdict;
    r.time_s = time ? json_number_value(time) : 0;
    r.file = strdup(file);
    r.scenario = dup_or_empty(scenario ? scenario : file);
    r.message = dup_or_empty(message);
    r.replay = dup_or_empty(replay);
    if (!r.file || !r.scenario || !r.message || !r.replay || add_run(rd, &r) != 0) {
        run_clear(&r);
        return SCN_ERR_NOMEM;
    }
    return 0;
}

static int read_json(reading *rd, const char *text, size_t len)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    json_t *version, *files, *seeds, *shard, *results, *summary, *v;
    const char *command;
    size_t i;
    int rc = SCN_ERR_INPUT;

    if (!root)
        return fail(rd->err, rd->errlen, "%s: line %d: %s", rd->name, je.line, je.text);
    version = json_object_get(root, "version");
    if (!json_is_object(root) || !json_string_value(json_object_get(root, "report")) ||
        strcmp(json_string_value(json_object_get(root, "report")), "scenario") != 0) {
        fail(rd->err, rd->errlen, "%s: not a scenario report (no \"report\": \"scenario\")",
             rd->name);
        goto out;
    }
    if (json_integer_value(version) != 1) {
        fail(rd->err, rd->errlen, "%s: report version %s: this program reads version 1", rd->name,
             json_is_integer(version) ? "other than 1" : "missing");
        goto out;
    }
    command = json_string_value(json_object_get(root, "command"));
    files = json_object_get(root, "files");
    seeds = json_object_get(root, "seeds");
    shard = json_object_get(root, "shard");
    results = json_object_get(root, "results");
    summary = json_object_get(root, "summary");
    if (!command || !json_is_array(files) || !json_is_array(results)) {
        fail(rd->err, rd->errlen, "%s: a report needs \"command\", \"files\" and \"results\"",
             rd->name);
        goto out;
    }
    if (!json_is_object(summary) || json_integer_value(json_object_get(summary, "runs")) !=
                                        (json_int_t)json_array_size(results)) {
        fail(rd->err, rd->errlen,
             "%s: its summary does not count the %zu results it holds: cut short or edited?",
             rd->name, json_array_size(results));
        goto out;
    }
    if (!(rd->s.command = strdup(command))) {
        rc = SCN_ERR_NOMEM;
        goto out;
    }
    json_array_foreach(files, i, v)
    {
        if (!json_string_value(v)) {
            fail(rd->err, rd->errlen, "%s: files[%zu] is not a string", rd->name, i);
            goto out;
        }
        if ((rc = add_file_name(&rd->s, json_string_value(v))) != 0) {
            if (rc == SCN_ERR_INPUT)
                fail(rd->err, rd->errlen, "%s: more than %d files", rd->name, MAX_CAMPAIGN_FILES);
            goto out;
        }
    }
    rc = SCN_ERR_INPUT;
    if (seeds && !json_is_null(seeds)) {
        json_t *a = json_object_get(seeds, "first"), *b = json_object_get(seeds, "last");
        if (!json_is_integer(a) || !json_is_integer(b) || json_integer_value(a) < 0 ||
            json_integer_value(b) < json_integer_value(a)) {
            fail(rd->err, rd->errlen, "%s: \"seeds\" must be {\"first\": N, \"last\": M}, N <= M",
                 rd->name);
            goto out;
        }
        rd->s.seeds_given = true;
        rd->s.first = (uint64_t)json_integer_value(a);
        rd->s.last = (uint64_t)json_integer_value(b);
    }
    {
        json_t *k = json_object_get(shard, "index"), *n = json_object_get(shard, "count");
        if (!json_is_integer(k) || !json_is_integer(n) || json_integer_value(n) < 1 ||
            json_integer_value(n) > SCN_SHARD_MAX || json_integer_value(k) < 0 ||
            json_integer_value(k) >= json_integer_value(n)) {
            fail(rd->err, rd->errlen,
                 "%s: \"shard\" must be {\"index\": K, \"count\": N}, 0 <= K < N", rd->name);
            goto out;
        }
        rd->s.known = true;
        rd->s.k = (int)json_integer_value(k);
        rd->s.n = (int)json_integer_value(n);
    }
    json_array_foreach(results, i, v)
    {
        if ((rc = json_run(rd, i, v)) != 0)
            goto out;
    }
    rc = 0;
out:
    json_decref(root);
    return rc;
}

/* -- JUnit -- */

static int junit_property(void *user, const char *name, const char *value)
{
    reading *rd = user;
    const char *slash, *dots;
    uint64_t k, n;

    if (rd->props_done)
        return 0;
    if (!strcmp(name, "command")) {
        free(rd->s.command);
        return (rd->s.command = strdup(value)) ? 0 : SCN_ERR_NOMEM;
    }
    if (!strcmp(name, "file")) {
        int rc = add_file_name(&rd->s, value);
        return rc == SCN_ERR_INPUT ? fail(rd->err, rd->errlen, "%s: more than %d files", rd->name,
                                          MAX_CAMPAIGN_FILES)
                                   : rc;
    }
    if (!strcmp(name, "shard")) {
        slash = strchr(value, '/');
        if (!slash || parse_u64(value, (size_t)(slash - value), &k) < 0 ||
            parse_u64(slash + 1, strlen(slash + 1), &n) < 0 || n < 1 || n > SCN_SHARD_MAX || k >= n)
            return fail(rd->err, rd->errlen,
                        "%s: property shard=\"%s\": expected K/N with 0 <= K < N", rd->name, value);
        rd->s.known = true;
        rd->s.k = (int)k;
        rd->s.n = (int)n;
        return 0;
    }
    if (!strcmp(name, "seeds")) {
        dots = strstr(value, "..");
        if (!dots || parse_u64(value, (size_t)(dots - value), &rd->s.first) < 0 ||
            parse_u64(dots + 2, strlen(dots + 2), &rd->s.last) < 0 || rd->s.last < rd->s.first)
            return fail(rd->err, rd->errlen, "%s: property seeds=\"%s\": expected N..M", rd->name,
                        value);
        rd->s.seeds_given = true;
    }
    return 0; /* other properties are not ours */
}

static int junit_case(void *user, const scn_junit_case *c)
{
    reading *rd = user;
    scn_merged_run r = {0};
    const char *at = NULL, *p;
    size_t name_len, out_len;

    rd->props_done = true;
    if (c->status == SCN_JUNIT_SKIPPED)
        return 0; /* not a run */
    for (p = strstr(c->name, " seed="); p; p = strstr(p + 1, " seed="))
        at = p;
    if (!at || parse_u64(at + 6, strlen(at + 6), &r.seed) < 0)
        return fail(rd->err, rd->errlen,
                    "%s: testcase \"%s\": no \"seed=N\" at the end of its name", rd->name, c->name);
    if (!c->classname || !c->classname[0])
        return fail(rd->err, rd->errlen, "%s: testcase \"%s\": no classname (the scenario file)",
                    rd->name, c->name);
    name_len = (size_t)(at - c->name);
    out_len = c->system_out ? strcspn(c->system_out, "\n") : 0;
    r.verdict = c->status == SCN_JUNIT_FAILED  ? SCN_VERDICT_FAIL
                : c->status == SCN_JUNIT_ERROR ? SCN_VERDICT_ERROR
                                               : SCN_VERDICT_PASS;
    r.time_s = c->time_s;
    r.file = strdup(c->classname);
    r.scenario = strndup(c->name, name_len);
    r.message = dup_or_empty(c->message);
    r.replay = strndup(c->system_out ? c->system_out : "", out_len);
    if (!r.file || !r.scenario || !r.message || !r.replay || add_run(rd, &r) != 0) {
        run_clear(&r);
        return SCN_ERR_NOMEM;
    }
    return 0;
}

static int read_junit(reading *rd, const char *text, size_t len)
{
    char why[256];
    scn_junit_read_cb cb = {.property = junit_property, .testcase = junit_case, .user = rd};
    int rc = scn__junit_read(text, len, &cb, why, sizeof why);

    if (rc == SCN_ERR_INPUT && why[0])
        return fail(rd->err, rd->errlen, "%s: %s", rd->name, why);
    if (rc == 0 && rd->s.known && !rd->s.command)
        return fail(rd->err, rd->errlen, "%s: it names its shard but not its command", rd->name);
    return rc;
}

int scn__merge_add_text(scn_merge *m, const char *name, const char *text, size_t len, char *err,
                        size_t errlen)
{
    reading rd = {.name = name ? name : "(report)", .err = err, .errlen = errlen};
    size_t i = 0;
    int rc;

    if (err && errlen)
        err[0] = '\0';
    if (!m || !text || m->finished)
        return SCN_ERR_INPUT;
    while (i < len && strchr(" \t\r\n", text[i]))
        i++;
    if (len - i >= 3 && memcmp(text + i, "\xEF\xBB\xBF", 3) == 0)
        i += 3; /* a byte-order mark */
    if (i < len && text[i] == '{')
        rc = read_json(&rd, text, len);
    else if (i < len && text[i] == '<')
        rc = read_junit(&rd, text, len);
    else
        rc = fail(err, errlen, "%s: %s", rd.name,
                  i == len ? "empty: not a report" : "neither a JSON nor a JUnit XML report");
    if (rc == SCN_ERR_NOMEM)
        fail(err, errlen, "%s: out of memory", rd.name);
    if (rc == 0) {
        source *s = realloc(m->src, (m->nsrc + 1) * sizeof *s);
        scn_merged_run *runs =
            s ? realloc(m->runs, (m->nruns + rd.nruns + 1) * sizeof *runs) : NULL;
        if (s)
            m->src = s;
        if (runs)
            m->runs = runs;
        rd.s.path = strdup(rd.name);
        if (!s || !runs || !rd.s.path) {
            rc = fail(err, errlen, "%s: out of memory", rd.name);
        } else {
            m->src[m->nsrc] = rd.s;
            for (size_t k = 0; k < rd.nruns; k++) {
                rd.runs[k].source = rd.s.path;
                rd.runs[k].report = m->nsrc;
                m->runs[m->nruns++] = rd.runs[k];
            }
            m->nsrc++;
            free(rd.runs);
            return 0;
        }
    }
    for (size_t k = 0; k < rd.nruns; k++)
        run_clear(&rd.runs[k]);
    free(rd.runs);
    source_clear(&rd.s);
    return rc;
}

int scn__merge_add_file(scn_merge *m, const char *path, char *err, size_t errlen)
{
    FILE *f;
    char *text = NULL;
    size_t len = 0, cap = 0, n;
    int rc;

    if (!m || !path)
        return SCN_ERR_INPUT;
    f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot read it: %s", path, strerror(e));
        return SCN_ERR_IO;
    }
    do {
        if (len + 65536 > cap) {
            char *p = len + 65536 > MAX_REPORT_BYTES ? NULL : realloc(text, cap = len + 65536 * 4);
            if (!p) {
                free(text);
                fclose(f);
                return fail(err, errlen, "%s: too large for a report (or out of memory)", path);
            }
            text = p;
        }
        n = fread(text + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    if (ferror(f)) {
        int e = errno;
        free(text);
        fclose(f);
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot read it: %s", path, strerror(e));
        return SCN_ERR_IO;
    }
    fclose(f);
    rc = scn__merge_add_text(m, path, text ? text : "", len, err, errlen);
    free(text);
    return rc;
}

/* ---- checking and ordering ---- */

static bool same_campaign(const source *a, const source *b)
{
    if (a->n != b->n || strcmp(a->command ? a->command : "", b->command ? b->command : "") != 0 ||
        a->nfiles != b->nfiles || a->seeds_given != b->seeds_given ||
        (a->seeds_given && (a->first != b->first || a->last != b->last)))
        return false;
    for (size_t i = 0; i < a->nfiles; i++)
        if (strcmp(a->files[i], b->files[i]) != 0)
            return false;
    return true;
}

static void describe(const source *s, char *buf, size_t len)
{
    int n = snprintf(buf, len, "shard %d/%d of `%s", s->k, s->n, s->command ? s->command : "?");
    for (size_t i = 0; i < s->nfiles && i < 3 && n >= 0 && (size_t)n < len; i++)
        n += snprintf(buf + n, len - (size_t)n, " %s", s->files[i]);
    if (n >= 0 && (size_t)n < len && s->nfiles > 3)
        n += snprintf(buf + n, len - (size_t)n, " ... (%zu files)", s->nfiles);
    if (n >= 0 && (size_t)n < len && s->seeds_given)
        n +=
            snprintf(buf + n, len - (size_t)n, " --seeds %" PRIu64 "..%" PRIu64, s->first, s->last);
    if (n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "`");
}

static const source *source_of(const scn_merge *m, const char *path)
{
    for (size_t i = 0; i < m->nsrc; i++)
        if (m->src[i].path == path)
            return &m->src[i];
    return NULL;
}

/* The campaign's position of file, or -1. */
static long file_rank(const scn_merge *m, const char *file)
{
    char *const *files = m->ref ? m->ref->files : m->files;
    size_t n = m->ref ? m->ref->nfiles : m->nfiles;

    for (size_t i = 0; i < n; i++)
        if (strcmp(files[i], file) == 0)
            return (long)i;
    return -1;
}

static const scn_merge *sorting; /* qsort has no argument for it */

static int cmp_run(const void *pa, const void *pb)
{
    const scn_merged_run *a = pa, *b = pb;
    long ra = file_rank(sorting, a->file), rb = file_rank(sorting, b->file);
    int c;

    if (ra != rb)
        return ra < 0 ? 1 : rb < 0 ? -1 : ra < rb ? -1 : 1;
    if (ra < 0 && (c = strcmp(a->file, b->file)) != 0)
        return c;
    if (a->seed != b->seed)
        return a->seed < b->seed ? -1 : 1;
    return a->report < b->report ? -1 : a->report > b->report; /* the first report given first */
}

static int check_shards(scn_merge *m, char *err, size_t errlen)
{
    char da[512], db[512];
    bool *seen;
    int missing = 0, n;

    for (size_t i = 0; i < m->nsrc; i++) {
        if (!m->src[i].known)
            continue;
        if (!m->ref) {
            m->ref = &m->src[i];
            continue;
        }
        if (!same_campaign(m->ref, &m->src[i])) {
            describe(&m->src[i], da, sizeof da);
            describe(m->ref, db, sizeof db);
            return fail(err, errlen, "%s is %s, but %s is %s: not the same campaign",
                        m->src[i].path, da, m->ref->path, db);
        }
    }
    if (!m->ref)
        return 0;
    n = m->ref->n;
    seen = calloc((size_t)n, sizeof *seen);
    if (!seen)
        return SCN_ERR_NOMEM;
    for (size_t i = 0; i < m->nsrc; i++)
        if (m->src[i].known)
            seen[m->src[i].k] = true;
    for (int k = 0; k < n; k++)
        missing += !seen[k];
    if (missing) {
        int len =
            snprintf(err, errlen, "%d of the %d shards %s missing (numbered from 0):", missing, n,
                     missing == 1 ? "is" : "are");
        int listed = 0;
        for (int k = 0; k < n && listed < 20 && len >= 0 && (size_t)len < errlen; k++) {
            if (!seen[k]) {
                len += snprintf(err + len, errlen - (size_t)len, " %d", k);
                listed++;
            }
        }
        if (len >= 0 && (size_t)len < errlen)
            snprintf(err + len, errlen - (size_t)len, "%s; the reports given are of %s",
                     listed < missing ? " ..." : "", (describe(m->ref, da, sizeof da), da));
        free(seen);
        return SCN_ERR_INPUT;
    }
    free(seen);
    return 0;
}

/* Each run of a report that names its shard belongs to that shard. */
static int check_owners(const scn_merge *m, char *err, size_t errlen)
{
    for (size_t i = 0; i < m->nruns; i++) {
        const scn_merged_run *r = &m->runs[i];
        const source *s = source_of(m, r->source);
        long rank;
        if (!s || !s->known)
            continue;
        rank = file_rank(m, r->file);
        if (rank < 0)
            return fail(err, errlen, "%s: a run of %s, which is not among the campaign's files",
                        s->path, r->file);
        if (s->seeds_given && (r->seed < s->first || r->seed > s->last))
            return fail(err, errlen,
                        "%s: seed %" PRIu64 " of %s is outside the campaign's seeds %" PRIu64
                        "..%" PRIu64,
                        s->path, r->seed, r->file, s->first, s->last);
        uint64_t item = s->seeds_given ? r->seed - s->first : (uint64_t)rank;
        if (item % (uint64_t)s->n != (uint64_t)s->k)
            return fail(err, errlen,
                        "%s: seed %" PRIu64 " of %s belongs to shard %" PRIu64 "/%d, not to "
                        "shard %d/%d as the report says",
                        s->path, r->seed, r->file, item % (uint64_t)s->n, s->n, s->k, s->n);
    }
    return 0;
}

/* Runs seen twice agree; keep one of each. */
static int dedupe(scn_merge *m, char *err, size_t errlen)
{
    size_t out = 0;

    for (size_t i = 0; i < m->nruns; i++) {
        scn_merged_run *keep = out ? &m->runs[out - 1] : NULL, *r = &m->runs[i];
        if (!keep || strcmp(keep->file, r->file) != 0 || keep->seed != r->seed) {
            if (out != i) {
                m->runs[out] = *r;
                *r = (scn_merged_run){0}; /* moved: one owner, also if we stop early */
            }
            out++;
            continue;
        }
        if (keep->verdict != r->verdict)
            return fail(err, errlen,
                        "seed %" PRIu64 " of %s: \"%s\" in %s but \"%s\" in %s: the reports "
                        "disagree",
                        r->seed, r->file, scn__verdict_name(keep->verdict), keep->source,
                        scn__verdict_name(r->verdict), r->source);
        if (keep->has_trace && r->has_trace && keep->trace != r->trace)
            return fail(err, errlen,
                        "seed %" PRIu64 " of %s: trace %016" PRIx64 " in %s but %016" PRIx64
                        " in %s: the runs differ (is the scenario deterministic?)",
                        r->seed, r->file, keep->trace, keep->source, r->trace, r->source);
        if (!keep->has_trace && r->has_trace) {
            keep->has_trace = true;
            keep->trace = r->trace;
        }
        run_clear(r);
        *r = (scn_merged_run){0};
    }
    m->nruns = out;
    return 0;
}

int scn__merge_finish(scn_merge *m, char *err, size_t errlen)
{
    int rc;

    if (err && errlen)
        err[0] = '\0';
    if (!m || m->finished)
        return SCN_ERR_INPUT;
    if (m->nsrc == 0)
        return fail(err, errlen, "no reports to merge");
    if ((rc = check_shards(m, err, errlen)) != 0)
        return rc;
    if ((rc = check_owners(m, err, errlen)) != 0)
        return rc;
    sorting = m;
    qsort(m->runs, m->nruns, sizeof *m->runs, cmp_run);
    sorting = NULL;
    if ((rc = dedupe(m, err, errlen)) != 0)
        return rc;
    if (!m->ref) {
        /* No report names its campaign: its files are those of the runs,
         * by name, as the runs were sorted. */
        for (size_t i = 0; i < m->nruns; i++) {
            if (m->nfiles > 0 && strcmp(m->files[m->nfiles - 1], m->runs[i].file) == 0)
                continue;
            char **p = realloc(m->files, (m->nfiles + 1) * sizeof *p);
            if (!p)
                return SCN_ERR_NOMEM;
            m->files = p;
            m->files[m->nfiles++] = m->runs[i].file;
        }
    }
    m->command = m->ref ? m->ref->command : NULL;
    for (size_t i = 0; i < m->nsrc && !m->command; i++)
        m->command = m->src[i].command;
    m->finished = true;
    return 0;
}

size_t scn__merge_count(const scn_merge *m)
{
    return m && m->finished ? m->nruns : 0;
}

const scn_merged_run *scn__merge_get(const scn_merge *m, size_t i)
{
    return m && m->finished && i < m->nruns ? &m->runs[i] : NULL;
}

size_t scn__merge_reports(const scn_merge *m)
{
    return m ? m->nsrc : 0;
}

void scn__merge_meta(const scn_merge *m, scn_report_meta *out, int *nshards)
{
    *out = (scn_report_meta){.command = m && m->command ? m->command : "run", .shard_count = 1};
    if (nshards)
        *nshards = m && m->ref ? m->ref->n : 0;
    if (!m)
        return;
    if (m->ref) {
        out->files = (const char *const *)m->ref->files;
        out->nfiles = m->ref->nfiles;
        out->seeds_given = m->ref->seeds_given;
        out->seed_first = m->ref->first;
        out->seed_last = m->ref->last;
    } else {
        out->files = (const char *const *)m->files;
        out->nfiles = m->nfiles;
    }
}
