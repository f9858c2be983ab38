/*
 * fault.c - fault rules (see fault.h for the design).
 */
#include "fault.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "rng.h"

#define MAX_RULES 1024

typedef struct rule {
    uint64_t id;
    fakeapi_fault r; /* strings owned (strdup) */
    json_t *desc;    /* the rule as JSON, for listing */
    unsigned long matched, fired;
} rule;

struct fakeapi__faults {
    pthread_mutex_t mu;
    rule *rules;
    size_t n, cap;
    uint64_t next_id;
    fakeapi__rng rng;
};

static const char *const action_names[] = {
    [FAKEAPI_FAULT_ERROR] = "error",
    [FAKEAPI_FAULT_DELAY] = "delay",
    [FAKEAPI_FAULT_DROP] = "drop",
    [FAKEAPI_FAULT_TRUNCATE] = "truncate",
    [FAKEAPI_FAULT_LOSE_RESPONSE] = "loseResponse",
    [FAKEAPI_FAULT_COMPACT] = "compact",
    [FAKEAPI_FAULT_STALE] = "stale",
    [FAKEAPI_FAULT_WATCH_CLOSE] = "closeWatchAfter",
    [FAKEAPI_FAULT_WATCH_EXPIRE] = "expireWatch",
    [FAKEAPI_FAULT_WITHHOLD] = "withhold",
    [FAKEAPI_FAULT_WATCH_DELAY] = "delayEvents",
};
#define N_ACTIONS (sizeof action_names / sizeof action_names[0])

static const char *const verbs[] = {"get",    "list",  "watch",  "create",
                                    "update", "patch", "delete", "deletecollection"};

fakeapi__faults *fakeapi__faults_new(uint64_t seed)
{
    fakeapi__faults *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    pthread_mutex_init(&f->mu, NULL);
    /* A stream of its own, so fault draws never shift the store's uids. */
    fakeapi__rng_seed(&f->rng, seed ^ 0x6661756c74735eedULL);
    return f;
}

static void rule_deinit(rule *r)
{
    char **strs[] = {(char **)&r->r.verb,     (char **)&r->r.subresource, (char **)&r->r.group,
                     (char **)&r->r.resource, (char **)&r->r.ns,          (char **)&r->r.name,
                     (char **)&r->r.client,   (char **)&r->r.agent,       (char **)&r->r.reason,
                     (char **)&r->r.message};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        free(*strs[i]);
        *strs[i] = NULL;
    }
    json_decref(r->desc);
}

void fakeapi__faults_free(fakeapi__faults *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++)
        rule_deinit(&f->rules[i]);
    free(f->rules);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

static int fail(char *err, size_t len, const char *field, const char *what)
{
    snprintf(err, len, "fault rule: %s: %s", field, what);
    return -1;
}

