/*
 * hunt.c - bug-hunting campaigns (scn/hunt.h): baselines, the plan of
 * perturbations, the runs, the oracles and the deduplication of findings.
 *
 * Every run is a scenario document: the base as scn_scenario_to_doc
 * writes it, with steps inserted (fault rules, restarts), atStart steps
 * added (a crash at the nth write, a fault on the nth write) and two
 * advances appended (settle, then the tail the quiescence and error
 * oracles watch). The document is dumped as YAML and parsed again, so the
 * scenario that ran is exactly the one a finding writes out.
 *
 * Threads: the caller's thread drives every run (scn_run's rule). With
 * jobs > 1, perturbed runs happen in child processes forked after the
 * baselines: worker w takes the plan items i with i % jobs == w and writes
 * one JSON line per item to a file of its own; the parent waits for every
 * worker and reads the files, so the findings are made in plan order
 * whatever the number of jobs. The budget is real time (CLOCK_MONOTONIC),
 * checked before each run; it decides only how many runs are made.
 */
#include "scn/hunt.h"

#include "cpu_pin.h"
#include "kh/yaml.h"
#include "scn/diff.h"
#include "scn/shrink.h"
#include "scn/state_mask.h"
#include "scenario_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SEC INT64_C(1000000000)
/* runner.c: virtual time starts at 2026-01-01T00:00:00Z; trace times are
 * absolute. */
#define EPOCH_NS (INT64_C(1767225600) * SEC)
#define DEFAULT_BUDGET_NS (60 * SEC)
#define DEFAULT_SETTLE_NS (5 * 60 * SEC)
#define DEFAULT_TAIL_NS (2 * 60 * SEC)
#define DEFAULT_SHRINK_NS (10 * SEC)
#define MAX_JOBS 64
#define LIVELOCK_FACTOR 20 /* a perturbed run's turns, at most, over the baseline's */
#define MIN_MAX_STEPS 20000
#define WINDOW_NS (2 * 60 * SEC) /* a stale or unobserved window: its step, then this */
#define MAX_WRITES 5000          /* crash and error points enumerated per base, at most */

/* The stale views: reads lagging 2 or 8 revisions, or watch events a
 * minute late (a lagging informer); 0 ends the list of lags. */
static const long stale_lags[] = {2, 8, 0};
#define STALE_DELAY "1m"
#define N_LAGS (sizeof stale_lags / sizeof stale_lags[0])
static const char *const error_kinds[] = {"409", "500", "lost"};
#define N_ERRORS (sizeof error_kinds / sizeof error_kinds[0])

static const char *const class_names[] = {"baseline", "crash", "stale", "unobserved", "error"};
static const char *const oracle_names[] = {"checks", "quiescence", "differential",
                                           "reconcile-errors"};

const char *scn_hunt_class_name(scn_hunt_class c)
{
    return (unsigned)c < SCN_HUNT_N_CLASSES ? class_names[c] : "?";
}

int scn_hunt_class_parse(const char *name)
{
    for (int i = 0; name && i < SCN_HUNT_N_CLASSES; i++)
        if (!strcmp(name, class_names[i]))
            return i;
    return -1;
}

const char *scn_hunt_oracle_name(scn_hunt_oracle o)
{
    return (unsigned)o < SCN_HUNT_N_ORACLES ? oracle_names[o] : "?";
}

/* One base under one seed: its baseline. */
typedef struct base_run {
    size_t base;
    const scn_scenario *sc;
    uint64_t seed;
    json_t *doc; /* the base as a document (no settle, no tail) */
    scn_mask *mask;
    bool ran;              /* the baseline ran (the budget allowed it) */
    bool passed;           /* the baseline passed its checks */
    json_t *state;         /* its masked final state (NULL if it failed) */
    unsigned long writes0; /* replica 0's writes, every controller together */
    unsigned long *writes; /* replica 0's writes, per controller */
    bool quiet_ok;         /* it made no write in the tail: the oracle applies */
    bool errors_ok;        /* no reconcile error in the tail: the oracle applies */
    long max_steps;        /* scheduler turns a perturbed run may take (0: opts') */
    json_t *watched;       /* [[group, resource]]: what replica 0 lists or watches */
} base_run;

typedef struct plan_item {
    size_t br;
    scn_hunt_class cls;
    long k;      /* crash, error: the write (1-based); stale, unobserved: the step (n: settle) */
    int ctl;     /* error: the controller */
    int variant; /* stale: the lag; error: the answer */
    int res;     /* stale: the resource (in base_run.watched) that lags; -1 all */
} plan_item;

/* What one oracle found in one run. */
typedef struct hit {
    scn_hunt_oracle oracle;
    char what[400];
    char *message;
    char *report;
    char *expects; /* differential: the baseline's end as expect steps (a JSON
                    * array), appended to the finding's scenario; or NULL */
} hit;

typedef struct outcome {
    bool ran;      /* the run ran (its setup worked) */
    bool internal; /* the document did not parse, or a worker died */
    scn_run_result r;
    json_t *state; /* masked final state */
    char check_sig[1024];
    unsigned long tail_writes;
    char tail_example[400];
    unsigned long writes0;
    unsigned long *writes; /* per controller (baseline only) */
    json_t *watched;       /* [[group, resource]] replica 0 watches (baseline only) */
} outcome;

typedef struct hunt {
    const scn_scenario *const *bases;
    size_t n_bases;
    const scn_hunt_options *o;
    int64_t settle_ns, tail_ns, budget_ns;
    struct timespec t0;
    base_run *brs;
    size_t n_brs;
    plan_item *plan;
    size_t n_plan;
    scn_hunt_report *rep;
    json_t *sigs; /* signature -> finding index */
} hunt;

static double elapsed_ns(const hunt *h)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - h->t0.tv_sec) * 1e9 + (double)(t.tv_nsec - h->t0.tv_nsec);
}

static bool out_of_time(const hunt *h)
{
    return elapsed_ns(h) >= (double)h->budget_ns;
}

