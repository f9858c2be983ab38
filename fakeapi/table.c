/*
 * table.c - meta.k8s.io/v1 Table responses for `kubectl get`.
 *
 * One printer per built-in resource (columns plus a row function that reads
 * the object), chosen by group and plural; CRD kinds are printed from their
 * additionalPrinterColumns. Column names and cell formats follow the real
 * API server (kubernetes/pkg/printers/internalversion and the CRD table
 * convertor) so kubectl output looks as it would against a real cluster.
 *
 * Failure handling: as in discovery.c, builders record allocation failures in
 * a flag and the whole table is dropped at the end.
 */
#include "table.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jsonpath.h"
#include "timefmt.h"

#define NS_PER_SEC INT64_C(1000000000)
#define MAX_CELL 4096 /* longest joined cell text (images, ports, ...) */

static const char desc_name[] =
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically.";
static const char desc_age[] =
    "CreationTimestamp is a timestamp representing the server time when this object was created.";

/* ---- small helpers ---------------------------------------------------------------- */

static void push(json_t *arr, json_t *v, bool *bad)
{
    if (json_array_append_new(arr, v) != 0)
        *bad = true;
}

static void put(json_t *obj, const char *key, json_t *v, bool *bad)
{
    if (json_object_set_new(obj, key, v) != 0)
        *bad = true;
}

/* obj.a.b.c for a dotted path of plain keys (no arrays); NULL when absent. */
static const json_t *dig(const json_t *obj, const char *path)
{
    char key[128];
    const json_t *cur = obj;
    while (cur && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        cur = json_object_get(cur, key);
        path += n;
        if (*path == '.')
            path++;
    }
    return cur;
}

static const char *dig_str(const json_t *obj, const char *path)
{
    return json_string_value(dig(obj, path));
}

static json_int_t dig_int(const json_t *obj, const char *path, json_int_t dflt)
{
    const json_t *v = dig(obj, path);
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v))
        return (json_int_t)json_real_value(v);
    return dflt;
}

/* A bounded string builder for cell text; overflow truncates (cells are for humans). */
typedef struct cellbuf {
    char s[MAX_CELL];
    size_t len;
} cellbuf;