/* Check a rule's fields; the messages name the JSON field. */
static int validate(const fakeapi_fault *r, char *err, size_t len)
{
    for (const char *p = r->verb; p && *p;) {
        size_t l = strcspn(p, ","), i = 0;
        while (i < sizeof verbs / sizeof verbs[0] &&
               (strlen(verbs[i]) != l || strncmp(p, verbs[i], l)))
            i++;
        p += l + (p[l] == ',');
        if (i == sizeof verbs / sizeof verbs[0])
            return fail(err, len, "match.verb",
                        "must be one of get, list, watch, create, update, patch, delete, "
                        "deletecollection");
    }
    if (r->action <= 0 || (size_t)r->action >= N_ACTIONS)
        return fail(err, len, "action", "unknown action");
    if (r->probability < 0 || r->probability > 1)
        return fail(err, len, "when.probability", "must be between 0 and 1");
    if ((r->nth != 0) + (r->first != 0) + (r->after != 0) > 1)
        return fail(err, len, "when", "use at most one of nth, first, after");
    if (r->action == FAKEAPI_FAULT_ERROR && r->status && (r->status < 400 || r->status > 599))
        return fail(err, len, "action.error.status", "must be an HTTP error code (400-599)");
    if ((r->action == FAKEAPI_FAULT_DELAY || r->action == FAKEAPI_FAULT_WATCH_DELAY) &&
        r->delay_ms <= 0)
        return fail(err, len, "action.delay", "must be a positive duration");
    if (r->action == FAKEAPI_FAULT_WATCH_CLOSE && r->count == 0)
        return fail(err, len, "action.closeWatchAfter", "must be a positive event count");
    if (r->action == FAKEAPI_FAULT_STALE && !r->revision && !r->lag)
        return fail(err, len, "action.stale", "needs revision or lag");
    return 0;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The rule as JSON, in the format fakeapi__fault_parse reads. */
static json_t *describe(const fakeapi_fault *r)
{
    json_t *match = json_object(), *when = json_object(), *act = json_object(), *arg;
    const char *mk[] = {"verb",      "subresource", "group",  "resource",
                        "namespace", "name",        "client", "agent"};
    const char *mv[] = {r->verb, r->subresource, r->group,  r->resource,
                        r->ns,   r->name,        r->client, r->agent};
    for (size_t i = 0; i < sizeof mk / sizeof mk[0]; i++)
        if (mv[i])
            json_object_set_new(match, mk[i], json_string(mv[i]));
    if (r->nth)
        json_object_set_new(when, "nth", json_integer(r->nth));
    if (r->first)
        json_object_set_new(when, "first", json_integer(r->first));
    if (r->after)
        json_object_set_new(when, "after", json_integer(r->after));
    if (r->probability > 0)
        json_object_set_new(when, "probability", json_real(r->probability));
    switch (r->action) {
    case FAKEAPI_FAULT_ERROR:
        arg = json_pack("{s:i}", "status", r->status ? r->status : 500);
        if (r->reason)
            json_object_set_new(arg, "reason", json_string(r->reason));
        if (r->message)
            json_object_set_new(arg, "message", json_string(r->message));
        if (r->retry_after_s)
            json_object_set_new(arg, "retryAfterSeconds", json_integer(r->retry_after_s));
        break;
    case FAKEAPI_FAULT_DELAY:
    case FAKEAPI_FAULT_WATCH_DELAY:
        arg = json_integer(r->delay_ms);
        break;
    case FAKEAPI_FAULT_WATCH_CLOSE:
        arg = json_integer(r->count);
        break;
    case FAKEAPI_FAULT_STALE:
        arg = r->revision ? json_pack("{s:I}", "revision", (json_int_t)r->revision)
                          : json_pack("{s:I}", "lag", (json_int_t)r->lag);
        break;
    default:
        arg = json_true();
        break;
    }
    json_object_set_new(act, action_names[r->action], arg);
    return json_pack("{s:o, s:o, s:o}", "match", match, "when", when, "action", act);
}

int fakeapi__faults_add(fakeapi__faults *f, const fakeapi_fault *in, uint64_t *id, char *err,
                        size_t errlen)
{
    if (validate(in, err, errlen) < 0)
        return -1;
    rule nr = {.r = *in};
    nr.r.verb = dup_or_null(in->verb);
    nr.r.subresource = dup_or_null(in->subresource);
    nr.r.group = dup_or_null(in->group);
    nr.r.resource = dup_or_null(in->resource);
    nr.r.ns = dup_or_null(in->ns);
    nr.r.name = dup_or_null(in->name);
    nr.r.client = dup_or_null(in->client);
    nr.r.agent = dup_or_null(in->agent);
    nr.r.reason = dup_or_null(in->reason);
    nr.r.message = dup_or_null(in->message);
    nr.desc = describe(in);
    pthread_mutex_lock(&f->mu);
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        rule *rules = f->n < MAX_RULES ? realloc(f->rules, cap * sizeof *rules) : NULL;
        if (!rules) {
            pthread_mutex_unlock(&f->mu);
            rule_deinit(&nr);
            snprintf(err, errlen, "fault rule: too many rules (at most %d)", MAX_RULES);
            return -1;
        }
        f->rules = rules;
        f->cap = cap;
    }
    nr.id = ++f->next_id;
    json_object_set_new(nr.desc, "id", json_integer((json_int_t)nr.id));
    f->rules[f->n++] = nr;
    pthread_mutex_unlock(&f->mu);
    if (id)
        *id = nr.id;
    return 0;
}