static void fill_err(scn_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fill_err(scn_error *err, int code, const char *fmt, ...)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

static const char *str_or(const char *s)
{
    return s ? s : "";
}

/* ---- documents ---- */

static json_t *duration(int64_t ns)
{
    char buf[40];
    if (ns % SEC == 0)
        snprintf(buf, sizeof buf, "%" PRId64 "s", ns / SEC);
    else
        snprintf(buf, sizeof buf, "%" PRId64 "ns", ns);
    return json_string(buf);
}

static json_t *advance(int64_t ns)
{
    return json_pack("{s:o}", "advance", duration(ns));
}

static json_t *restart0(void)
{
    return json_pack("{s:{s:i}}", "restart", "replica", 0);
}

/* A perturbed run keeps the base's invariants and its last checks, but not
 * the expectations between steps, which hold for the unperturbed timing
 * (a restart takes time): an expect or expectWrite before the base's
 * last action is dropped. */
static bool dropped(const scn_scenario *sc, size_t j)
{
    const scn_step *st = &sc->steps[j];
    if (st->kind != SCN_STEP_EXPECT && st->kind != SCN_STEP_EXPECT_WRITE)
        return false;
    for (size_t i = j + 1; i < sc->n_steps; i++)
        if (sc->steps[i].kind != SCN_STEP_EXPECT && sc->steps[i].kind != SCN_STEP_EXPECT_WRITE)
            return true;
    return false;
}

/* A wait in a perturbed run waits at least the settle time: a perturbed
 * controller may take longer, and one that never gets there still fails. */
static json_t *longer_wait(const hunt *h, const scn_step *st, const json_t *written)
{
    json_t *copy = json_deep_copy(written);
    json_t *body = json_object_get(copy, "wait");
    if (json_is_object(body) && st->duration_ns < h->settle_ns)
        json_object_set_new(body, "timeout", duration(h->settle_ns));
    return copy;
}

/* The document a plan item (NULL: the baseline) runs: the base with its
 * insertions, the settle and the tail, and the seed. */
static json_t *build(const hunt *h, const base_run *b, const plan_item *p)
{
    json_t *doc = json_deep_copy(b->doc);
    json_t *steps = json_array();
    if (!doc || !steps)
        goto oom;
    const scn_scenario *sc = b->sc;
    json_t *orig = json_object_get(doc, "steps");
    size_t n = json_array_size(orig);
    bool window = p && (p->cls == SCN_HUNT_STALE || p->cls == SCN_HUNT_UNOBSERVED);
    for (size_t j = 0; j <= n; j++) {
        if (window && (long)j == p->k) {
            for (size_t c = 0; c < sc->n_controllers; c++) {
                char name[64], client[300];
                snprintf(name, sizeof name, "hunt-%s-%zu", class_names[p->cls], c);
                /* replica 0, every incarnation (and its leader election) */
                snprintf(client, sizeof client, "scenario/%s-0", sc->controllers[c].name);
                json_t *rule;
                if (p->cls == SCN_HUNT_STALE && stale_lags[p->variant])
                    rule = json_pack("{s:{s:s}, s:{s:{s:i}}}", "match", "client", client, "action",
                                     "stale", "lag", (int)stale_lags[p->variant]);
                else if (p->cls == SCN_HUNT_STALE)
                    rule = json_pack("{s:{s:s, s:s}, s:{s:s}}", "match", "verb", "watch", "client",
                                     client, "action", "delayEvents", STALE_DELAY);
                else
                    rule = json_pack("{s:{s:s, s:s}, s:{s:b}}", "match", "verb", "watch", "client",
                                     client, "action", "withhold", 1);
                json_t *gr = p->cls == SCN_HUNT_STALE && p->res >= 0
                                 ? json_array_get(b->watched, (size_t)p->res)
                                 : NULL;
                if (rule && gr) {
                    json_t *m = json_object_get(rule, "match");
                    json_object_set(m, "group", json_array_get(gr, 0));
                    json_object_set(m, "resource", json_array_get(gr, 1));
                }
                json_array_append_new(
                    steps, json_pack("{s:{s:s, s:o}}", "fault", "name", name, "rule", rule));
            }
            json_array_append_new(steps, restart0());
        }
        if (j < n && p && dropped(sc, j))
            ;
        else if (j < n && p && sc->steps[j].kind == SCN_STEP_WAIT)
            json_array_append_new(steps, longer_wait(h, &sc->steps[j], json_array_get(orig, j)));
        else if (j < n)
            json_array_append_new(steps, json_incref(json_array_get(orig, j)));
        if (window && (long)j == p->k) {
            /* the window lasts: what the controllers do next, they do on
             * that view (a late event arrives, a requeue fires) */
            json_array_append_new(steps, advance(WINDOW_NS));
            for (size_t c = 0; c < sc->n_controllers; c++) {
                char name[64];
                snprintf(name, sizeof name, "hunt-%s-%zu", class_names[p->cls], c);
                json_array_append_new(steps, json_pack("{s:{s:s}}", "fault", "remove", name));
            }
            /* a watch keeps what it was given when it started: a restart
             * relists and watches afresh, as a reconnection would */
            json_array_append_new(steps, restart0());
        }
    }
    json_array_append_new(steps, advance(h->settle_ns));
    json_array_append_new(steps, advance(h->tail_ns));
    json_object_set_new(doc, "steps", steps);
    steps = NULL;
    if (p && (p->cls == SCN_HUNT_CRASH || p->cls == SCN_HUNT_ERROR)) {
        json_t *start = json_object_get(doc, "atStart");
        start = start ? json_copy(start) : json_array();
        json_t *step;
        if (p->cls == SCN_HUNT_CRASH) {
            step = json_pack("{s:{s:i, s:I, s:b}}", "crash", "replica", 0, "atWrite",
                             (json_int_t)p->k, "restart", 1);
        } else {
            char agent[300];
            snprintf(agent, sizeof agent, "scenario/%s-0", sc->controllers[p->ctl].name);
            const char *kind = error_kinds[p->variant];
            json_t *action = !strcmp(kind, "lost")
                                 ? json_pack("{s:b}", "loseResponse", 1)
                                 : json_pack("{s:{s:i}}", "error", "status", atoi(kind));
            step = json_pack("{s:{s:s, s:{s:{s:s, s:s}, s:{s:I}, s:o}}}", "fault", "name",
                             "hunt-error", "rule", "match", "verb", "create,update,patch,delete",
                             "agent", agent, "when", "nth", (json_int_t)p->k, "action", action);
        }
        json_array_append_new(start, step);
        json_object_set_new(doc, "atStart", start);
    }
    int64_t limit = 0;
    json_t *mv = json_object_get(doc, "maxVirtualTime");
    if (mv && scn_parse_duration(mv, &limit) == 0)
        json_object_set_new(doc, "maxVirtualTime",
                            duration(limit + WINDOW_NS + h->settle_ns + h->tail_ns));
    json_object_set_new(doc, "seed", json_integer((json_int_t)b->seed));
    return doc;
oom:
    json_decref(doc);
    json_decref(steps);
    return NULL;
}

static const char *step_text(const scn_scenario *sc, long j, char *buf, size_t len)
{
    if (j >= (long)sc->n_steps) {
        snprintf(buf, len, "the end of the steps");
        return buf;
    }
    const scn_step *st = &sc->steps[j];
    snprintf(buf, len, "step %ld (line %d: %.100s%s)", j, st->line, st->text ? st->text : "",
             st->text && strlen(st->text) > 100 ? "..." : "");
    return buf;
}

static char *describe(const hunt *h, const plan_item *p)
{
    const base_run *b = &h->brs[p->br];
    char buf[700], st[200];
    switch (p->cls) {
    case SCN_HUNT_CRASH:
        snprintf(buf, sizeof buf,
                 "replica 0 crashes at its write %ld of %lu (counted from the start; that write "
                 "never lands) and restarts at once",
                 p->k, b->writes0);
        break;
    case SCN_HUNT_STALE: {
        char what[200] = "a view";
        json_t *gr = p->res >= 0 ? json_array_get(b->watched, (size_t)p->res) : NULL;
        if (gr) {
            const char *g = json_string_value(json_array_get(gr, 0));
            snprintf(what, sizeof what, "%s%s%s (its other reads current)",
                     json_string_value(json_array_get(gr, 1)), g && *g ? "." : "", g ? g : "");
        }
        char lag[64];
        if (stale_lags[p->variant])
            snprintf(lag, sizeof lag, "%ld revisions behind", stale_lags[p->variant]);
        else
            snprintf(lag, sizeof lag, "with its watch events " STALE_DELAY " late");
        snprintf(buf, sizeof buf,
                 "replica 0 restarts before %s reading %s %s, until 2 minutes after the step, "
                 "then restarts again (reads the present)",
                 step_text(b->sc, p->k, st, sizeof st), what, lag);
        break;
    }
    case SCN_HUNT_UNOBSERVED:
        snprintf(buf, sizeof buf,
                 "replica 0 restarts before %s with every watch event withheld until 2 minutes "
                 "after the step, then restarts again (a relist)",
                 step_text(b->sc, p->k, st, sizeof st));
        break;
    case SCN_HUNT_ERROR: {
        const char *kind = error_kinds[p->variant];
        snprintf(buf, sizeof buf, "write %ld of %lu by controller %s (replica 0) %s", p->k,
                 b->writes[p->ctl], b->sc->controllers[p->ctl].name,
                 !strcmp(kind, "409")   ? "answered 409 Conflict"
                 : !strcmp(kind, "500") ? "answered 500 InternalError"
                                        : "applied but never answered");
        break;
    }
    default:
        snprintf(buf, sizeof buf,
                 "none (the base scenario, then %" PRId64 "s of settle and %" PRId64 "s of tail)",
                 h->settle_ns / SEC, h->tail_ns / SEC);
        break;
    }
    return strdup(buf);
}

/* ---- the trace ---- */

static bool is_write(const char *verb)
{
    static const char *const w[] = {"create", "update",           "patch",
                                    "delete", "deletecollection", NULL};
    for (size_t i = 0; verb && w[i]; i++)
        if (!strcmp(verb, w[i]))
            return true;
    return false;
}

/* client is agent, or agent then '/' or ' ' and more (a fault rule's agent). */
static bool agent_is(const char *client, const char *agent)
{
    size_t n = strlen(agent);
    return !strncmp(client, agent, n) &&
           (client[n] == '\0' || client[n] == '/' || client[n] == ' ');
}

/* The controller under test a client belongs to (any replica, any
 * incarnation), or -1. */
static int controller_of(const scn_scenario *sc, const char *client)
{
    for (size_t c = 0; c < sc->n_controllers; c++) {
        char prefix[300];
        int n = snprintf(prefix, sizeof prefix, "scenario/%s-", sc->controllers[c].name);
        if (n > 0 && !strncmp(client, prefix, (size_t)n) && isdigit((unsigned char)client[n]))
            return (int)c;
    }
    return -1;
}

/* Add the (group, resource) a watch or a list by replica 0 of a controller
 * under test reads (its path: /api/v1[/namespaces/NS]/R or
 * /apis/G/V[/namespaces/NS]/R) to watched, once. */
static void note_watch(const scn_scenario *sc, const char *client, const char *path,
                       json_t *watched)
{
    bool ours = false;
    for (size_t c = 0; c < sc->n_controllers && !ours; c++) {
        char agent[300];
        snprintf(agent, sizeof agent, "scenario/%s-0", sc->controllers[c].name);
        ours = agent_is(client, agent);
    }
    if (!ours || !path)
        return;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    char *q = strchr(buf, '?');
    if (q)
        *q = '\0';
    char *seg[8];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, "/", &save); t && n < 8;
         t = strtok_r(NULL, "/", &save))
        seg[n++] = t;
    const char *group;
    if (n >= 3 && !strcmp(seg[0], "api"))
        group = "";
    else if (n >= 4 && !strcmp(seg[0], "apis"))
        group = seg[1];
    else
        return;
    const char *res = seg[n - 1];
    size_t i;
    json_t *x;
    json_array_foreach(watched, i, x)
    {
        if (!strcmp(json_string_value(json_array_get(x, 0)), group) &&
            !strcmp(json_string_value(json_array_get(x, 1)), res))
            return;
    }
    json_array_append_new(watched, json_pack("[s, s]", group, res));
}

