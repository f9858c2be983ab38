/*
 * shrink.c - delta debugging of failing scenarios (scn/shrink.h).
 *
 * The scenario is held as a self-contained document (scn_write.c). The
 * lists that can lose items are its steps (faults are steps), fixtures and
 * controllers; a controller can also lose replicas. Each round runs ddmin
 * (Zeller and Hildebrandt's minimising delta debugging: try chunks, then
 * complements, then finer chunks) over each list, then fewer replicas, then
 * removes single items one at a time, trying nearby seeds when a removal
 * alone hides the failure; rounds repeat until one removes nothing. Every
 * candidate is serialised, parsed again (a candidate that does not parse
 * is skipped) and run in-process; results are remembered by the
 * candidate's text and seed, so no candidate runs twice.
 *
 * Threads: the caller's, which drives every run (scn_run's rule: one run
 * at a time in a process). The budget is real time, read from
 * CLOCK_MONOTONIC between runs; it decides only how long to search, never
 * what a run does.
 */
#include "scn/shrink.h"

#include "kh/yaml.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_BUDGET_NS (60 * INT64_C(1000000000))
#define DEFAULT_NEARBY 4

typedef struct shrinker {
    const scn_scenario *orig;
    const scn_shrink_options *o;
    char sig[1024]; /* the original failure's signature (same_failure) */
    uint64_t seed;  /* the seed the current document fails with */
    json_t *cur;    /* the least failing document so far */
    json_t *tried;  /* "hash/seed" -> true (failed) / false */
    unsigned long candidates, invalid;
    struct timespec t0;
    int64_t budget_ns;
    bool out_of_time;
    bool oom;
    scn_run_result fail; /* the failing run of cur */
} shrinker;

static double elapsed_s(const shrinker *s)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - s->t0.tv_sec) + (double)(t.tv_nsec - s->t0.tv_nsec) / 1e9;
}

/* ---- what counts as the same failure ---- */

void scn_shrink_signature(const scn_scenario *sc, const scn_run_result *r, char *buf, size_t len)
{
    unsigned long inv;
    if (sscanf(r->message, "invariant %lu ", &inv) == 1) {
        snprintf(buf, len, "invariant %lu", inv);
        return;
    }
    if (sc && r->failed_step >= 0 && (size_t)r->failed_step < sc->n_steps) {
        const scn_step *st = &sc->steps[r->failed_step];
        snprintf(buf, len, "step %s", st->cond && st->cond->text ? st->cond->text : st->text);
        return;
    }
    /* the message without numbers, which move while shrinking */
    size_t o = 0;
    for (const char *p = r->message; *p && o + 1 < len; p++) {
        if (isdigit((unsigned char)*p)) {
            if (o == 0 || buf[o - 1] != '#')
                buf[o++] = '#';
            continue;
        }
        buf[o++] = *p;
    }
    buf[o < len ? o : len - 1] = '\0';
}

/* A check failed: an invariant, an expect, a wait, or no quiescence (a
 * livelock). A step that could not act (an apply of a kind no longer
 * defined, a patch of an object no longer there) is the candidate's own
 * fault, not the failure being shrunk. */
static bool check_failed(const scn_run_result *r)
{
    static const char *const kinds[] = {"invariant ", "expect ", "wait ", "no quiescence", NULL};
    if (r->passed || r->stalled)
        return false;
    for (size_t i = 0; kinds[i]; i++)
        if (!strncmp(r->message, kinds[i], strlen(kinds[i])))
            return true;
    return false;
}

static bool default_pred(shrinker *s, const scn_scenario *cand, const scn_run_result *r)
{
    if (!check_failed(r))
        return false;
    if (!s->o->same_failure)
        return true;
    char sig[1024];
    scn_shrink_signature(cand, r, sig, sizeof sig);
    return strcmp(sig, s->sig) == 0;
}

/* ---- one candidate ---- */

static uint64_t fnv(const char *t)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *t; t++)
        h = (h ^ (uint64_t)(unsigned char)*t) * 1099511628211ULL;
    return h;
}

/* 1 if doc fails under seed (its run in *res), 0 if not (or it does not
 * parse, or time is up), -1 out of memory. */
