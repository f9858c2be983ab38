/*
 * diff.c - differential replay (scn/diff.h): two runs of one scenario,
 * their masked states at matching points, and a readable diff of the
 * first pair that differs.
 *
 * Each run collects, through scn_run_options.on_state, the masked state of
 * the last quiescent point of setup, of each step, and of the end (one
 * masker a run, so generated names keep their placeholders). Run B runs
 * with the registry's replacements in use.
 *
 * Threads: the caller's (scn_run's rule); the hook runs on it too.
 */
#include "scn/diff.h"
#include "scn_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINES 200

/* ---- replacements ---- */

int scn_diff_replace(const char *name, scn_setup_fn fn, void *user)
{
    return scn__registry_replace(name, fn, user);
}

int scn_diff_replace_with(const char *name, const char *with)
{
    scn_setup_fn fn;
    void *user;
    if (!name || !with || scn__find_controller(with, &fn, &user) < 0)
        return SCN_ERR_INPUT;
    return scn__registry_replace(name, fn, user);
}

void scn_diff_capture(bool on)
{
    scn__registry_capture(on);
}

bool scn_diff_replaced(const char *name)
{
    return name && scn__registry_replaced(name);
}

/* ---- a readable diff ---- */

typedef struct out {
    char *buf;
    size_t len, cap;
    unsigned lines, dropped;
    bool oom;
} out;

__attribute__((format(printf, 2, 3))) static void outf(out *o, const char *fmt, ...)
{
    if (o->oom)
        return;
    if (o->lines >= MAX_LINES) {
        o->dropped++;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (o->len + (size_t)n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 1024;
        while (o->len + (size_t)n + 1 > cap)
            cap *= 2;
        char *p = realloc(o->buf, cap);
        if (!p) {
            o->oom = true;
            return;
        }
        o->buf = p;
        o->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    o->len += (size_t)n;
    for (int i = 0; i < n; i++)
        o->lines += o->buf[o->len - (size_t)n + (size_t)i] == '\n';
}

static const char *str_or(const char *s)
{
    return s ? s : "";
}

static const char *meta(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), k));
}

/* "Kind ns/name (apiVersion)" */
static void ident(const json_t *o, char *buf, size_t len)
{
    const char *ns = meta(o, "namespace");
    snprintf(buf, len, "%s %s%s%s (%s)", str_or(json_string_value(json_object_get(o, "kind"))),
             ns ? ns : "", ns ? "/" : "", str_or(meta(o, "name")),
             str_or(json_string_value(json_object_get(o, "apiVersion"))));
}

static int cmp_ident(const json_t *a, const json_t *b)
{
    static const char *const top[] = {"apiVersion", "kind"};
    for (size_t i = 0; i < 2; i++) {
        int c = strcmp(str_or(json_string_value(json_object_get(a, top[i]))),
                       str_or(json_string_value(json_object_get(b, top[i]))));
        if (c)
            return c;
    }
    int c = strcmp(str_or(meta(a, "namespace")), str_or(meta(b, "namespace")));
    return c ? c : strcmp(str_or(meta(a, "name")), str_or(meta(b, "name")));
}

static char *value_text(const json_t *v)
{
    if (!v)
        return strdup("(absent)");
    char *t = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (t && strlen(t) > 300)
        strcpy(t + 290, "...");
    return t;
}

static bool plain_key(const char *k)
{
    if (!*k)
        return false;
    for (const char *p = k; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-'))
            return false;
    return true;
}

static void diff_values(out *o, const json_t *a, const json_t *b, char *path, size_t plen,
                        size_t cap)
{
    if (a && b && json_equal(a, b))
        return;
    if (json_is_object(a) && json_is_object(b)) {
        /* keys of both, in order */
        json_t *keys = json_object();
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v) json_object_set(keys, k, json_true());
        json_object_foreach((json_t *)b, k, v) json_object_set(keys, k, json_true());
        size_t n = json_object_size(keys), i = 0;
        const char **sorted = calloc(n ? n : 1, sizeof *sorted);
        if (!sorted) {
            o->oom = true;
            json_decref(keys);
            return;
        }
        json_object_foreach(keys, k, v) sorted[i++] = k;
        for (size_t x = 1; x < n; x++)
            for (size_t y = x; y > 0 && strcmp(sorted[y - 1], sorted[y]) > 0; y--) {
                const char *t = sorted[y];
                sorted[y] = sorted[y - 1];
                sorted[y - 1] = t;
            }
        for (i = 0; i < n; i++) {
            int w = plain_key(sorted[i]) ? snprintf(path + plen, cap - plen, ".%s", sorted[i])
                                         : snprintf(path + plen, cap - plen, "['%s']", sorted[i]);
            size_t nl = w > 0 && (size_t)w < cap - plen ? plen + (size_t)w : plen;
            diff_values(o, json_object_get(a, sorted[i]), json_object_get(b, sorted[i]), path, nl,
                        cap);
            path[plen] = '\0';
        }
        free(sorted);
        json_decref(keys);
        return;
    }
    if (json_is_array(a) && json_is_array(b)) {
        size_t n =
            json_array_size(a) > json_array_size(b) ? json_array_size(a) : json_array_size(b);
        for (size_t i = 0; i < n; i++) {
            int w = snprintf(path + plen, cap - plen, "[%zu]", i);
            size_t nl = w > 0 && (size_t)w < cap - plen ? plen + (size_t)w : plen;
            diff_values(o, json_array_get(a, i), json_array_get(b, i), path, nl, cap);
            path[plen] = '\0';
        }
        return;
    }
    char *ta = value_text(a), *tb = value_text(b);
    outf(o, "    %s: %s -> %s\n", plen ? path : ".", ta ? ta : "?", tb ? tb : "?");
    free(ta);
    free(tb);
}