static void read_trace(const char *path, const scn_scenario *sc, int64_t tail_from, outcome *o)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0) {
        if (!strstr(line, "\"kind\":\"request\""))
            continue;
        json_t *v = json_loads(line, 0, NULL);
        const char *client = json_string_value(json_object_get(v, "client"));
        const char *verb = json_string_value(json_object_get(v, "verb"));
        int64_t t = json_integer_value(json_object_get(v, "t"));
        if (client && o->watched && verb && (!strcmp(verb, "watch") || !strcmp(verb, "list")))
            note_watch(sc, client, json_string_value(json_object_get(v, "path")), o->watched);
        if (client && is_write(verb)) {
            for (size_t c = 0; o->writes && c < sc->n_controllers; c++) {
                char agent[300];
                snprintf(agent, sizeof agent, "scenario/%s-0", sc->controllers[c].name);
                if (agent_is(client, agent) && strcmp(verb, "deletecollection") != 0) {
                    o->writes[c]++;
                    o->writes0++;
                }
            }
            if (t >= tail_from && controller_of(sc, client) >= 0 &&
                !strstr(client, "/leader-election")) {
                if (o->tail_writes++ == 0)
                    snprintf(o->tail_example, sizeof o->tail_example, "%s %s %s -> %d at %.3fs",
                             verb, json_string_value(json_object_get(v, "path")), client,
                             (int)json_integer_value(json_object_get(v, "code")),
                             (double)(t - EPOCH_NS) / 1e9);
            }
        }
        json_decref(v);
    }
    free(line);
    if (f)
        fclose(f);
}

/* ---- one run ---- */

typedef struct capture {
    size_t end;    /* the index on_state gives the end */
    json_t *final; /* the store at the end (a reference) */
} capture;

static void on_state(void *ud, int step, int64_t virtual_ns, const json_t *objects)
{
    capture *c = ud;
    (void)virtual_ns;
    if (step == (int)c->end) {
        json_decref(c->final);
        c->final = json_incref((json_t *)objects);
    }
}

/* Run doc for base run b (want_writes: count replica 0's writes). 0 and *o
 * filled (o->ran false if setup failed), or SCN_ERR_NOMEM. */
static int run_doc(const hunt *h, const base_run *b, const json_t *doc, bool want_writes,
                   outcome *o)
{
    memset(o, 0, sizeof *o);
    char *text = kh_yaml_dump(doc);
    if (!text)
        return SCN_ERR_NOMEM;
    scn_scenario *sc = NULL;
    scn_error err = {0};
    int rc = scn_scenario_parse(b->sc->file, text, strlen(text), &sc, &err);
    free(text);
    if (rc < 0) {
        o->internal = true;
        char msg[1500];
        scn_error_format(&err, msg, sizeof msg);
        snprintf(o->r.message, sizeof o->r.message, "the perturbed scenario does not parse: %s",
                 msg);
        return rc == SCN_ERR_NOMEM ? rc : 0;
    }
    char trace[64] = "/tmp/scn-hunt-trace-XXXXXX";
    int fd = mkstemp(trace);
    if (fd < 0) {
        scn_scenario_free(sc);
        o->internal = true;
        snprintf(o->r.message, sizeof o->r.message, "cannot make a trace file: %s",
                 strerror(errno));
        return 0;
    }
    close(fd);
    capture cap = {.end = sc->n_steps};
    scn_run_options ro = {.seed = b->seed,
                          .seed_given = true,
                          .trace_path = trace,
                          .max_steps = b->max_steps ? b->max_steps : h->o->max_steps,
                          .on_state = on_state,
                          .state_ud = &cap};
    rc = scn_run(sc, &ro, &o->r);
    o->ran = rc == 0;
    if (o->ran && !o->r.passed)
        scn_shrink_signature(sc, &o->r, o->check_sig, sizeof o->check_sig);
    if (want_writes) {
        o->writes = calloc(sc->n_controllers + 1, sizeof *o->writes);
        o->watched = json_array();
    }
    if (o->ran)
        read_trace(trace, sc, EPOCH_NS + o->r.virtual_ns - h->tail_ns, o);
    unlink(trace);
    if (o->ran && cap.final && scn_state_mask(b->mask, cap.final, &o->state) < 0)
        o->state = NULL;
    json_decref(cap.final);
    scn_scenario_free(sc);
    return 0;
}

static void outcome_deinit(outcome *o)
{
    json_decref(o->state);
    free(o->writes);
    json_decref(o->watched);
    memset(o, 0, sizeof *o);
}

/* ---- the differential: the first difference, as a signature ---- */