static void cb_add(cellbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (n > sizeof b->s - 1 - b->len)
        n = sizeof b->s - 1 - b->len;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

/* Append s, preceded by sep unless the buffer is empty. */
static void cb_join(cellbuf *b, const char *sep, const char *s)
{
    if (b->len)
        cb_add(b, sep);
    cb_add(b, s);
}

static json_t *cb_or(const cellbuf *b, const char *dflt)
{
    return json_string(b->len ? b->s : dflt);
}

static json_t *str_or(const char *s, const char *dflt)
{
    return json_string(s && *s ? s : dflt);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ---- time cells ---------------------------------------------------------------- */

static json_t *since_cell(const char *ts, int64_t now_ns, const char *absent)
{
    char buf[32];
    int64_t t;
    if (!ts || !*ts)
        return json_string(absent);
    if (fakeapi__parse_time(ts, &t) < 0)
        return json_string("<invalid>");
    fakeapi__human_duration(now_ns - t, buf, sizeof buf);
    return json_string(buf);
}

static json_t *age_cell(const json_t *obj, int64_t now_ns)
{
    return since_cell(dig_str(obj, "metadata.creationTimestamp"), now_ns, "<unknown>");
}

/* ---- CRD printer columns --------------------------------------------------------- */

/* A JSON value as cell text: strings bare, others as compact JSON. */
static void value_text(const json_t *v, cellbuf *b)
{
    if (json_is_string(v)) {
        cb_add(b, json_string_value(v));
        return;
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (s)
        cb_add(b, s);
    free(s);
}

/* One CRD printer-column cell, typed like the CRD table convertor does it. */
static json_t *crd_cell(const json_t *obj, const json_t *col, int64_t now_ns)
{
    const char *type = json_string_value(json_object_get(col, "type"));
    json_t *res = fakeapi__jsonpath(obj, json_string_value(json_object_get(col, "jsonPath")));
    json_t *cell = NULL;
    const json_t *v = json_array_get(res, 0);
    if (!v || json_is_null(v)) {
        cell = json_null();
    } else if (!type || !strcmp(type, "string")) {
        cellbuf b = {.len = 0};
        b.s[0] = '\0';
        size_t i;
        const json_t *x;
        json_array_foreach(res, i, x)
        {
            if (i)
                cb_add(&b, ",");
            value_text(x, &b);
        }
        cell = json_string(b.s);
    } else if (!strcmp(type, "integer")) {
        cell = json_is_integer(v) ? json_integer(json_integer_value(v))
               : json_is_real(v)  ? json_integer((json_int_t)json_real_value(v))
                                  : json_null();
    } else if (!strcmp(type, "number")) {
        cell = json_is_number(v) ? json_real(json_number_value(v)) : json_null();
    } else if (!strcmp(type, "boolean")) {
        cell = json_is_boolean(v) ? json_boolean(json_is_true(v)) : json_null();
    } else if (!strcmp(type, "date")) {
        cell =
            json_is_string(v) ? since_cell(json_string_value(v), now_ns, "<unknown>") : json_null();
    } else {
        cell = json_null();
    }
    json_decref(res);
    return cell;
}

/* ---- column definitions ---------------------------------------------------------- */

typedef struct coldef {
    const char *name, *type;
    int priority;
    const char *desc;
} coldef;

typedef void (*row_fn)(const json_t *obj, json_t *cells, int64_t now_ns, bool *bad);

typedef struct printer {
    const char *group, *plural;
    const coldef *cols; /* after Name */
    size_t ncols;
    row_fn row;
} printer;

#define COLS(a) a, sizeof a / sizeof a[0]
#define AGE                                                                                        \
    {                                                                                              \
        "Age", "string", 0, desc_age                                                               \
    }
#define CONTAINERS                                                                                 \
    {                                                                                              \
        "Containers", "string", 1, "Names of each container in the template."                      \
    }
#define IMAGES                                                                                     \
    {                                                                                              \
        "Images", "string", 1, "Images referenced by each container in the template."              \
    }
#define SELECTOR                                                                                   \
    {                                                                                              \
        "Selector", "string", 1, "The label selector of the object."                               \
    }

/* "a,b" of field over the containers of a pod spec. */
static json_t *containers_field(const json_t *podspec, const char *field)
{
    cellbuf b = {.len = 0};
    b.s[0] = '\0';
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(podspec, "containers"), i, c)
    {
        const char *s = json_string_value(json_object_get(c, field));
        cb_join(&b, ",", s ? s : "");
    }
    return json_string(b.s);
}

/* A map of strings as "k=v,k2=v2" sorted by key into b. */
static void map_text(const json_t *map, cellbuf *b)
{
    size_t n = json_object_size(map);
    if (!n)
        return;
    const char **keys = malloc(n * sizeof *keys);
    if (!keys)
        return;
    size_t i = 0;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)map, k, v)
    {
        if (i < n)
            keys[i++] = k;
    }
    qsort(keys, i, sizeof *keys, cmp_str);
    for (size_t j = 0; j < i; j++) {
        const char *val = json_string_value(json_object_get(map, keys[j]));
        if (b->len)
            cb_add(b, ",");
        cb_add(b, keys[j]);
        cb_add(b, "=");
        cb_add(b, val ? val : "");
    }
    free(keys);
}

/* A metav1.LabelSelector as its string form ("app=x,tier in (a,b)"). */
static json_t *selector_cell(const json_t *sel)
{
    cellbuf b = {.len = 0};
    b.s[0] = '\0';
    map_text(json_object_get(sel, "matchLabels"), &b);
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        if (!key || !op)
            continue;
        if (b.len)
            cb_add(&b, ",");
        if (!strcmp(op, "DoesNotExist"))
            cb_add(&b, "!");
        cb_add(&b, key);
        if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
            cb_add(&b, !strcmp(op, "In") ? " in (" : " notin (");
            size_t j;
            const json_t *val;
            json_array_foreach(json_object_get(e, "values"), j, val)
            {
                if (j)
                    cb_add(&b, ",");
                cb_add(&b, json_string_value(val) ? json_string_value(val) : "");
            }
            cb_add(&b, ")");
        }
    }
    return cb_or(&b, "<none>");
}

static json_t *workload_wide(const json_t *obj, json_t *cells, bool with_selector, bool *bad)
{
    const json_t *podspec = dig(obj, "spec.template.spec");
    push(cells, containers_field(podspec, "name"), bad);
    push(cells, containers_field(podspec, "image"), bad);
    if (with_selector)
        push(cells, selector_cell(dig(obj, "spec.selector")), bad);
    return cells;
}

/* -- pods -- */

static const coldef pod_cols[] = {
    {"Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."},
    {"Status", "string", 0, "The aggregate status of the containers in this pod."},
    {"Restarts", "string", 0,
     "The number of times the containers in this pod have been restarted and when the last "
     "container in this pod has restarted."},
    AGE,
    {"IP", "string", 1, "IP address allocated to the pod."},
    {"Node", "string", 1, "NodeName is a request to schedule this pod onto a specific node."},
    {"Nominated Node", "string", 1, "nominatedNodeName is set when this pod preempts other pods."},
    {"Readiness Gates", "string", 1, "If specified, all readiness gates will be evaluated."},
};