int scn_diff_states(const json_t *a, const json_t *b, char **report)
{
    out o = {0};
    size_t i = 0, j = 0, na = json_array_size(a), nb = json_array_size(b);
    char id[700], path[1024];
    while (i < na || j < nb) {
        const json_t *x = i < na ? json_array_get(a, i) : NULL;
        const json_t *y = j < nb ? json_array_get(b, j) : NULL;
        int c = !x ? 1 : !y ? -1 : cmp_ident(x, y);
        if (c < 0) {
            ident(x, id, sizeof id);
            outf(&o, "  %s: only in A\n", id);
            i++;
        } else if (c > 0) {
            ident(y, id, sizeof id);
            outf(&o, "  %s: only in B\n", id);
            j++;
        } else {
            if (!json_equal(x, y)) {
                ident(x, id, sizeof id);
                outf(&o, "  %s:\n", id);
                path[0] = '\0';
                diff_values(&o, x, y, path, 0, sizeof path);
            }
            i++, j++;
        }
    }
    if (o.dropped) {
        o.lines = 0;
        outf(&o, "  ... and %u more lines\n", o.dropped);
    }
    if (o.oom) {
        free(o.buf);
        return SCN_ERR_NOMEM;
    }
    if (!o.len) {
        free(o.buf);
        return 0;
    }
    if (report)
        *report = o.buf;
    else
        free(o.buf);
    return 1;
}

/* ---- two runs ---- */

typedef struct collect {
    scn_masker *mk;
    json_t *points; /* index step + 1 -> masked state (null: none yet) */
    json_t *times;  /* index step + 1 -> virtual ns */
    bool oom;
} collect;

static void on_state(void *ud, int step, int64_t virtual_ns, const json_t *objects)
{
    collect *c = ud;
    json_t *st = NULL;
    if (c->oom || step < -1 || (size_t)(step + 1) >= json_array_size(c->points))
        return;
    if (scn_masker_apply(c->mk, objects, &st) < 0) {
        c->oom = true;
        return;
    }
    json_array_set_new(c->points, (size_t)(step + 1), st);
    json_array_set_new(c->times, (size_t)(step + 1), json_integer(virtual_ns));
}

static int run_one(const scn_scenario *sc, const scn_diff_options *o, const scn_mask *m, collect *c,
                   scn_run_result *res)
{
    c->points = json_array();
    c->times = json_array();
    if (!c->points || !c->times || scn_masker_new(m, &c->mk) < 0)
        return SCN_ERR_NOMEM;
    for (size_t i = 0; i < sc->n_steps + 2; i++) {
        json_array_append_new(c->points, json_null());
        json_array_append_new(c->times, json_integer(0));
    }
    scn_run_options ro = {.seed = o->seed,
                          .seed_given = true,
                          .max_steps = o->max_steps,
                          .verbose = o->verbose,
                          .on_state = on_state,
                          .state_ud = c};
    int rc = scn_run(sc, &ro, res);
    return c->oom ? SCN_ERR_NOMEM : rc;
}

static void collect_deinit(collect *c)
{
    scn_masker_free(c->mk);
    json_decref(c->points);
    json_decref(c->times);
}

static void fill_err(scn_error *err, int code, const char *file, const char *msg)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    err->code = code;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    size_t n = strlen(msg);
    if (n >= sizeof err->message)
        n = sizeof err->message - 1;
    memcpy(err->message, msg, n);
    err->message[n] = '\0';
}