static void path_key(char *buf, size_t len, const char *base, const char *key)
{
    bool plain = *key != '\0';
    for (const char *c = key; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
            plain = false;
    if (plain)
        snprintf(buf, len, "%s.%s", base, key);
    else
        snprintf(buf, len, "%s['%s']", base, key);
}

/* The first path where a and b differ (under path), into out; true if one. */
static bool first_diff_value(const json_t *a, const json_t *b, const char *path, char *out,
                             size_t len)
{
    if (json_equal((json_t *)a, (json_t *)b))
        return false;
    if (json_is_object(a) && json_is_object(b)) {
        /* keys in sorted order, from both */
        json_t *keys = json_array();
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v) json_array_append_new(keys, json_string(k));
        json_object_foreach((json_t *)b, k, v) if (!json_object_get(a, k))
            json_array_append_new(keys, json_string(k));
        size_t n = json_array_size(keys);
        const char **ks = calloc(n + 1, sizeof *ks);
        for (size_t i = 0; ks && i < n; i++)
            ks[i] = json_string_value(json_array_get(keys, i));
        for (size_t i = 0; ks && i + 1 < n; i++)
            for (size_t j = i + 1; j < n; j++)
                if (strcmp(ks[j], ks[i]) < 0) {
                    const char *t = ks[i];
                    ks[i] = ks[j];
                    ks[j] = t;
                }
        bool found = false;
        for (size_t i = 0; ks && i < n && !found; i++) {
            char sub[1024];
            path_key(sub, sizeof sub, path, ks[i]);
            json_t *x = json_object_get(a, ks[i]), *y = json_object_get(b, ks[i]);
            if (!x || !y) {
                snprintf(out, len, "%s", sub);
                found = true;
            } else {
                found = first_diff_value(x, y, sub, out, len);
            }
        }
        free(ks);
        json_decref(keys);
        if (found)
            return true;
    } else if (json_is_array(a) && json_is_array(b)) {
        size_t na = json_array_size(a), nb = json_array_size(b);
        for (size_t i = 0; i < na && i < nb; i++) {
            char sub[1024];
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            if (first_diff_value(json_array_get(a, i), json_array_get(b, i), sub, out, len))
                return true;
        }
        snprintf(out, len, "%s[%zu]", path, na < nb ? na : nb);
        return true;
    }
    snprintf(out, len, "%s", path[0] ? path : ".");
    return true;
}

static void obj_key(const json_t *o, char *buf, size_t len)
{
    const json_t *m = json_object_get(o, "metadata");
    snprintf(buf, len, "%s\x1f%s\x1f%s\x1f%s",
             str_or(json_string_value(json_object_get(o, "apiVersion"))),
             str_or(json_string_value(json_object_get(o, "kind"))),
             str_or(json_string_value(json_object_get(m, "namespace"))),
             str_or(json_string_value(json_object_get(m, "name"))));
}

/* What differs first between the baseline's state a and the perturbed b:
 * "ConfigMap only in the perturbed run", "Singleton .status.x". */
static void first_diff(const json_t *a, const json_t *b, char *out, size_t len)
{
    size_t i;
    json_t *x;
    snprintf(out, len, "the states");
    json_array_foreach(a, i, x)
    {
        char ka[1200];
        obj_key(x, ka, sizeof ka);
        const json_t *match = NULL;
        size_t j;
        json_t *y;
        json_array_foreach(b, j, y)
        {
            char kb[1200];
            obj_key(y, kb, sizeof kb);
            if (!strcmp(ka, kb)) {
                match = y;
                break;
            }
        }
        const char *kind = json_string_value(json_object_get(x, "kind"));
        if (!match) {
            snprintf(out, len, "%s only in the baseline", kind ? kind : "?");
            return;
        }
        char path[1024];
        if (first_diff_value(x, match, "", path, sizeof path)) {
            snprintf(out, len, "%.80s %.300s", kind ? kind : "?", path);
            return;
        }
    }
    json_array_foreach(b, i, x)
    {
        char kb[1200];
        obj_key(x, kb, sizeof kb);
        bool seen = false;
        size_t j;
        json_t *y;
        json_array_foreach(a, j, y)
        {
            char ka[1200];
            obj_key(y, ka, sizeof ka);
            if (!strcmp(ka, kb)) {
                seen = true;
                break;
            }
        }
        if (!seen) {
            const char *kind = json_string_value(json_object_get(x, "kind"));
            snprintf(out, len, "%s only in the perturbed run", kind ? kind : "?");
            return;
        }
    }
}

/* The condition on the object o (of a masked state) that its field at
 * path equals v (NULL: is absent), or NULL if the object or the value is
 * masked (a generated name, a time, a uid: no scenario can name them). */
static json_t *field_cond(const json_t *o, const char *path, const json_t *v)
{
    const json_t *m = json_object_get(o, "metadata");
    const char *name = json_string_value(json_object_get(m, "name"));
    const char *ns = json_string_value(json_object_get(m, "namespace"));
    char *text = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
    bool masked = !name || strchr(name, '<') || (text && strchr(text, '<')) ||
                  (v && (json_is_object(v) || json_is_array(v)));
    free(text);
    if (masked)
        return NULL;
    json_t *c = json_pack("{s:s, s:s, s:s, s:s}", "apiVersion",
                          str_or(json_string_value(json_object_get(o, "apiVersion"))), "kind",
                          str_or(json_string_value(json_object_get(o, "kind"))), "name", name,
                          "path", path);
    if (c && ns)
        json_object_set_new(c, "namespace", json_string(ns));
    if (c)
        json_object_set_new(c, v ? "equals" : "exists", v ? json_deep_copy(v) : json_false());
    return c ? json_pack("{s:{s:o}}", "expect", "field", c) : NULL;
}

/* How many objects of o's apiVersion, kind and namespace state holds. */
static size_t count_like(const json_t *state, const json_t *o)
{
    char want[1200], key[1200];
    size_t i, n = 0;
    json_t *x;
    snprintf(
        want, sizeof want, "%s/%s/%s", str_or(json_string_value(json_object_get(o, "apiVersion"))),
        str_or(json_string_value(json_object_get(o, "kind"))),
        str_or(json_string_value(json_object_get(json_object_get(o, "metadata"), "namespace"))));
    json_array_foreach(state, i, x)
    {
        snprintf(key, sizeof key, "%s/%s/%s",
                 str_or(json_string_value(json_object_get(x, "apiVersion"))),
                 str_or(json_string_value(json_object_get(x, "kind"))),
                 str_or(json_string_value(
                     json_object_get(json_object_get(x, "metadata"), "namespace"))));
        n += strcmp(key, want) == 0;
    }
    return n;
}

/*
 * The baseline's end as expect steps that the perturbed run breaks, so that
 * `scenario run` of a differential finding fails too: for each apiVersion,
 * kind and namespace whose number of objects differs, a count; for the
 * first object (named plainly) whose fields differ, the first differing
 * field's value. A new array (maybe empty), or NULL without memory.
 */
static json_t *baseline_expects(const json_t *a, const json_t *b)
{
    json_t *steps = json_array(), *seen = json_object();
    if (!steps || !seen)
        goto out;
    const json_t *sides[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        size_t i;
        json_t *o;
        json_array_foreach(sides[s], i, o)
        {
            const char *av = json_string_value(json_object_get(o, "apiVersion"));
            const char *kind = json_string_value(json_object_get(o, "kind"));
            const char *ns =
                json_string_value(json_object_get(json_object_get(o, "metadata"), "namespace"));
            char key[1200];
            snprintf(key, sizeof key, "%s/%s/%s", str_or(av), str_or(kind), str_or(ns));
            if (!av || !kind || json_object_get(seen, key))
                continue;
            json_object_set_new(seen, key, json_true());
            size_t na = count_like(a, o);
            if (na == count_like(b, o))
                continue;
            json_t *c = json_pack("{s:s, s:s, s:I}", "apiVersion", av, "kind", kind, "equals",
                                  (json_int_t)na);
            if (c && ns)
                json_object_set_new(c, "namespace", json_string(ns));
            json_array_append_new(steps, json_pack("{s:{s:o}}", "expect", "count", c));
        }
    }
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x)
    {
        char ka[1200], kb[1200];
        obj_key(x, ka, sizeof ka);
        size_t j;
        json_t *y;
        json_array_foreach(b, j, y)
        {
            obj_key(y, kb, sizeof kb);
            char path[1024];
            if (strcmp(ka, kb) != 0 || !first_diff_value(x, y, "", path, sizeof path))
                continue;
            json_t *step = field_cond(x, path, scn__path_get(x, path));
            if (step) {
                json_array_append_new(steps, step);
                goto out;
            }
        }
    }