/* The STATUS column: phase refined by container states, as kubectl shows it. */
static void pod_reason(const json_t *pod, cellbuf *out)
{
    const char *reason = dig_str(pod, "status.phase");
    if (dig_str(pod, "status.reason"))
        reason = dig_str(pod, "status.reason");
    char tmp[128];
    const json_t *inits = dig(pod, "status.initContainerStatuses");
    size_t ninit = json_array_size(dig(pod, "spec.initContainers"));
    bool initializing = false;
    size_t i;
    const json_t *cs;
    json_array_foreach(inits, i, cs)
    {
        const json_t *term = dig(cs, "state.terminated");
        const char *waiting = dig_str(cs, "state.waiting.reason");
        if (term && dig_int(term, "exitCode", 0) == 0)
            continue;
        initializing = true;
        if (term) {
            const char *r = json_string_value(json_object_get(term, "reason"));
            if (r && *r)
                snprintf(tmp, sizeof tmp, "Init:%s", r);
            else if (dig_int(term, "signal", 0))
                snprintf(tmp, sizeof tmp, "Init:Signal:%" JSON_INTEGER_FORMAT,
                         dig_int(term, "signal", 0));
            else
                snprintf(tmp, sizeof tmp, "Init:ExitCode:%" JSON_INTEGER_FORMAT,
                         dig_int(term, "exitCode", 0));
        } else if (waiting && *waiting && strcmp(waiting, "PodInitializing") != 0) {
            snprintf(tmp, sizeof tmp, "Init:%s", waiting);
        } else {
            snprintf(tmp, sizeof tmp, "Init:%zu/%zu", i, ninit ? ninit : json_array_size(inits));
        }
        reason = tmp;
        break;
    }
    char ctmp[128];
    if (!initializing) {
        bool running = false;
        const json_t *list = dig(pod, "status.containerStatuses");
        for (size_t j = json_array_size(list); j-- > 0;) {
            cs = json_array_get(list, j);
            const char *waiting = dig_str(cs, "state.waiting.reason");
            const json_t *term = dig(cs, "state.terminated");
            if (waiting && *waiting) {
                reason = waiting;
            } else if (term) {
                const char *r = json_string_value(json_object_get(term, "reason"));
                if (r && *r) {
                    reason = r;
                } else {
                    json_int_t sig = dig_int(term, "signal", 0);
                    if (sig)
                        snprintf(ctmp, sizeof ctmp, "Signal:%" JSON_INTEGER_FORMAT, sig);
                    else
                        snprintf(ctmp, sizeof ctmp, "ExitCode:%" JSON_INTEGER_FORMAT,
                                 dig_int(term, "exitCode", 0));
                    reason = ctmp;
                }
            } else if (json_is_true(json_object_get(cs, "ready")) && dig(cs, "state.running")) {
                running = true;
            }
        }
        if (reason && !strcmp(reason, "Completed") && running)
            reason = "Running";
    }
    if (dig_str(pod, "metadata.deletionTimestamp"))
        reason = (reason && !strcmp(reason, "NodeLost")) ? "Unknown" : "Terminating";
    cb_add(out, reason && *reason ? reason : "Pending");
}

static void pod_row(const json_t *pod, json_t *cells, int64_t now_ns, bool *bad)
{
    const json_t *list = dig(pod, "status.containerStatuses");
    size_t total = json_array_size(dig(pod, "spec.containers"));
    size_t ready = 0;
    json_int_t restarts = 0;
    int64_t last = 0;
    size_t i;
    const json_t *cs;
    json_array_foreach(list, i, cs)
    {
        if (json_is_true(json_object_get(cs, "ready")))
            ready++;
        restarts += dig_int(cs, "restartCount", 0);
        int64_t t;
        const char *fin = dig_str(cs, "lastState.terminated.finishedAt");
        if (fin && fakeapi__parse_time(fin, &t) == 0 && t > last)
            last = t;
    }
    char buf[96];
    snprintf(buf, sizeof buf, "%zu/%zu", ready, total);
    push(cells, json_string(buf), bad);
    cellbuf reason = {.len = 0};
    reason.s[0] = '\0';
    pod_reason(pod, &reason);
    push(cells, json_string(reason.s), bad);
    if (restarts && last) {
        char ago[32];
        fakeapi__human_duration(now_ns - last, ago, sizeof ago);
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT " (%s ago)", restarts, ago);
    } else {
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, restarts);
    }
    push(cells, json_string(buf), bad);
    push(cells, age_cell(pod, now_ns), bad);
    const char *ip = dig_str(pod, "status.podIP");
    const char *node = dig_str(pod, "spec.nodeName");
    const char *nominated = dig_str(pod, "status.nominatedNodeName");
    push(cells, json_string(ip && *ip ? ip : "<none>"), bad);
    push(cells, json_string(node && *node ? node : "<none>"), bad);
    push(cells, json_string(nominated && *nominated ? nominated : "<none>"), bad);
    const json_t *gates = dig(pod, "spec.readinessGates");
    if (!json_array_size(gates)) {
        push(cells, json_string("<none>"), bad);
    } else {
        size_t ok = 0, j;
        const json_t *g, *c;
        json_array_foreach(gates, j, g)
        {
            const char *want = dig_str(g, "conditionType");
            size_t k;
            json_array_foreach(dig(pod, "status.conditions"), k, c)
            {
                const char *type = json_string_value(json_object_get(c, "type"));
                const char *st = json_string_value(json_object_get(c, "status"));
                if (want && type && st && !strcmp(want, type) && !strcmp(st, "True"))
                    ok++;
            }
        }
        snprintf(buf, sizeof buf, "%zu/%zu", ok, json_array_size(gates));
        push(cells, json_string(buf), bad);
    }
}