int fakeapi__faults_remove(fakeapi__faults *f, uint64_t id)
{
    int rc = -1;
    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->n; i++) {
        if (f->rules[i].id == id) {
            rule_deinit(&f->rules[i]);
            memmove(&f->rules[i], &f->rules[i + 1], (f->n - i - 1) * sizeof *f->rules);
            f->n--;
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&f->mu);
    return rc;
}

void fakeapi__faults_clear(fakeapi__faults *f)
{
    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->n; i++)
        rule_deinit(&f->rules[i]);
    f->n = 0;
    pthread_mutex_unlock(&f->mu);
}

int fakeapi__faults_hits(fakeapi__faults *f, uint64_t id, unsigned long *matched,
                         unsigned long *fired)
{
    int rc = -1;
    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->n; i++) {
        if (f->rules[i].id == id) {
            if (matched)
                *matched = f->rules[i].matched;
            if (fired)
                *fired = f->rules[i].fired;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&f->mu);
    return rc;
}

json_t *fakeapi__faults_list(fakeapi__faults *f)
{
    json_t *out = json_array();
    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->n; i++) {
        json_t *d = json_deep_copy(f->rules[i].desc);
        json_object_set_new(d, "matched", json_integer((json_int_t)f->rules[i].matched));
        json_object_set_new(d, "fired", json_integer((json_int_t)f->rules[i].fired));
        json_array_append_new(out, d);
    }
    pthread_mutex_unlock(&f->mu);
    return out;
}

json_t *fakeapi__faults_fired(fakeapi__faults *f)
{
    json_t *out = json_object();
    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->n; i++) {
        char id[24];
        snprintf(id, sizeof id, "%llu", (unsigned long long)f->rules[i].id);
        json_object_set_new(out, id, json_integer((json_int_t)f->rules[i].fired));
    }
    pthread_mutex_unlock(&f->mu);
    return out;
}

void fakeapi__faults_count_fired(fakeapi__faults *f, uint64_t id)
{
    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->n; i++)
        if (f->rules[i].id == id)
            f->rules[i].fired++;
    pthread_mutex_unlock(&f->mu);
}

static bool field_matches(const char *want, const char *have)
{
    return !want || !strcmp(want, have ? have : "");
}

bool fakeapi__agent_is(const char *user_agent, const char *agent)
{
    size_t n = strlen(agent);
    return user_agent && !strncmp(user_agent, agent, n) &&
           (user_agent[n] == '\0' || user_agent[n] == '/' || user_agent[n] == ' ');
}

static bool client_matches(const char *want, const fakeapi__reqinfo *ri)
{
    if (!want)
        return true;
    if (ri->token && *ri->token && !strcmp(want, ri->token))
        return true;
    return ri->user_agent && strstr(ri->user_agent, want);
}

/* A verb, or a comma-separated list of verbs ("create,update,patch,delete"). */
static bool verb_matches(const char *want, const char *have)
{
    if (!want)
        return true;
    size_t n = strlen(have);
    for (const char *p = want; *p;) {
        size_t l = strcspn(p, ",");
        if (l == n && !strncmp(p, have, n))
            return true;
        p += l + (p[l] == ',');
    }
    return false;
}

static bool rule_matches(const fakeapi_fault *r, const fakeapi__reqinfo *ri)
{
    return verb_matches(r->verb, ri->verb) && field_matches(r->subresource, ri->sub) &&
           field_matches(r->group, ri->group) && field_matches(r->resource, ri->resource) &&
           field_matches(r->ns, ri->ns) && field_matches(r->name, ri->name) &&
           client_matches(r->client, ri) &&
           (!r->agent || fakeapi__agent_is(ri->user_agent, r->agent));
}