out:
    json_decref(seen);
    return steps;
}

/* ---- oracles ---- */

/* A check failed (an invariant, an expect, a wait, no quiescence), as
 * scn_shrink counts them: a base step that cannot act under a perturbation
 * (`replica: leader` while the leader restarts) is not a finding. */
static bool check_failed(const scn_run_result *r)
{
    static const char *const kinds[] = {"invariant ", "expect ", "wait ", "no quiescence", NULL};
    for (size_t i = 0; kinds[i]; i++)
        if (!strncmp(r->message, kinds[i], strlen(kinds[i])))
            return true;
    return false;
}

static int add_hit(hit *hits, size_t *n, scn_hunt_oracle oracle, const char *what,
                   const char *message, char *report)
{
    hit *x = &hits[(*n)++];
    x->oracle = oracle;
    snprintf(x->what, sizeof x->what, "%.399s", what);
    x->message = strdup(message);
    x->report = report;
    x->expects = NULL;
    return x->message ? 0 : SCN_ERR_NOMEM;
}

/* The oracles on outcome o of a run of base run b (baseline: the baseline
 * itself, whose reference oracles cannot apply). hits: room for
 * SCN_HUNT_N_ORACLES. */
static int judge(const hunt *h, const base_run *b, const outcome *o, bool baseline, hit *hits,
                 size_t *n)
{
    char msg[3000];
    *n = 0;
    if (!o->ran) {
        return 0; /* counted as a run error by the caller */
    }
    if (!o->r.passed)
        return check_failed(&o->r) || baseline
                   ? add_hit(hits, n, SCN_HUNT_CHECKS, o->check_sig, o->r.message, NULL)
                   : 0;
    if (o->tail_writes && (baseline || b->quiet_ok)) {
        snprintf(msg, sizeof msg,
                 "no quiescence: %lu writes by the controllers during the last %" PRId64
                 "s of virtual time%s, e.g. %s",
                 o->tail_writes, h->tail_ns / SEC, baseline ? "" : " (the baseline made none)",
                 o->tail_example);
        if (add_hit(hits, n, SCN_HUNT_QUIESCENCE, "writes in the tail", msg, NULL) < 0)
            return SCN_ERR_NOMEM;
    }
    if ((o->r.reconcile_errors_last_step || o->r.failing_keys) && (baseline || b->errors_ok)) {
        snprintf(msg, sizeof msg,
                 "%lu reconcile errors (controller_runtime_reconcile_errors_total) during the "
                 "last %" PRId64 "s of virtual time and %lu key%s whose last reconcile failed "
                 "at the end (workqueue_failing_keys)%s; %lu errors over the run",
                 o->r.reconcile_errors_last_step, h->tail_ns / SEC, o->r.failing_keys,
                 o->r.failing_keys == 1 ? "" : "s", baseline ? "" : " (the baseline had none)",
                 o->r.reconcile_errors);
        if (add_hit(hits, n, SCN_HUNT_RECONCILE_ERRORS, "errors in the tail", msg, NULL) < 0)
            return SCN_ERR_NOMEM;
    }
    if (!baseline && b->state && o->state) {
        char *report = NULL;
        int rc = scn_diff_states(b->state, o->state, &report);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            char what[400];
            first_diff(b->state, o->state, what, sizeof what);
            snprintf(msg, sizeof msg, "the final state differs from the baseline's (masked): %s",
                     what);
            if (add_hit(hits, n, SCN_HUNT_DIFFERENTIAL, what, msg, report) < 0)
                return SCN_ERR_NOMEM;
            json_t *ex = baseline_expects(b->state, o->state);
            if (ex && json_array_size(ex))
                hits[*n - 1].expects = json_dumps(ex, JSON_COMPACT);
            json_decref(ex);
        }
    }
    return 0;
}

static void hits_free(hit *hits, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(hits[i].message);
        free(hits[i].report);
        free(hits[i].expects);
    }
}

/* ---- findings ---- */