/* -- apps -- */

static const coldef deploy_cols[] = {
    {"Ready", "string", 0, "Number of the pod with ready state"},
    {"Up-to-date", "integer", 0,
     "Total number of non-terminated pods targeted by this "
     "deployment that have the desired template spec."},
    {"Available", "integer", 0,
     "Total number of available pods (ready for at least "
     "minReadySeconds) targeted by this deployment."},
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
};

static void deploy_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    char buf[64];
    /* An absent spec.replicas means the API default of 1. */
    snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
             dig_int(o, "status.readyReplicas", 0), dig_int(o, "spec.replicas", 1));
    push(cells, json_string(buf), bad);
    push(cells, json_integer(dig_int(o, "status.updatedReplicas", 0)), bad);
    push(cells, json_integer(dig_int(o, "status.availableReplicas", 0)), bad);
    push(cells, age_cell(o, now_ns), bad);
    workload_wide(o, cells, true, bad);
}

static const coldef rs_cols[] = {
    {"Desired", "integer", 0, "Replicas is the number of desired replicas."},
    {"Current", "integer", 0, "Replicas is the most recently observed number of replicas."},
    {"Ready", "integer", 0, "The number of ready replicas for this replica set."},
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
};

static void rs_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    push(cells, json_integer(dig_int(o, "spec.replicas", 1)), bad);
    push(cells, json_integer(dig_int(o, "status.replicas", 0)), bad);
    push(cells, json_integer(dig_int(o, "status.readyReplicas", 0)), bad);
    push(cells, age_cell(o, now_ns), bad);
    workload_wide(o, cells, true, bad);
}

static const coldef sts_cols[] = {
    {"Ready", "string", 0, "Number of the pod with ready state"},
    AGE,
    CONTAINERS,
    IMAGES,
};

static void sts_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
             dig_int(o, "status.readyReplicas", 0), dig_int(o, "spec.replicas", 1));
    push(cells, json_string(buf), bad);
    push(cells, age_cell(o, now_ns), bad);
    workload_wide(o, cells, false, bad);
}

static const coldef ds_cols[] = {
    {"Desired", "integer", 0, "The total number of nodes that should be running the daemon pod."},
    {"Current", "integer", 0, "The number of nodes running at least one daemon pod."},
    {"Ready", "integer", 0,
     "The number of nodes that should be running the daemon pod and have "
     "one or more of the daemon pod running and ready."},
    {"Up-to-date", "integer", 0, "The total number of nodes that are running updated daemon pod"},
    {"Available", "integer", 0,
     "The number of nodes that should be running the daemon pod and "
     "have one or more of the daemon pod running and available."},
    {"Node Selector", "string", 0,
     "NodeSelector is a selector which must be true for the pod to "
     "fit on a node."},
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
};

static void ds_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    push(cells, json_integer(dig_int(o, "status.desiredNumberScheduled", 0)), bad);
    push(cells, json_integer(dig_int(o, "status.currentNumberScheduled", 0)), bad);
    push(cells, json_integer(dig_int(o, "status.numberReady", 0)), bad);
    push(cells, json_integer(dig_int(o, "status.updatedNumberScheduled", 0)), bad);
    push(cells, json_integer(dig_int(o, "status.numberAvailable", 0)), bad);
    cellbuf b = {.len = 0};
    b.s[0] = '\0';
    map_text(dig(o, "spec.template.spec.nodeSelector"), &b);
    push(cells, cb_or(&b, "<none>"), bad);
    push(cells, age_cell(o, now_ns), bad);
    workload_wide(o, cells, true, bad);
}

/* -- batch -- */

static const coldef job_cols[] = {
    {"Status", "string", 0, "Status of the job."},
    {"Completions", "string", 0, "The completion status of the job"},
    {"Duration", "string", 0, "Time required to complete the job."},
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
};