/* Called with f->mu held, after counting the match. */
static bool rule_fires(fakeapi__faults *f, const rule *ru)
{
    const fakeapi_fault *r = &ru->r;
    if (r->nth && ru->matched != r->nth)
        return false;
    if (r->first && ru->matched > r->first)
        return false;
    if (r->after && ru->matched <= r->after)
        return false;
    if (r->probability > 0) {
        double draw = (double)(fakeapi__rng_next(&f->rng) >> 11) / (double)(1ULL << 53);
        return draw < r->probability;
    }
    return true;
}

static void plan_terminal(fakeapi__fault_plan *p, const fakeapi_fault *r)
{
    if (p->terminal)
        return; /* the first terminal rule wins */
    p->terminal = r->action;
    if (r->action != FAKEAPI_FAULT_ERROR)
        return;
    p->status = r->status ? r->status : 500;
    snprintf(p->reason, sizeof p->reason, "%s",
             r->reason ? r->reason : fakeapi__reason_for(p->status));
    snprintf(p->message, sizeof p->message, "%s", r->message ? r->message : "injected fault");
    p->retry_after = r->retry_after_s ? r->retry_after_s : (p->status == 429 ? 1 : 0);
}

static void plan_add(fakeapi__fault_plan *p, const rule *ru)
{
    const fakeapi_fault *r = &ru->r;
    switch (r->action) {
    case FAKEAPI_FAULT_ERROR:
    case FAKEAPI_FAULT_DROP:
    case FAKEAPI_FAULT_TRUNCATE:
    case FAKEAPI_FAULT_LOSE_RESPONSE:
        plan_terminal(p, r);
        break;
    case FAKEAPI_FAULT_DELAY:
        p->delay_ns += r->delay_ms * 1000000;
        break;
    case FAKEAPI_FAULT_COMPACT:
        p->compact = true;
        break;
    case FAKEAPI_FAULT_STALE:
        p->stale_rv = r->revision;
        p->stale_lag = r->lag;
        break;
    case FAKEAPI_FAULT_WATCH_CLOSE:
        p->close_after = r->count;
        break;
    case FAKEAPI_FAULT_WATCH_EXPIRE:
        p->expire = true;
        break;
    case FAKEAPI_FAULT_WATCH_DELAY:
        p->event_delay_ns = r->delay_ms * 1000000;
        break;
    case FAKEAPI_FAULT_WITHHOLD:
        if (p->n_withhold < FAKEAPI__MAX_WITHHOLD) {
            snprintf(p->withhold[p->n_withhold].ns, sizeof p->withhold[0].ns, "%s",
                     r->ns ? r->ns : "");
            snprintf(p->withhold[p->n_withhold].name, sizeof p->withhold[0].name, "%s",
                     r->name ? r->name : "");
            p->withhold[p->n_withhold++].rule = ru->id;
        }
        break;
    default:
        break;
    }
}

/* Withholding acts on watches only; it matches the watch request (its verb),
 * and names the objects whose events are dropped. */
void fakeapi__faults_eval(fakeapi__faults *f, const fakeapi__reqinfo *ri, fakeapi__fault_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->n; i++) {
        rule *ru = &f->rules[i];
        fakeapi__reqinfo probe = *ri;
        if (ru->r.action == FAKEAPI_FAULT_WITHHOLD)
            probe.ns = ru->r.ns, probe.name = ru->r.name; /* objects, not the watch */
        if (!rule_matches(&ru->r, &probe))
            continue;
        ru->matched++;
        if (!rule_fires(f, ru))
            continue;
        if (ru->r.action != FAKEAPI_FAULT_WITHHOLD)
            ru->fired++;
        plan_add(plan, ru);
        if (plan->n_fired < sizeof plan->fired / sizeof plan->fired[0])
            plan->fired[plan->n_fired++] = ru->id;
    }
    pthread_mutex_unlock(&f->mu);
}