static int write_finding(const hunt *h, scn_hunt_finding *f, size_t number)
{
    if (!h->o->out_dir)
        return 0;
    if (mkdir(h->o->out_dir, 0777) < 0 && errno != EEXIST)
        return SCN_ERR_IO;
    char path[1200], tmp[1300];
    char name[200];
    snprintf(name, sizeof name, "%s", f->base_name ? f->base_name : "scenario");
    for (char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.')
            *c = '_';
    snprintf(path, sizeof path, "%s/%s-%s-%s-%zu.yaml", h->o->out_dir, name,
             scn_hunt_class_name(f->cls), scn_hunt_oracle_name(f->oracle), number);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *fp = fopen(tmp, "we");
    if (!fp)
        return SCN_ERR_IO;
    char msg[700];
    snprintf(msg, sizeof msg, "%.600s", f->message);
    for (char *c = msg; *c; c++)
        if (*c == '\n')
            *c = ' ';
    /* the comment goes last, so that the lines a run's messages name are
     * those of the file */
    bool ok = fputs(f->yaml, fp) >= 0;
    fprintf(fp,
            "# Found by `scenario hunt` in %s (%s), seed %" PRIu64 ".\n"
            "# oracle: %s; perturbation (%s): %s\n"
            "# %s\n",
            f->base_name, f->base_file ? f->base_file : "generated", f->seed,
            scn_hunt_oracle_name(f->oracle), scn_hunt_class_name(f->cls), f->perturbation, msg);
    if (f->oracle != SCN_HUNT_CHECKS)
        fprintf(fp, "# `scenario run` replays the run; this oracle compares it with the baseline "
                    "(the same file without the hunt- steps and atStart entries).\n");
    ok = fclose(fp) == 0 && ok;
    if (!ok || rename(tmp, path) < 0) {
        unlink(tmp);
        return SCN_ERR_IO;
    }
    f->path = strdup(path);
    return f->path ? 0 : SCN_ERR_NOMEM;
}

/* Shrink a checks finding (best effort: on any failure the finding stays). */
static void shrink_finding(const hunt *h, scn_hunt_finding *f)
{
    scn_scenario *sc = NULL;
    if (scn_scenario_parse(f->base_file, f->yaml, strlen(f->yaml), &sc, NULL) < 0)
        return;
    scn_shrink_options so = {.seed = f->seed,
                             .same_failure = true,
                             .budget_ns = h->o->shrink_budget_ns > 0 ? h->o->shrink_budget_ns
                                                                     : DEFAULT_SHRINK_NS,
                             .max_steps = h->o->max_steps};
    scn_shrink_result r;
    if (scn_shrink(sc, &so, &r, NULL) == 0) {
        char *y = strdup(r.yaml);
        if (y) {
            free(f->yaml);
            f->yaml = y;
            f->seed = r.seed;
            f->shrunk = true;
        }
        scn_shrink_result_deinit(&r);
    }
    scn_scenario_free(sc);
}

/* Record hits of plan item p (NULL: the baseline of base run br). */
static int record(hunt *h, size_t br, const plan_item *p, hit *hits, size_t n)
{
    const base_run *b = &h->brs[br];
    scn_hunt_class cls = p ? p->cls : SCN_HUNT_BASELINE;
    for (size_t i = 0; i < n; i++) {
        char sig[700];
        snprintf(sig, sizeof sig, "%s %s %s", oracle_names[hits[i].oracle], class_names[cls],
                 hits[i].what);
        char key[800];
        snprintf(key, sizeof key, "%zu\x1f%s", b->base, sig);
        json_t *known = json_object_get(h->sigs, key);
        if (known) {
            h->rep->findings[json_integer_value(known)].shown_by++;
            continue;
        }
        scn_hunt_report *rep = h->rep;
        scn_hunt_finding *fs = realloc(rep->findings, (rep->n_findings + 1) * sizeof *fs);
        if (!fs)
            return SCN_ERR_NOMEM;
        rep->findings = fs;
        scn_hunt_finding *f = &fs[rep->n_findings];
        *f = (scn_hunt_finding){.base = b->base,
                                .base_name = b->sc->name,
                                .base_file = b->sc->file,
                                .oracle = hits[i].oracle,
                                .cls = cls,
                                .seed = b->seed,
                                .shown_by = 1,
                                .found_seconds = elapsed_ns(h) / 1e9};
        json_t *doc = build(h, b, p);
        json_t *ex = hits[i].expects ? json_loads(hits[i].expects, 0, NULL) : NULL;
        if (doc && ex)
            json_array_extend(json_object_get(doc, "steps"), ex);
        json_decref(ex);
        f->yaml = doc ? kh_yaml_dump(doc) : NULL;
        json_decref(doc);
        f->signature = strdup(sig);
        f->message = strdup(hits[i].message);
        f->report = hits[i].report ? strdup(hits[i].report) : NULL;
        f->perturbation = p ? describe(h, p) : describe(h, &(plan_item){.cls = SCN_HUNT_BASELINE});
        rep->n_findings++;
        if (!f->yaml || !f->signature || !f->message || !f->perturbation ||
            (hits[i].report && !f->report))
            return SCN_ERR_NOMEM;
        if (h->o->shrink && f->oracle == SCN_HUNT_CHECKS)
            shrink_finding(h, f);
        int rc = write_finding(h, f, rep->n_findings);
        if (rc < 0)
            return rc;
        char cmd[1500];
        snprintf(cmd, sizeof cmd, "scenario run %s --seed %" PRIu64,
                 f->path ? f->path : "FINDING.yaml", f->seed);
        f->replay = strdup(cmd);
        if (!f->replay)
            return SCN_ERR_NOMEM;
        json_object_set_new(h->sigs, key, json_integer((json_int_t)(rep->n_findings - 1)));
    }
    return 0;
}

/* ---- baselines and the plan ---- */

static int baseline(hunt *h, base_run *b)
{
    json_t *doc = build(h, b, NULL);
    if (!doc)
        return SCN_ERR_NOMEM;
    outcome o;
    int rc = run_doc(h, b, doc, true, &o);
    json_decref(doc);
    if (rc < 0)
        return rc;
    h->rep->ran[SCN_HUNT_BASELINE]++;
    b->ran = true;
    if (!o.ran || o.internal) {
        h->rep->run_errors++;
        b->passed = false;
        if (h->o->verbose)
            fprintf(stderr, "hunt: baseline %s seed %" PRIu64 " could not run: %s\n", b->sc->name,
                    b->seed, o.r.message);
        outcome_deinit(&o);
        return 0;
    }
    b->passed = o.r.passed;
    b->state = o.state;
    o.state = NULL;
    b->writes = o.writes;
    o.writes = NULL;
    b->writes0 = o.writes0;
    b->watched = o.watched;
    o.watched = NULL;
    b->quiet_ok = o.tail_writes == 0;
    /* a perturbed run that livelocks fails on its scheduler's limit: a
     * multiple of the baseline's turns, not the default 200000 (minutes) */
    if (!h->o->max_steps) {
        unsigned long m = o.r.steps * LIVELOCK_FACTOR;
        b->max_steps = m > MIN_MAX_STEPS ? (long)m : MIN_MAX_STEPS;
    }
    b->errors_ok = o.r.reconcile_errors_last_step == 0 && o.r.failing_keys == 0;
    if (h->o->verbose)
        fprintf(stderr,
                "hunt: baseline %s seed %" PRIu64 ": %s, %lu writes by replica 0, %lu in the "
                "tail, %.3fs\n",
                b->sc->name, b->seed, o.r.passed ? "passed" : "FAILED", b->writes0, o.tail_writes,
                o.r.real_seconds);
    hit hits[SCN_HUNT_N_ORACLES];
    size_t n = 0;
    rc = judge(h, b, &o, true, hits, &n);
    if (rc == 0)
        rc = record(h, (size_t)(b - h->brs), NULL, hits, n);
    hits_free(hits, n);
    outcome_deinit(&o);
    return rc;
}

static bool wanted(const hunt *h, scn_hunt_class c)
{
    return h->o->classes == 0 || (h->o->classes & (1u << c));
}

/* The steps an unobserved window may cover: those that act (a wait or an
 * expect needs the controllers to see, which the window forbids). */
static bool acts(const scn_step *st)
{
    switch (st->kind) {
    case SCN_STEP_APPLY:
    case SCN_STEP_PATCH:
    case SCN_STEP_DELETE:
    case SCN_STEP_SCALE:
    case SCN_STEP_COMPACT:
    case SCN_STEP_ADVANCE:
    case SCN_STEP_REQUEST:
        return true;
    default:
        return false;
    }
}

typedef struct list {
    plan_item *items;
    size_t n, cap;
} list;

static int push(list *l, plan_item p)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        plan_item *x = realloc(l->items, cap * sizeof *x);
        if (!x)
            return SCN_ERR_NOMEM;
        l->items = x;
        l->cap = cap;
    }
    l->items[l->n++] = p;
    return 0;
}

/* Every perturbation of every base run that passed, class by class, then
 * interleaved (one of each list in turn) so that a short budget tries
 * every class. */
static int make_plan(hunt *h)
{
    size_t nl = h->n_brs * SCN_HUNT_N_CLASSES;
    list *ls = calloc(nl ? nl : 1, sizeof *ls);
    if (!ls)
        return SCN_ERR_NOMEM;
    int rc = 0;
    for (size_t i = 0; i < h->n_brs && rc == 0; i++) {
        const base_run *b = &h->brs[i];
        list *l = &ls[i * SCN_HUNT_N_CLASSES];
        if (!b->passed) {
            continue;
        }
        size_t ns = b->sc->n_steps;
        if (wanted(h, SCN_HUNT_CRASH))
            for (long k = 1; k <= (long)b->writes0 && k <= MAX_WRITES && rc == 0; k++)
                rc = push(&l[SCN_HUNT_CRASH], (plan_item){.br = i, .cls = SCN_HUNT_CRASH, .k = k});
        /* every read lagging, then each watched resource alone (one
         * informer behind the others) */
        int nres = (int)json_array_size(b->watched);
        if (wanted(h, SCN_HUNT_STALE))
            for (int res = -1; res < (nres > 1 ? nres : 0); res++)
                for (int v = 0; v < (int)N_LAGS; v++)
                    for (size_t j = 0; j <= ns && rc == 0; j++)
                        /* one kind's events late, the others' on time, is
                         * a loop that virtual time never ends (a child
                         * made for an owner gone, collected at once,
                         * made again): lags by revision alone, which
                         * catch up as the store moves */
                        if ((j == ns || !dropped(b->sc, j)) && (res < 0 || stale_lags[v]))
                            rc = push(&l[SCN_HUNT_STALE], (plan_item){.br = i,
                                                                      .cls = SCN_HUNT_STALE,
                                                                      .k = (long)j,
                                                                      .variant = v,
                                                                      .res = res});
        if (wanted(h, SCN_HUNT_UNOBSERVED))
            for (size_t j = 0; j <= ns && rc == 0; j++)
                if (j == ns || acts(&b->sc->steps[j]))
                    rc = push(&l[SCN_HUNT_UNOBSERVED],
                              (plan_item){.br = i, .cls = SCN_HUNT_UNOBSERVED, .k = (long)j});
        if (wanted(h, SCN_HUNT_ERROR))
            for (int v = 0; v < (int)N_ERRORS; v++)
                for (size_t c = 0; c < b->sc->n_controllers; c++)
                    for (long k = 1; k <= (long)b->writes[c] && k <= MAX_WRITES && rc == 0; k++)
                        rc = push(&l[SCN_HUNT_ERROR], (plan_item){.br = i,
                                                                  .cls = SCN_HUNT_ERROR,
                                                                  .k = k,
                                                                  .ctl = (int)c,
                                                                  .variant = v});
    }
    size_t total = 0;
    for (size_t i = 0; i < nl; i++)
        total += ls[i].n;
    if (rc == 0 && total && !(h->plan = calloc(total, sizeof *h->plan)))
        rc = SCN_ERR_NOMEM;
    for (size_t round = 0; rc == 0 && h->n_plan < total; round++)
        for (size_t i = 0; i < nl; i++)
            if (round < ls[i].n) {
                h->plan[h->n_plan++] = ls[i].items[round];
                h->rep->planned[ls[i].items[round].cls]++;
            }
    for (size_t i = 0; i < nl; i++)
        free(ls[i].items);
    free(ls);
    return rc;
}