/* True if the job has a condition of this type with status True. */
static bool job_condition(const json_t *o, const char *type)
{
    size_t i;
    const json_t *c;
    json_array_foreach(dig(o, "status.conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *st = json_string_value(json_object_get(c, "status"));
        if (t && st && !strcmp(t, type) && !strcmp(st, "True"))
            return true;
    }
    return false;
}

/* The STATUS column (kubectl >= 1.30): terminal conditions win over deletion. */
static const char *job_status(const json_t *o)
{
    if (job_condition(o, "Complete"))
        return "Complete";
    if (job_condition(o, "Failed"))
        return "Failed";
    if (dig_str(o, "metadata.deletionTimestamp"))
        return "Terminating";
    if (job_condition(o, "SuccessCriteriaMet"))
        return "SuccessCriteriaMet";
    if (job_condition(o, "FailureTarget"))
        return "FailureTarget";
    if (job_condition(o, "Suspended"))
        return "Suspended";
    return "Running";
}

static void job_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    char buf[96];
    push(cells, json_string(job_status(o)), bad);
    json_int_t ok = dig_int(o, "status.succeeded", 0);
    const json_t *completions = dig(o, "spec.completions");
    json_int_t parallelism = dig_int(o, "spec.parallelism", 0);
    if (json_is_integer(completions))
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT, ok,
                 json_integer_value(completions));
    else if (parallelism > 1)
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT "/1 of %" JSON_INTEGER_FORMAT, ok,
                 parallelism);
    else
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT "/1", ok);
    push(cells, json_string(buf), bad);
    int64_t start, end = now_ns;
    const char *done = dig_str(o, "status.completionTime");
    if (fakeapi__parse_time(dig_str(o, "status.startTime"), &start) < 0) {
        push(cells, json_string(""), bad);
    } else {
        if (done)
            fakeapi__parse_time(done, &end);
        fakeapi__human_duration(end - start, buf, sizeof buf);
        push(cells, json_string(buf), bad);
    }
    push(cells, age_cell(o, now_ns), bad);
    const json_t *podspec = dig(o, "spec.template.spec");
    push(cells, containers_field(podspec, "name"), bad);
    push(cells, containers_field(podspec, "image"), bad);
    push(cells, selector_cell(dig(o, "spec.selector")), bad);
}

static const coldef cronjob_cols[] = {
    {"Schedule", "string", 0, "The schedule in Cron format."},
    {"Timezone", "string", 0, "The time zone name for the given schedule."},
    {"Suspend", "boolean", 0, "This flag tells the controller to suspend subsequent executions."},
    {"Active", "integer", 0, "A list of pointers to currently running jobs."},
    {"Last Schedule", "string", 0,
     "Information when was the last time the job was successfully "
     "scheduled."},
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
};

static void cronjob_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    const char *sched = dig_str(o, "spec.schedule");
    push(cells, json_string(sched ? sched : ""), bad);
    push(cells, str_or(dig_str(o, "spec.timeZone"), "<none>"), bad);
    push(cells, json_boolean(json_is_true(dig(o, "spec.suspend"))), bad);
    push(cells, json_integer((json_int_t)json_array_size(dig(o, "status.active"))), bad);
    push(cells, since_cell(dig_str(o, "status.lastScheduleTime"), now_ns, "<none>"), bad);
    push(cells, age_cell(o, now_ns), bad);
    const json_t *podspec = dig(o, "spec.jobTemplate.spec.template.spec");
    push(cells, containers_field(podspec, "name"), bad);
    push(cells, containers_field(podspec, "image"), bad);
    push(cells, selector_cell(dig(o, "spec.jobTemplate.spec.selector")), bad);
}

/* -- core -- */

static const coldef cm_cols[] = {
    {"Data", "integer", 0, "Data contains the configuration data."},
    AGE,
};

static void cm_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    size_t n = json_object_size(json_object_get(o, "data")) +
               json_object_size(json_object_get(o, "binaryData"));
    push(cells, json_integer((json_int_t)n), bad);
    push(cells, age_cell(o, now_ns), bad);
}

static const coldef secret_cols[] = {
    {"Type", "string", 0, "The type of the secret"},
    {"Data", "integer", 0, "The number of data items in the secret"},
    AGE,
};

static void secret_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    const char *type = json_string_value(json_object_get(o, "type"));
    push(cells, json_string(type ? type : "Opaque"), bad);
    /* stringData is write-only: the server merges it into data, but count it if it is still there.
     */
    const json_t *data = json_object_get(o, "data");
    size_t n = json_object_size(data);
    const char *k;
    const json_t *v;
    json_object_foreach(json_object_get(o, "stringData"), k, v)
    {
        if (!json_object_get(data, k))
            n++;
    }
    push(cells, json_integer((json_int_t)n), bad);
    push(cells, age_cell(o, now_ns), bad);
}