int64_t fakeapi__parse_duration_ms(const json_t *v)
{
    if (json_is_integer(v))
        return json_integer_value(v) >= 0 ? json_integer_value(v) : -1;
    if (json_is_real(v))
        return json_real_value(v) >= 0 ? (int64_t)json_real_value(v) : -1;
    const char *s = json_string_value(v);
    if (!s)
        return -1;
    char *end;
    double n = strtod(s, &end);
    if (end == s || n < 0)
        return -1;
    if (!strcmp(end, "ms") || !*end)
        return (int64_t)n;
    if (!strcmp(end, "s"))
        return (int64_t)(n * 1000);
    if (!strcmp(end, "m"))
        return (int64_t)(n * 60000);
    if (!strcmp(end, "h"))
        return (int64_t)(n * 3600000);
    return -1;
}

static int parse_match(const json_t *m, fakeapi_fault *out, char *err, size_t len)
{
    const char *keys[] = {"verb",      "subresource", "group",  "resource",
                          "namespace", "name",        "client", "agent"};
    const char **dst[] = {&out->verb, &out->subresource, &out->group,  &out->resource,
                          &out->ns,   &out->name,        &out->client, &out->agent};
    const size_t nkeys = sizeof keys / sizeof keys[0];
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)m, k, v)
    {
        size_t i = 0;
        while (i < nkeys && strcmp(k, keys[i]))
            i++;
        char field[64];
        snprintf(field, sizeof field, "match.%s", k);
        if (i == nkeys)
            return fail(err, len, field, "unknown field");
        if (!json_is_string(v))
            return fail(err, len, field, "must be a string");
        *dst[i] = json_string_value(v);
    }
    return 0;
}

static int parse_count(const json_t *v, const char *field, unsigned *out, char *err, size_t len)
{
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1000000000)
        return fail(err, len, field, "must be a positive integer");
    *out = (unsigned)json_integer_value(v);
    return 0;
}

static int parse_when(const json_t *w, fakeapi_fault *out, char *err, size_t len)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)w, k, v)
    {
        if (strcmp(k, "nth") && strcmp(k, "first") && strcmp(k, "after") &&
            strcmp(k, "probability")) {
            char field[64];
            snprintf(field, sizeof field, "when.%s", k);
            return fail(err, len, field, "unknown field");
        }
    }
    json_t *p = json_object_get(w, "probability");
    if (p && !json_is_number(p))
        return fail(err, len, "when.probability", "must be a number");
    out->probability = p ? json_number_value(p) : 0;
    if (parse_count(json_object_get(w, "nth"), "when.nth", &out->nth, err, len) < 0 ||
        parse_count(json_object_get(w, "first"), "when.first", &out->first, err, len) < 0 ||
        parse_count(json_object_get(w, "after"), "when.after", &out->after, err, len) < 0)
        return -1;
    return 0;
}

static int parse_error_action(const json_t *v, fakeapi_fault *out, char *err, size_t len)
{
    if (!json_is_object(v))
        return fail(err, len, "action.error", "must be an object {status, reason, message}");
    json_t *st = json_object_get(v, "status");
    if (st && !json_is_integer(st))
        return fail(err, len, "action.error.status", "must be an integer");
    out->status = st ? (int)json_integer_value(st) : 500;
    out->reason = json_string_value(json_object_get(v, "reason"));
    out->message = json_string_value(json_object_get(v, "message"));
    json_t *ra = json_object_get(v, "retryAfterSeconds");
    if (ra && (!json_is_integer(ra) || json_integer_value(ra) < 0))
        return fail(err, len, "action.error.retryAfterSeconds", "must be an integer >= 0");
    out->retry_after_s = ra ? (int)json_integer_value(ra) : 0;
    return 0;
}