static int test_doc(shrinker *s, const json_t *doc, uint64_t seed, scn_run_result *res)
{
    if (s->out_of_time)
        return 0;
    char *text = json_dumps(doc, JSON_COMPACT);
    if (!text) {
        s->oom = true;
        return -1;
    }
    char key[64];
    snprintf(key, sizeof key, "%016" PRIx64 "/%" PRIu64, fnv(text), seed);
    json_t *known = json_object_get(s->tried, key);
    if (known) {
        free(text);
        return 0; /* a failing one was taken when found; this one did not fail */
    }
    if (elapsed_s(s) * 1e9 >= (double)s->budget_ns) {
        s->out_of_time = true;
        free(text);
        return 0;
    }
    scn_scenario *cand = NULL;
    scn_error err = {0};
    int rc = scn_scenario_parse(s->orig->file, text, strlen(text), &cand, &err);
    free(text);
    if (rc == SCN_ERR_NOMEM) {
        s->oom = true;
        return -1;
    }
    if (rc < 0) {
        s->invalid++;
        json_object_set_new(s->tried, key, json_false());
        return 0;
    }
    scn_run_options ro = {.seed = seed, .seed_given = true, .max_steps = s->o->max_steps};
    scn_run_result r;
    s->candidates++;
    rc = scn_run(cand, &ro, &r);
    bool fails = rc == 0 && (s->o->still_fails ? s->o->still_fails(cand, seed, &r, s->o->ud)
                                               : default_pred(s, cand, &r));
    scn_scenario_free(cand);
    json_object_set_new(s->tried, key, json_boolean(fails));
    if (fails && res)
        *res = r;
    return fails ? 1 : 0;
}

/* Where a list that can lose items is: a top-level list (steps, fixtures,
 * controllers), or the objects an apply step applies (step >= 0). */
typedef struct loc {
    const char *key;
    long step;
    char name[64]; /* for messages */
} loc;

static loc top(const char *key)
{
    loc l = {.key = key, .step = -1};
    snprintf(l.name, sizeof l.name, "%s", key);
    return l;
}

static loc manifest_of(size_t step)
{
    loc l = {.key = "steps", .step = (long)step};
    snprintf(l.name, sizeof l.name, "steps[%zu].apply", step);
    return l;
}

/* The apply step's list of objects: the body itself, or its manifest. */
static json_t *apply_list(const json_t *step)
{
    json_t *body = json_object_get(step, "apply");
    if (json_is_array(body))
        return body;
    json_t *m = json_object_get(body, "manifest");
    return json_is_array(m) ? m : NULL;
}

static const json_t *list_at(const json_t *doc, const loc *l)
{
    const json_t *arr = json_object_get(doc, l->key);
    return l->step < 0 ? arr : apply_list(json_array_get(arr, (size_t)l->step));
}

/* cur with the list at l replaced by its items at idx[0..n); what is not
 * changed is shared with cur. */