/* ---- perturbed runs ---- */

/* How a perturbed run went, besides its hits. */
enum { RUN_OK = 0, RUN_ERROR, RUN_INAPPLICABLE };

/* Run plan item i: hits in hits[0..*n), *ran false when the budget is out,
 * *status a RUN_ value. */
static int perturbed(const hunt *h, size_t i, bool *ran, int *status, hit *hits, size_t *n)
{
    *n = 0;
    *ran = false;
    *status = RUN_OK;
    if (out_of_time(h))
        return 0;
    const plan_item *p = &h->plan[i];
    const base_run *b = &h->brs[p->br];
    json_t *doc = build(h, b, p);
    if (!doc)
        return SCN_ERR_NOMEM;
    outcome o;
    int rc = run_doc(h, b, doc, false, &o);
    json_decref(doc);
    if (rc < 0)
        return rc;
    *ran = true;
    if (!o.ran || o.internal) {
        *status = RUN_ERROR;
        if (h->o->verbose)
            fprintf(stderr, "hunt: run %zu could not run: %s\n", i, o.r.message);
    } else {
        rc = judge(h, b, &o, false, hits, n);
        if (!o.r.passed && !check_failed(&o.r))
            *status = RUN_INAPPLICABLE;
    }
    if (h->o->verbose) {
        char *d = describe(h, p);
        fprintf(stderr, "hunt: %s %s seed %" PRIu64 ": %s%s (%.3fs): %s\n", b->sc->name,
                class_names[p->cls], b->seed, *n ? "FOUND " : "ok", *n ? hits[0].what : "",
                o.r.real_seconds, d ? d : "");
        free(d);
    }
    outcome_deinit(&o);
    return rc;
}

static void note_run(hunt *h, size_t i, bool ran, int status)
{
    if (ran)
        h->rep->ran[h->plan[i].cls]++;
    else
        h->rep->not_tried++;
    if (status == RUN_ERROR)
        h->rep->run_errors++;
    if (status == RUN_INAPPLICABLE)
        h->rep->inapplicable++;
}

static int serial(hunt *h)
{
    for (size_t i = 0; i < h->n_plan; i++) {
        hit hits[SCN_HUNT_N_ORACLES];
        size_t n = 0;
        bool ran;
        int status;
        int rc = perturbed(h, i, &ran, &status, hits, &n);
        if (rc == 0)
            rc = record(h, h->plan[i].br, &h->plan[i], hits, n);
        hits_free(hits, n);
        if (rc < 0)
            return rc;
        note_run(h, i, ran, status);
    }
    return 0;
}

/* A worker: its items, one JSON line each, into f. */
static void worker(hunt *h, int w, int jobs, FILE *f)
{
    for (size_t i = (size_t)w; i < h->n_plan; i += (size_t)jobs) {
        hit hits[SCN_HUNT_N_ORACLES];
        size_t n = 0;
        bool ran;
        int status;
        int rc = perturbed(h, i, &ran, &status, hits, &n);
        json_t *line = json_pack("{s:I, s:b, s:i, s:[]}", "i", (json_int_t)i, "ran", ran, "status",
                                 rc < 0 ? RUN_ERROR : status, "hits");
        for (size_t k = 0; line && k < n; k++)
            json_array_append_new(json_object_get(line, "hits"),
                                  json_pack("{s:i, s:s, s:s, s:s?}", "oracle", (int)hits[k].oracle,
                                            "what", hits[k].what, "message", hits[k].message,
                                            "report", hits[k].report, "expects", hits[k].expects));
        hits_free(hits, n);
        char *text = line ? json_dumps(line, JSON_COMPACT) : NULL;
        json_decref(line);
        if (text) {
            fputs(text, f);
            fputc('\n', f);
            fflush(f);
        }
        free(text);
    }
}

static int parallel(hunt *h, int jobs)
{
    pid_t pids[MAX_JOBS] = {0};
    FILE *files[MAX_JOBS] = {0};
    int rc = 0;
    fflush(NULL);
    for (int w = 0; w < jobs; w++) {
        files[w] = tmpfile();
        if (!files[w]) {
            rc = SCN_ERR_IO;
            break;
        }
        pids[w] = fork();
        if (pids[w] == 0) {
            scn__cpu_pin_slot(w, jobs);
            worker(h, w, jobs, files[w]);
            fflush(files[w]);
            _exit(0);
        }
        if (pids[w] < 0) {
            rc = SCN_ERR_IO;
            break;
        }
    }
    json_t **lines = calloc(h->n_plan + 1, sizeof *lines);
    for (int w = 0; w < jobs; w++) {
        if (pids[w] > 0)
            waitpid(pids[w], NULL, 0);
        if (!files[w])
            continue;
        rewind(files[w]);
        char *line = NULL;
        size_t cap = 0;
        while (lines && getline(&line, &cap, files[w]) > 0) {
            json_t *v = json_loads(line, 0, NULL);
            json_int_t i = json_integer_value(json_object_get(v, "i"));
            if (v && i >= 0 && (size_t)i < h->n_plan && !lines[i])
                lines[i] = v;
            else
                json_decref(v);
        }
        free(line);
        fclose(files[w]);
    }
    for (size_t i = 0; rc == 0 && lines && i < h->n_plan; i++) {
        json_t *v = lines[i];
        if (!v) {
            /* its worker died before it: a run error if it had time */
            note_run(h, i, !out_of_time(h), out_of_time(h) ? RUN_OK : RUN_ERROR);
            continue;
        }
        hit hits[SCN_HUNT_N_ORACLES];
        size_t n = 0, k;
        json_t *x;
        json_array_foreach(json_object_get(v, "hits"), k, x)
        {
            if (n >= SCN_HUNT_N_ORACLES)
                break;
            hit *ht = &hits[n++];
            ht->oracle = (scn_hunt_oracle)json_integer_value(json_object_get(x, "oracle"));
            snprintf(ht->what, sizeof ht->what, "%s",
                     str_or(json_string_value(json_object_get(x, "what"))));
            ht->message = strdup(str_or(json_string_value(json_object_get(x, "message"))));
            const char *r = json_string_value(json_object_get(x, "report"));
            ht->report = r ? strdup(r) : NULL;
            const char *e = json_string_value(json_object_get(x, "expects"));
            ht->expects = e ? strdup(e) : NULL;
        }
        rc = record(h, h->plan[i].br, &h->plan[i], hits, n);
        hits_free(hits, n);
        note_run(h, i, json_is_true(json_object_get(v, "ran")),
                 (int)json_integer_value(json_object_get(v, "status")));
    }
    if (!lines)
        rc = SCN_ERR_NOMEM;
    for (size_t i = 0; lines && i < h->n_plan; i++)
        json_decref(lines[i]);
    free(lines);
    return rc;
}