static const coldef svc_cols[] = {
    {"Type", "string", 0, "type determines how the Service is exposed."},
    {"Cluster-IP", "string", 0, "clusterIP is the IP address of the service."},
    {"External-IP", "string", 0,
     "externalIPs is a list of IP addresses for which nodes in the "
     "cluster will also accept traffic for this service."},
    {"Port(s)", "string", 0, "The list of ports that are exposed by this service."},
    AGE,
    {"Selector", "string", 1,
     "Route service traffic to pods with label keys and values matching "
     "this selector."},
};

static void svc_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    const char *type = dig_str(o, "spec.type");
    if (!type || !*type)
        type = "ClusterIP";
    push(cells, json_string(type), bad);
    const char *cip = dig_str(o, "spec.clusterIP");
    push(cells, json_string(cip && *cip ? cip : "<none>"), bad);

    cellbuf ext = {.len = 0};
    ext.s[0] = '\0';
    size_t i;
    const json_t *v;
    if (!strcmp(type, "ExternalName")) {
        const char *name = dig_str(o, "spec.externalName");
        cb_add(&ext, name ? name : "");
    } else {
        if (!strcmp(type, "LoadBalancer")) {
            json_array_foreach(dig(o, "status.loadBalancer.ingress"), i, v)
            {
                const char *ip = json_string_value(json_object_get(v, "ip"));
                const char *host = json_string_value(json_object_get(v, "hostname"));
                if (ip && *ip)
                    cb_join(&ext, ",", ip);
                else if (host && *host)
                    cb_join(&ext, ",", host);
            }
        }
        json_array_foreach(dig(o, "spec.externalIPs"), i, v)
        {
            if (json_string_value(v))
                cb_join(&ext, ",", json_string_value(v));
        }
    }
    push(cells, cb_or(&ext, !strcmp(type, "LoadBalancer") ? "<pending>" : "<none>"), bad);

    cellbuf ports = {.len = 0};
    ports.s[0] = '\0';
    json_array_foreach(dig(o, "spec.ports"), i, v)
    {
        char one[64];
        const char *proto = json_string_value(json_object_get(v, "protocol"));
        json_int_t port = dig_int(v, "port", 0), node_port = dig_int(v, "nodePort", 0);
        if (node_port)
            snprintf(one, sizeof one, "%" JSON_INTEGER_FORMAT ":%" JSON_INTEGER_FORMAT "/%s", port,
                     node_port, proto ? proto : "TCP");
        else
            snprintf(one, sizeof one, "%" JSON_INTEGER_FORMAT "/%s", port, proto ? proto : "TCP");
        cb_join(&ports, ",", one);
    }
    push(cells, cb_or(&ports, "<none>"), bad);
    push(cells, age_cell(o, now_ns), bad);
    cellbuf sel = {.len = 0};
    sel.s[0] = '\0';
    map_text(dig(o, "spec.selector"), &sel);
    push(cells, cb_or(&sel, "<none>"), bad);
}

static const coldef ns_cols[] = {
    {"Status", "string", 0, "The status of the namespace"},
    AGE,
};

static void ns_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    const char *phase = dig_str(o, "status.phase");
    push(cells, json_string(phase && *phase ? phase : "Active"), bad);
    push(cells, age_cell(o, now_ns), bad);
}

static const coldef node_cols[] = {
    {"Status", "string", 0, "The status of the node"},
    {"Roles", "string", 0, "The roles of the node"},
    AGE,
    {"Version", "string", 0, "Kubelet Version reported by the node."},
    {"Internal-IP", "string", 1, "List of addresses reachable to the node."},
    {"External-IP", "string", 1, "List of addresses reachable to the node."},
    {"OS-Image", "string", 1, "OS Image reported by the node from /etc/os-release."},
    {"Kernel-Version", "string", 1, "Kernel Version reported by the node from 'uname -r'."},
    {"Container-Runtime", "string", 1, "ContainerRuntime Version reported by the node."},
};

static json_t *node_address(const json_t *o, const char *type)
{
    size_t i;
    const json_t *a;
    json_array_foreach(dig(o, "status.addresses"), i, a)
    {
        const char *t = json_string_value(json_object_get(a, "type"));
        const char *addr = json_string_value(json_object_get(a, "address"));
        if (t && addr && !strcmp(t, type))
            return json_string(addr);
    }
    return json_string("<none>");
}