static json_t *with_subset(const json_t *cur, const loc *l, const size_t *idx, size_t n)
{
    const json_t *arr = list_at(cur, l);
    json_t *doc = json_copy((json_t *)cur), *sub = json_array();
    if (!doc || !sub || !arr) {
        json_decref(doc);
        json_decref(sub);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        json_array_append(sub, json_array_get(arr, idx[i]));
    if (l->step < 0) {
        json_object_set_new(doc, l->key, sub);
        return doc;
    }
    json_t *steps = json_copy(json_object_get(cur, "steps"));
    json_t *item = json_copy(json_array_get(steps, (size_t)l->step));
    json_t *body = json_object_get(item, "apply");
    if (json_is_array(body)) {
        json_object_set_new(item, "apply", sub);
    } else {
        json_t *nb = json_copy(body);
        json_object_set_new(nb, "manifest", sub);
        json_object_set_new(item, "apply", nb);
    }
    json_array_set_new(steps, (size_t)l->step, item);
    json_object_set_new(doc, "steps", steps);
    return doc;
}

/* Test a candidate and take it (with seed) when it fails. 1 taken, 0 not, -1 oom. */
static int try_take(shrinker *s, json_t *doc, uint64_t seed, const char *what)
{
    if (!doc) {
        s->oom = true;
        return -1;
    }
    scn_run_result r;
    int rc = test_doc(s, doc, seed, &r);
    if (rc == 1) {
        json_decref(s->cur);
        s->cur = doc;
        s->seed = seed;
        s->fail = r;
        if (s->o->verbose)
            fprintf(stderr, "shrink: %s (seed %" PRIu64 "): still fails; %zu steps, %zu fixtures\n",
                    what, seed, json_array_size(json_object_get(s->cur, "steps")),
                    json_array_size(json_object_get(s->cur, "fixtures")));
        return 1;
    }
    json_decref(doc);
    return rc;
}

/* ---- ddmin over one list ---- */

static int ddmin(shrinker *s, const loc *l)
{
    size_t n = json_array_size(list_at(s->cur, l));
    if (n == 0)
        return 0;
    size_t *c = malloc(n * sizeof *c), *t = malloc(n * sizeof *t);
    if (!c || !t) {
        free(c);
        free(t);
        s->oom = true;
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        c[i] = i;
    size_t nc = n, parts = 2;
    char what[160];
    snprintf(what, sizeof what, "%s: none", l->name);
    /* indexes stay those of the list as it was at the start, which the
     * current document keeps until the end: taken candidates are kept
     * aside in best */
    json_t *base = json_incref(s->cur);
    /* an apply of no objects does not parse: start at one */
    int rc = l->step < 0 ? try_take(s, with_subset(base, l, c, 0), s->seed, what) : 0;
    if (rc == 1)
        nc = 0;
    while (rc >= 0 && nc >= 2 && !s->out_of_time) {
        if (parts > nc)
            parts = nc;
        bool reduced = false;
        for (size_t i = 0; i < parts && !reduced && rc >= 0; i++) {
            size_t lo = nc * i / parts, hi = nc * (i + 1) / parts;
            snprintf(what, sizeof what, "%s: %zu of %zu", l->name, hi - lo, nc);
            rc = try_take(s, with_subset(base, l, c + lo, hi - lo), s->seed, what);
            if (rc == 1) {
                memmove(c, c + lo, (hi - lo) * sizeof *c);
                nc = hi - lo;
                parts = 2;
                reduced = true;
            }
        }
        for (size_t i = 0; parts > 2 && i < parts && !reduced && rc >= 0; i++) {
            size_t lo = nc * i / parts, hi = nc * (i + 1) / parts, k = 0;
            for (size_t j = 0; j < nc; j++)
                if (j < lo || j >= hi)
                    t[k++] = c[j];
            snprintf(what, sizeof what, "%s: %zu of %zu", l->name, k, nc);
            rc = try_take(s, with_subset(base, l, t, k), s->seed, what);
            if (rc == 1) {
                memcpy(c, t, k * sizeof *c);
                nc = k;
                parts = parts - 1 > 2 ? parts - 1 : 2;
                reduced = true;
            }
        }
        if (!reduced && rc >= 0) {
            if (parts >= nc)
                break;
            parts = parts * 2 < nc ? parts * 2 : nc;
        }
    }
    json_decref(base);
    free(c);
    free(t);
    return rc < 0 ? -1 : 0;
}

/* ---- one at a time, with nearby seeds ---- */

static int try_seeds(shrinker *s, json_t *doc, const char *what)
{
    unsigned nearby = s->o->no_seeds ? 0 : s->o->nearby_seeds ? s->o->nearby_seeds : DEFAULT_NEARBY;
    uint64_t seed = s->seed;
    for (unsigned d = 0; d <= nearby && !s->out_of_time; d++) {
        json_t *cand = json_deep_copy(doc);
        int rc = try_take(s, cand, seed + d, what);
        if (rc != 0) {
            json_decref(doc);
            return rc;
        }
    }
    json_decref(doc);
    return 0;
}

static int one_at_a_time(shrinker *s, const loc *l)
{
    for (size_t i = json_array_size(list_at(s->cur, l)); i-- > 0 && !s->out_of_time;) {
        size_t n = json_array_size(list_at(s->cur, l));
        if (l->step >= 0 && n < 2)
            break;
        if (i >= n)
            continue;
        size_t *idx = malloc((n ? n : 1) * sizeof *idx), k = 0;
        if (!idx)
            return -1;
        for (size_t j = 0; j < n; j++)
            if (j != i)
                idx[k++] = j;
        char what[160];
        snprintf(what, sizeof what, "%s: without item %zu", l->name, i);
        int rc = try_seeds(s, with_subset(s->cur, l, idx, k), what);
        free(idx);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Fewer replicas for each controller: 1 first, then one less at a time. */
static int fewer_replicas(shrinker *s)
{
    size_t n = json_array_size(json_object_get(s->cur, "controllers"));
    for (size_t i = 0; i < n && !s->out_of_time; i++) {
        json_t *c = json_array_get(json_object_get(s->cur, "controllers"), i);
        json_int_t have = json_integer_value(json_object_get(c, "replicas"));
        for (json_int_t want = 1; want < have && !s->out_of_time; want++) {
            json_t *doc = json_deep_copy(s->cur);
            json_t *item = doc ? json_array_get(json_object_get(doc, "controllers"), i) : NULL;
            if (!item) {
                json_decref(doc);
                return -1;
            }
            json_object_set_new(item, "replicas", json_integer(want));
            char what[160];
            snprintf(what, sizeof what, "controllers[%zu]: %lld replicas", i, (long long)want);
            int rc = try_seeds(s, doc, what);
            if (rc < 0)
                return -1;
            if (rc == 1)
                break;
        }
    }
    return 0;
}

/* ---- the whole ---- */

static int replicas_of(const json_t *doc)
{
    int n = 0;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(doc, "controllers"), i, c)
    {
        json_int_t r = json_integer_value(json_object_get(c, "replicas"));
        n += r > 0 ? (int)r : 1;
    }
    return n;
}

static size_t size_of(const json_t *doc)
{
    size_t objects = 0, i;
    json_t *st;
    json_array_foreach(json_object_get(doc, "steps"), i, st) objects +=
        json_array_size(apply_list(st));
    return objects + json_array_size(json_object_get(doc, "steps")) +
           json_array_size(json_object_get(doc, "fixtures")) +
           json_array_size(json_object_get(doc, "controllers")) + (size_t)replicas_of(doc);
}

/* The objects of each apply step that applies more than one. */
static int shrink_manifests(shrinker *s)
{
    for (size_t i = 0; i < json_array_size(json_object_get(s->cur, "steps")) && !s->out_of_time;
         i++) {
        loc l = manifest_of(i);
        if (json_array_size(list_at(s->cur, &l)) < 2)
            continue;
        if (ddmin(s, &l) < 0 || one_at_a_time(s, &l) < 0)
            return -1;
    }
    return 0;
}

static int round_once(shrinker *s)
{
    static const char *const lists[] = {"steps", "fixtures", "controllers"};
    for (size_t i = 0; i < 3; i++) {
        loc l = top(lists[i]);
        if (ddmin(s, &l) < 0)
            return -1;
    }
    if (fewer_replicas(s) < 0)
        return -1;
    for (size_t i = 0; i < 3; i++) {
        loc l = top(lists[i]);
        if (one_at_a_time(s, &l) < 0)
            return -1;
    }
    return shrink_manifests(s);
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

int scn_shrink(const scn_scenario *sc, const scn_shrink_options *opts, scn_shrink_result *out,
               scn_error *err)
{
    if (!sc || !opts || !out) {
        fill_err(err, SCN_ERR_INPUT, NULL, "scn_shrink: a NULL argument");
        return SCN_ERR_INPUT;
    }
    memset(out, 0, sizeof *out);
    shrinker s = {.orig = sc, .o = opts, .seed = opts->seed};
    s.budget_ns = opts->budget_ns > 0 ? opts->budget_ns : DEFAULT_BUDGET_NS;
    clock_gettime(CLOCK_MONOTONIC, &s.t0);
    s.cur = scn_scenario_to_doc(sc);
    s.tried = json_object();
    int rc = 0;
    if (!s.cur || !s.tried) {
        fill_err(err, SCN_ERR_NOMEM, sc->file, "out of memory");
        rc = SCN_ERR_NOMEM;
        goto out;
    }
    /* the original must fail, as it is, with the seed given */
    scn_run_options ro = {.seed = opts->seed, .seed_given = true, .max_steps = opts->max_steps};
    scn_run_result first;
    s.candidates++;
    rc = scn_run(sc, &ro, &first);
    if (rc < 0) {
        char m[2200];
        snprintf(m, sizeof m, "the scenario could not run: %s", first.message);
        fill_err(err, rc, sc->file, m);
        goto out;
    }
    scn_shrink_signature(sc, &first, s.sig, sizeof s.sig);
    if (!(opts->still_fails ? opts->still_fails(sc, opts->seed, &first, opts->ud)
                            : check_failed(&first))) {
        char m[300];
        snprintf(m, sizeof m, "the scenario %s with seed %" PRIu64 ": nothing to shrink",
                 first.passed ? "passes" : "does not fail that way", opts->seed);
        fill_err(err, SCN_ERR_INPUT, sc->file, m);
        rc = SCN_ERR_INPUT;
        goto out;
    }
    s.fail = first;
    out->steps_before = sc->n_steps;
    out->fixtures_before = json_array_size(sc->fixtures);
    out->controllers_before = sc->n_controllers;
    out->replicas_before = replicas_of(s.cur);
    for (;;) {
        size_t before = size_of(s.cur);
        if (round_once(&s) < 0 || s.oom) {
            fill_err(err, SCN_ERR_NOMEM, sc->file, "out of memory");
            rc = SCN_ERR_NOMEM;
            goto out;
        }
        if (s.out_of_time || size_of(s.cur) >= before)
            break;
    }
    json_object_set_new(s.cur, "seed", json_integer((json_int_t)s.seed));
    char *yaml = kh_yaml_dump(s.cur);
    if (!yaml) {
        fill_err(err, SCN_ERR_NOMEM, sc->file, "out of memory");
        rc = SCN_ERR_NOMEM;
        goto out;
    }
    /* the YAML as written must fail too (and its message names its lines) */
    scn_scenario *final = NULL;
    scn_run_result fr;
    scn_run_options fo = {.seed = s.seed, .seed_given = true, .max_steps = opts->max_steps};
    if (scn_scenario_parse(sc->file, yaml, strlen(yaml), &final, NULL) < 0 ||
        scn_run(final, &fo, &fr) < 0 ||
        !(opts->still_fails ? opts->still_fails(final, s.seed, &fr, opts->ud)
                            : default_pred(&s, final, &fr))) {
        scn_scenario_free(final);
        free(yaml);
        fill_err(err, SCN_ERR_INTERNAL, sc->file,
                 "the shrunk scenario, written out, does not fail as it did");
        rc = SCN_ERR_INTERNAL;
        goto out;
    }
    s.fail = fr;
    s.candidates++;
    out->scenario = final;
    out->doc = json_incref(s.cur);
    out->yaml = yaml;
    out->seed = s.seed;
    out->failure = s.fail;
    out->candidates = s.candidates;
    out->invalid = s.invalid;
    out->seconds = elapsed_s(&s);
    out->candidates_per_s = out->seconds > 0 ? (double)s.candidates / out->seconds : 0;
    out->budget_exhausted = s.out_of_time;
    out->steps_after = json_array_size(json_object_get(s.cur, "steps"));
    out->fixtures_after = json_array_size(json_object_get(s.cur, "fixtures"));
    out->controllers_after = json_array_size(json_object_get(s.cur, "controllers"));
    out->replicas_after = replicas_of(s.cur);
    rc = 0;
out:
    json_decref(s.cur);
    json_decref(s.tried);
    return rc;
}

void scn_shrink_result_deinit(scn_shrink_result *r)
{
    if (!r)
        return;
    json_decref(r->doc);
    free(r->yaml);
    scn_scenario_free(r->scenario);
    memset(r, 0, sizeof *r);
}