/* ---- the campaign ---- */

static int make_base_runs(hunt *h)
{
    const scn_hunt_options *o = h->o;
    uint64_t nseeds = o->seeds_given ? o->seed_hi - o->seed_lo + 1 : 1;
    if (nseeds > 100000)
        return SCN_ERR_INPUT;
    h->brs = calloc(h->n_bases * (size_t)nseeds, sizeof *h->brs);
    if (!h->brs)
        return SCN_ERR_NOMEM;
    for (uint64_t s = 0; s < nseeds; s++) {
        for (size_t i = 0; i < h->n_bases; i++) {
            const scn_scenario *sc = h->bases[i];
            base_run *b = &h->brs[h->n_brs++];
            b->base = i;
            b->sc = sc;
            b->seed = o->seeds_given ? o->seed_lo + s : sc->has_seed ? sc->seed : 1;
            b->doc = scn_scenario_to_doc(sc);
            if (!b->doc || scn_mask_new(&b->mask) < 0)
                return SCN_ERR_NOMEM;
            json_object_del(b->doc, "seed");
            /* events and leader-election Leases change with every restart */
            if (scn_mask_add_scenario(b->mask, sc, NULL) < 0 ||
                scn_mask_ignore(b->mask, "Event:.", NULL) < 0 ||
                scn_mask_ignore(b->mask, "coordination.k8s.io/v1/Lease:.", NULL) < 0 ||
                scn_mask_ignore(b->mask, ".metadata.managedFields", NULL) < 0)
                return SCN_ERR_NOMEM;
        }
    }
    return 0;
}

int scn_hunt(const scn_scenario *const *bases, size_t n, const scn_hunt_options *opts,
             scn_hunt_report *out, scn_error *err)
{
    if (!bases || !n || !opts || !out) {
        fill_err(err, SCN_ERR_INPUT, "scn_hunt: no base scenario");
        return SCN_ERR_INPUT;
    }
    for (size_t i = 0; i < n; i++)
        if (!bases[i] || !bases[i]->n_controllers) {
            fill_err(err, SCN_ERR_INPUT, "base %zu (%s) runs no controller: nothing to hunt", i,
                     bases[i] && bases[i]->name ? bases[i]->name : "?");
            return SCN_ERR_INPUT;
        }
    if (opts->seeds_given && opts->seed_hi < opts->seed_lo) {
        fill_err(err, SCN_ERR_INPUT, "seeds: %" PRIu64 "..%" PRIu64 " is empty", opts->seed_lo,
                 opts->seed_hi);
        return SCN_ERR_INPUT;
    }
    memset(out, 0, sizeof *out);
    hunt h = {.bases = bases,
              .n_bases = n,
              .o = opts,
              .rep = out,
              .settle_ns = opts->settle_ns > 0 ? opts->settle_ns : DEFAULT_SETTLE_NS,
              .tail_ns = opts->tail_ns > 0 ? opts->tail_ns : DEFAULT_TAIL_NS,
              .budget_ns = opts->budget_ns > 0 ? opts->budget_ns : DEFAULT_BUDGET_NS,
              .sigs = json_object()};
    clock_gettime(CLOCK_MONOTONIC, &h.t0);
    int rc = h.sigs ? make_base_runs(&h) : SCN_ERR_NOMEM;
    if (rc == SCN_ERR_INPUT)
        fill_err(err, rc, "too many seeds (at most 100000)");
    for (size_t i = 0; rc == 0 && i < h.n_brs; i++) {
        if (out_of_time(&h)) {
            out->not_tried++;
            continue;
        }
        rc = baseline(&h, &h.brs[i]);
    }
    for (size_t i = 0; i < h.n_brs; i++)
        if (h.brs[i].ran && !h.brs[i].passed)
            out->skipped++; /* its perturbations are not planned */
    if (rc == 0)
        rc = make_plan(&h);
    int jobs = opts->jobs > MAX_JOBS ? MAX_JOBS : opts->jobs;
    if (rc == 0)
        rc = jobs > 1 && h.n_plan > 1 ? parallel(&h, jobs) : serial(&h);
    out->budget_exhausted = out->not_tried > 0;
    out->seconds = elapsed_ns(&h) / 1e9;
    if (rc < 0 && err && !err->message[0])
        fill_err(err, rc, "%s",
                 rc == SCN_ERR_IO ? "cannot write a finding or a worker's file" : scn_strerror(rc));
    for (size_t i = 0; i < h.n_brs; i++) {
        json_decref(h.brs[i].doc);
        json_decref(h.brs[i].state);
        scn_mask_free(h.brs[i].mask);
        free(h.brs[i].writes);
        json_decref(h.brs[i].watched);
    }
    free(h.brs);
    free(h.plan);
    json_decref(h.sigs);
    if (rc < 0)
        scn_hunt_report_deinit(out);
    return rc;
}

void scn_hunt_report_deinit(scn_hunt_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_findings; i++) {
        scn_hunt_finding *f = &r->findings[i];
        free(f->signature);
        free(f->perturbation);
        free(f->message);
        free(f->report);
        free(f->yaml);
        free(f->path);
        free(f->replay);
    }
    free(r->findings);
    memset(r, 0, sizeof *r);
}

json_t *scn_hunt_report_json(const scn_hunt_report *r)
{
    json_t *doc = json_object(), *fs = json_array(), *planned = json_object(), *ran = json_object();
    if (!doc || !fs || !planned || !ran)
        goto oom;
    for (size_t i = 0; i < r->n_findings; i++) {
        const scn_hunt_finding *f = &r->findings[i];
        json_t *x = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:I, s:s, s:s, s:s?, s:s?, s:s?, s:I, "
                              "s:b}",
                              "oracle", scn_hunt_oracle_name(f->oracle), "class",
                              scn_hunt_class_name(f->cls), "signature", f->signature, "base",
                              f->base_name ? f->base_name : "", "file", f->base_file, "seed",
                              (json_int_t)f->seed, "perturbation", f->perturbation, "message",
                              f->message, "report", f->report, "scenario", f->path, "replay",
                              f->replay, "shownBy", (json_int_t)f->shown_by, "shrunk", f->shrunk);
        if (x && json_object_set_new(x, "foundSeconds", json_real(f->found_seconds)) < 0) {
            json_decref(x);
            x = NULL;
        }
        if (!x || json_array_append_new(fs, x) < 0)
            goto oom;
    }
    for (int c = 0; c < SCN_HUNT_N_CLASSES; c++) {
        json_object_set_new(planned, class_names[c], json_integer((json_int_t)r->planned[c]));
        json_object_set_new(ran, class_names[c], json_integer((json_int_t)r->ran[c]));
    }
    json_object_set_new(doc, "findings", fs);
    json_object_set_new(doc, "planned", planned);
    json_object_set_new(doc, "ran", ran);
    json_object_set_new(doc, "skipped", json_integer((json_int_t)r->skipped));
    json_object_set_new(doc, "notTried", json_integer((json_int_t)r->not_tried));
    json_object_set_new(doc, "runErrors", json_integer((json_int_t)r->run_errors));
    json_object_set_new(doc, "inapplicable", json_integer((json_int_t)r->inapplicable));
    json_object_set_new(doc, "budgetExhausted", json_boolean(r->budget_exhausted));
    json_object_set_new(doc, "seconds", json_real(r->seconds));
    return doc;
oom:
    json_decref(doc);
    json_decref(fs);
    json_decref(planned);
    json_decref(ran);
    return NULL;
}