static void node_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    cellbuf st = {.len = 0};
    st.s[0] = '\0';
    size_t i;
    const json_t *c;
    json_array_foreach(dig(o, "status.conditions"), i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        const char *status = json_string_value(json_object_get(c, "status"));
        if (!type || strcmp(type, "Ready") != 0)
            continue;
        cb_join(&st, ",", status && !strcmp(status, "True") ? "Ready" : "NotReady");
    }
    if (!st.len)
        cb_add(&st, "Unknown");
    if (json_is_true(dig(o, "spec.unschedulable")))
        cb_add(&st, ",SchedulingDisabled");
    push(cells, json_string(st.s), bad);

    /* Roles come from node-role.kubernetes.io/<role> keys and the older kubernetes.io/role. */
    const json_t *labels = dig(o, "metadata.labels");
    const char *roles[64];
    size_t nroles = 0;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)labels, k, v)
    {
        const char *prefix = "node-role.kubernetes.io/";
        const char *role = NULL;
        if (!strncmp(k, prefix, strlen(prefix)) && k[strlen(prefix)])
            role = k + strlen(prefix);
        else if (!strcmp(k, "kubernetes.io/role") && json_string_value(v) && *json_string_value(v))
            role = json_string_value(v);
        if (role && nroles < sizeof roles / sizeof roles[0])
            roles[nroles++] = role;
    }
    qsort(roles, nroles, sizeof roles[0], cmp_str);
    cellbuf rb = {.len = 0};
    rb.s[0] = '\0';
    for (size_t j = 0; j < nroles; j++)
        if (!j || strcmp(roles[j], roles[j - 1]) != 0)
            cb_join(&rb, ",", roles[j]);
    push(cells, cb_or(&rb, "<none>"), bad);
    push(cells, age_cell(o, now_ns), bad);
    push(cells, str_or(dig_str(o, "status.nodeInfo.kubeletVersion"), ""), bad);
    push(cells, node_address(o, "InternalIP"), bad);
    push(cells, node_address(o, "ExternalIP"), bad);
    push(cells, str_or(dig_str(o, "status.nodeInfo.osImage"), "<unknown>"), bad);
    push(cells, str_or(dig_str(o, "status.nodeInfo.kernelVersion"), "<unknown>"), bad);
    push(cells, str_or(dig_str(o, "status.nodeInfo.containerRuntimeVersion"), "<unknown>"), bad);
}

static const coldef lease_cols[] = {
    {"Holder", "string", 0, "The holder of the lease"},
    AGE,
};

static void lease_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    push(cells, str_or(dig_str(o, "spec.holderIdentity"), ""), bad);
    push(cells, age_cell(o, now_ns), bad);
}

static const coldef crd_cols[] = {
    {"Created At", "date", 0, desc_age},
};

static void crd_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    /* The real server prints the timestamp itself here, not an age. */
    push(cells, str_or(dig_str(o, "metadata.creationTimestamp"), "<unknown>"), bad);
}

static const coldef default_cols[] = {AGE};

static void default_row(const json_t *o, json_t *cells, int64_t now_ns, bool *bad)
{
    push(cells, age_cell(o, now_ns), bad);
}

static const printer printers[] = {
    {"", "pods", COLS(pod_cols), pod_row},
    {"", "configmaps", COLS(cm_cols), cm_row},
    {"", "secrets", COLS(secret_cols), secret_row},
    {"", "services", COLS(svc_cols), svc_row},
    {"", "namespaces", COLS(ns_cols), ns_row},
    {"", "nodes", COLS(node_cols), node_row},
    {"apps", "deployments", COLS(deploy_cols), deploy_row},
    {"apps", "replicasets", COLS(rs_cols), rs_row},
    {"apps", "statefulsets", COLS(sts_cols), sts_row},
    {"apps", "daemonsets", COLS(ds_cols), ds_row},
    {"batch", "jobs", COLS(job_cols), job_row},
    {"batch", "cronjobs", COLS(cronjob_cols), cronjob_row},
    {"coordination.k8s.io", "leases", COLS(lease_cols), lease_row},
    {"apiextensions.k8s.io", "customresourcedefinitions", COLS(crd_cols), crd_row},
};

static const printer default_printer = {"", "", COLS(default_cols), default_row};

static json_t *coldef_json(const char *name, const char *type, const char *format,
                           json_int_t priority, const char *desc)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:I}", "name", name, "type", type ? type : "string",
                     "format", format ? format : "", "description", desc ? desc : "", "priority",
                     priority);
}

/* ---- the table ------------------------------------------------------------------- */

static json_t *row_object(const json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    return json_pack("{s:s, s:s, s:O}", "kind", "PartialObjectMetadata", "apiVersion",
                     "meta.k8s.io/v1", "metadata", meta ? meta : json_object());
}