static char *point_name(const scn_scenario *sc, int step, char *buf, size_t len)
{
    if (step < 0)
        snprintf(buf, len, "setup");
    else if ((size_t)step >= sc->n_steps)
        snprintf(buf, len, "the end");
    else
        snprintf(buf, len, "step %d (line %d: %.200s)", step, sc->steps[step].line,
                 str_or(sc->steps[step].text));
    return buf;
}

int scn_diff(const scn_scenario *sc, const scn_diff_options *opts, scn_diff_result *res,
             scn_error *err)
{
    if (!sc || !opts || !res) {
        fill_err(err, SCN_ERR_INPUT, NULL, "scn_diff: a NULL argument");
        return SCN_ERR_INPUT;
    }
    memset(res, 0, sizeof *res);
    bool any = false;
    for (size_t i = 0; i < sc->n_controllers; i++)
        any |= scn__registry_replaced(sc->controllers[i].name);
    if (!any) {
        fill_err(err, SCN_ERR_INPUT, sc->file,
                 "nothing replaces any of the scenario's controllers: both runs would be the same");
        return SCN_ERR_INPUT;
    }
    scn_mask *own = NULL;
    const scn_mask *m = opts->mask;
    int rc = 0;
    if (!m) {
        if ((rc = scn_mask_new(&own)) < 0 || (rc = scn_mask_add_scenario(own, sc, err)) < 0) {
            scn_mask_free(own);
            if (rc == SCN_ERR_NOMEM)
                fill_err(err, rc, sc->file, "out of memory");
            return rc;
        }
        m = own;
    }
    collect ca = {0}, cb = {0};
    rc = run_one(sc, opts, m, &ca, &res->a);
    if (rc == 0) {
        scn__registry_use_replacements(true);
        rc = run_one(sc, opts, m, &cb, &res->b);
        scn__registry_use_replacements(false);
    }
    if (rc < 0) {
        char msg[2300];
        snprintf(msg, sizeof msg, "a run could not start: %s",
                 res->b.message[0] ? res->b.message : res->a.message);
        fill_err(err, rc, sc->file, rc == SCN_ERR_NOMEM ? "out of memory" : msg);
        goto out;
    }
    /* the points both runs reached, in order; then the ends */
    size_t end = sc->n_steps + 1;
    char *report = NULL;
    for (size_t i = 0; i <= end && !res->differ; i++) {
        json_t *a = json_array_get(ca.points, i), *b = json_array_get(cb.points, i);
        if (json_is_null(a) || json_is_null(b)) {
            if (i == end)
                break;
            /* one run stopped before this point: compare the ends */
            i = end - 1;
            continue;
        }
        res->points++;
        int d = scn_diff_states(a, b, &report);
        if (d < 0) {
            rc = SCN_ERR_NOMEM;
            fill_err(err, rc, sc->file, "out of memory");
            goto out;
        }
        if (d == 1) {
            res->differ = true;
            res->step = (int)i - 1;
            res->virtual_ns_a = json_integer_value(json_array_get(ca.times, i));
            res->virtual_ns_b = json_integer_value(json_array_get(cb.times, i));
        }
    }
    if (!res->differ && res->a.passed != res->b.passed) {
        res->differ = true;
        res->step = (int)sc->n_steps;
        res->virtual_ns_a = res->a.virtual_ns;
        res->virtual_ns_b = res->b.virtual_ns;
    }
    if (res->differ) {
        out o = {0};
        char where[400];
        outf(&o, "first difference at %s, virtual time %.3fs (A) / %.3fs (B):\n",
             point_name(sc, res->step, where, sizeof where), (double)res->virtual_ns_a / 1e9,
             (double)res->virtual_ns_b / 1e9);
        if (report)
            outf(&o, "%s", report);
        else
            outf(&o, "  the states are equal, the verdicts are not\n");
        o.lines = 0;
        outf(&o, "A %s%s\nB %s%s\n", res->a.passed ? "passed" : "failed: ", res->a.message,
             res->b.passed ? "passed" : "failed: ", res->b.message);
        if (o.oom) {
            free(o.buf);
            rc = SCN_ERR_NOMEM;
            fill_err(err, rc, sc->file, "out of memory");
        } else {
            res->report = o.buf;
        }
    }
    free(report);
out:
    collect_deinit(&ca);
    collect_deinit(&cb);
    scn_mask_free(own);
    return rc;
}

void scn_diff_result_deinit(scn_diff_result *r)
{
    if (!r)
        return;
    free(r->report);
    r->report = NULL;
}