static int parse_action(const json_t *a, fakeapi_fault *out, char *err, size_t len)
{
    if (!json_is_object(a) || json_object_size(a) != 1)
        return fail(err, len, "action", "must be an object with exactly one action");
    const char *k = json_object_iter_key(json_object_iter((json_t *)a));
    json_t *v = json_object_iter_value(json_object_iter((json_t *)a));
    size_t i = 1;
    while (i < N_ACTIONS && strcmp(k, action_names[i]))
        i++;
    char field[64];
    snprintf(field, sizeof field, "action.%s", k);
    if (i == N_ACTIONS)
        return fail(err, len, field, "unknown action");
    out->action = (fakeapi_fault_action)i;
    switch (out->action) {
    case FAKEAPI_FAULT_ERROR:
        return parse_error_action(v, out, err, len);
    case FAKEAPI_FAULT_DELAY:
    case FAKEAPI_FAULT_WATCH_DELAY:
        out->delay_ms = fakeapi__parse_duration_ms(v);
        return out->delay_ms < 0 ? fail(err, len, field, "must be a duration (\"500ms\", \"2s\")")
                                 : 0;
    case FAKEAPI_FAULT_WATCH_CLOSE:
        return parse_count(v, field, &out->count, err, len);
    case FAKEAPI_FAULT_STALE: {
        json_t *rev = json_object_get(v, "revision"), *lag = json_object_get(v, "lag");
        if (!json_is_object(v) || (!json_is_integer(rev) && !json_is_integer(lag)))
            return fail(err, len, field, "must be {revision: N} or {lag: N}");
        out->revision = rev ? (uint64_t)json_integer_value(rev) : 0;
        out->lag = lag ? (uint64_t)json_integer_value(lag) : 0;
        return 0;
    }
    default:
        return json_is_true(v) ? 0 : fail(err, len, field, "must be true");
    }
}

int fakeapi__fault_parse(const json_t *j, fakeapi_fault *out, char *err, size_t len)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(j))
        return fail(err, len, "rule", "must be an object {match, when, action}");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)j, k, v)
    {
        if (strcmp(k, "match") && strcmp(k, "when") && strcmp(k, "action") && strcmp(k, "id") &&
            strcmp(k, "matched") && strcmp(k, "fired"))
            return fail(err, len, k, "unknown field");
    }
    json_t *m = json_object_get(j, "match"), *w = json_object_get(j, "when");
    if (m && !json_is_object(m))
        return fail(err, len, "match", "must be an object");
    if (w && !json_is_object(w))
        return fail(err, len, "when", "must be an object");
    if (!json_object_get(j, "action"))
        return fail(err, len, "action", "is required");
    if (parse_match(m, out, err, len) < 0 || parse_when(w, out, err, len) < 0 ||
        parse_action(json_object_get(j, "action"), out, err, len) < 0)
        return -1;
    return validate(out, err, len);
}

int fakeapi__faults_add_json(fakeapi__faults *f, const json_t *j, char *err, size_t errlen)
{
    if (json_is_array(j)) {
        /* Check every rule first: a bad file adds nothing. */
        size_t i;
        json_t *r;
        fakeapi_fault tmp;
        json_array_foreach(j, i, r)
        {
            if (fakeapi__fault_parse(r, &tmp, err, errlen) < 0) {
                char inner[400];
                snprintf(inner, sizeof inner, "%s", err);
                snprintf(err, errlen, "rule %zu: %s", i, inner);
                return -1;
            }
        }
        json_array_foreach(j, i, r)
        {
            fakeapi__fault_parse(r, &tmp, err, errlen);
            if (fakeapi__faults_add(f, &tmp, NULL, err, errlen) < 0)
                return -1;
        }
        return (int)json_array_size(j);
    }
    fakeapi_fault one;
    if (fakeapi__fault_parse(j, &one, err, errlen) < 0 ||
        fakeapi__faults_add(f, &one, NULL, err, errlen) < 0)
        return -1;
    return 1;
}