json_t *fakeapi__table_new(const fakeapi__resource *r, json_t *items, const char *list_rv,
                           const char *cont, int64_t now_ns)
{
    if (!r || !json_is_array(items))
        return NULL;
    bool bad = false;
    const printer *pr = &default_printer;
    /* A CRD kind prints its declared columns; with none declared, Age alone. */
    const json_t *crd_cols_json = r->custom ? r->printer_columns : NULL;
    if (!r->custom) {
        for (size_t i = 0; i < sizeof printers / sizeof printers[0]; i++)
            if (!strcmp(printers[i].group, r->group) && !strcmp(printers[i].plural, r->plural))
                pr = &printers[i];
    }
    bool use_crd = json_array_size(crd_cols_json) > 0;

    json_t *defs = json_array();
    push(defs, coldef_json("Name", "string", "name", 0, desc_name), &bad);
    size_t i;
    const json_t *col;
    if (use_crd) {
        json_array_foreach(crd_cols_json, i, col)
        {
            const char *path = json_string_value(json_object_get(col, "jsonPath"));
            const char *desc = json_string_value(json_object_get(col, "description"));
            char dflt[1100];
            if (!desc || !*desc) {
                snprintf(dflt, sizeof dflt,
                         "Custom resource definition column (in JSONPath "
                         "format): %.1000s",
                         path ? path : "");
                desc = dflt;
            }
            push(defs,
                 coldef_json(json_string_value(json_object_get(col, "name")),
                             json_string_value(json_object_get(col, "type")),
                             json_string_value(json_object_get(col, "format")),
                             json_integer_value(json_object_get(col, "priority")), desc),
                 &bad);
        }
    } else if (r->custom) {
        push(defs, coldef_json("Age", "date", "", 0, desc_age), &bad);
    } else {
        for (size_t c = 0; c < pr->ncols; c++)
            push(defs,
                 coldef_json(pr->cols[c].name, pr->cols[c].type, "", pr->cols[c].priority,
                             pr->cols[c].desc),
                 &bad);
    }

    json_t *rows = json_array();
    const json_t *obj;
    json_array_foreach(items, i, obj)
    {
        json_t *cells = json_array();
        const char *name = dig_str(obj, "metadata.name");
        push(cells, json_string(name ? name : ""), &bad);
        if (use_crd) {
            size_t c;
            json_array_foreach(crd_cols_json, c, col) push(cells, crd_cell(obj, col, now_ns), &bad);
        } else if (r->custom) {
            push(cells, age_cell(obj, now_ns), &bad);
        } else {
            pr->row(obj, cells, now_ns, &bad);
        }
        push(rows, json_pack("{s:o, s:o}", "cells", cells, "object", row_object(obj)), &bad);
    }

    json_t *meta = json_object();
    if (list_rv)
        put(meta, "resourceVersion", json_string(list_rv), &bad);
    if (cont && *cont)
        put(meta, "continue", json_string(cont), &bad);
    json_t *table =
        json_pack("{s:s, s:s, s:o, s:o, s:o}", "kind", "Table", "apiVersion", "meta.k8s.io/v1",
                  "metadata", meta, "columnDefinitions", defs, "rows", rows);
    if (bad || !table) {
        json_decref(table);
        return NULL;
    }
    return table;
}

/* ---- content negotiation ------------------------------------------------------------ */

static bool span_ieq(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && !strncasecmp(s, lit, n);
}

/* Trim spaces and tabs around [*s, *s + *n). */
static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

bool fakeapi__table_wanted(const char *accept)
{
    const char *p = accept;
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *range = p;
        p = end ? end + 1 : NULL;

        size_t tlen = strcspn(range, ";");
        if (tlen > len)
            tlen = len;
        const char *type = range;
        size_t tl = tlen;
        trim(&type, &tl);
        bool json_like = span_ieq(type, tl, "application/json") || span_ieq(type, tl, "*/*") ||
                         span_ieq(type, tl, "application/*");
        const char *as = NULL, *g = NULL, *v = NULL;
        size_t asl = 0, gl = 0, vl = 0;
        const char *q = range + tlen;
        const char *rend = range + len;
        while (q < rend) {
            q++; /* the ';' */
            const char *pe = memchr(q, ';', (size_t)(rend - q));
            size_t plen = pe ? (size_t)(pe - q) : (size_t)(rend - q);
            const char *eq = memchr(q, '=', plen);
            if (eq) {
                const char *key = q, *val = eq + 1;
                size_t kl = (size_t)(eq - q), vll = plen - kl - 1;
                trim(&key, &kl);
                trim(&val, &vll);
                if (span_ieq(key, kl, "as")) {
                    as = val;
                    asl = vll;
                } else if (span_ieq(key, kl, "g")) {
                    g = val;
                    gl = vll;
                } else if (span_ieq(key, kl, "v")) {
                    v = val;
                    vl = vll;
                }
            }
            q += plen;
        }
        if (!json_like)
            continue; /* protobuf, yaml, ...: not served, look further */
        if (!as)
            return false; /* plain JSON comes first */
        if (asl == 5 && !strncmp(as, "Table", 5) && g && span_ieq(g, gl, "meta.k8s.io") &&
            (!v || span_ieq(v, vl, "v1")))
            return true;
        /* v1beta1 Tables and other "as=" kinds: not produced here. */
    }
    return false;
}
