/*
 * schedfit.c - the scheduler's pure parts (scheduler.h): quantities,
 * requests, filters, score and the FitError message, following the default
 * profile of kube-scheduler's plugins of the same names.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/object.h"
#include "nodes.h"
#include "podutil.h"
#include "scheduler.h"

#define NZ_CPU_M 100
#define NZ_MEM (200LL * 1024 * 1024)

/* ---- quantities ---- */

bool kc__quantity_milli(const char *s, int64_t *out)
{
    static const struct {
        const char *sfx;
        long double mult;
    } sfx[] = {
        {"Ki", 1024.0L},
        {"Mi", 1048576.0L},
        {"Gi", 1073741824.0L},
        {"Ti", 1099511627776.0L},
        {"Pi", 1125899906842624.0L},
        {"Ei", 1152921504606846976.0L},
        {"n", 1e-9L},
        {"u", 1e-6L},
        {"m", 1e-3L},
        {"k", 1e3L},
        {"M", 1e6L},
        {"G", 1e9L},
        {"T", 1e12L},
        {"P", 1e15L},
        {"E", 1e18L},
        {"", 1.0L},
    };
    if (!s)
        return false;
    const char *p = s;
    char num[64];
    size_t n = 0;
    if (*p == '+' || *p == '-')
        num[n++] = *p++;
    size_t digits = 0;
    while (n < sizeof num - 8 && (isdigit((unsigned char)*p) || *p == '.')) {
        digits += isdigit((unsigned char)*p) != 0;
        num[n++] = *p++;
    }
    if (!digits || n >= sizeof num - 8)
        return false;
    if ((*p == 'e' || *p == 'E') &&
        (isdigit((unsigned char)p[1]) ||
         ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
        num[n++] = *p++;
        if (*p == '+' || *p == '-')
            num[n++] = *p++;
        while (n < sizeof num - 1 && isdigit((unsigned char)*p))
            num[n++] = *p++;
    }
    num[n] = 0;
    char *end;
    long double v = strtold(num, &end);
    if (*end)
        return false;
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        if (strcmp(p, sfx[i].sfx))
            continue;
        long double m = ceill(v * sfx[i].mult * 1000.0L - 1e-6L);
        if (m >= 9.2e18L)
            *out = INT64_MAX;
        else if (m <= -9.2e18L)
            *out = INT64_MIN;
        else
            *out = (int64_t)m;
        return true;
    }
    return false;
}

static int64_t milli_of(const json_t *map, const char *key)
{
    const json_t *v = json_object_get(map, key);
    int64_t m = 0;
    if (json_is_integer(v))
        return json_integer_value(v) * 1000;
    return kc__quantity_milli(json_string_value(v), &m) ? m : 0;
}

/* Bytes and counts: thousandths rounded up to whole units. */
static int64_t units_of(const json_t *map, const char *key)
{
    int64_t m = milli_of(map, key);
    return m / 1000 + (m % 1000 > 0);
}

/* ---- requests ---- */

static void container_requests(const json_t *c, kc_sched_res *r)
{
    const json_t *req = json_object_get(json_object_get(c, "resources"), "requests");
    /* Limits stand in for missing requests (the API server defaults them). */
    const json_t *lim = json_object_get(json_object_get(c, "resources"), "limits");
    memset(r, 0, sizeof *r);
    r->cpu_m = json_object_get(req, "cpu") ? milli_of(req, "cpu") : milli_of(lim, "cpu");
    r->mem = json_object_get(req, "memory") ? units_of(req, "memory") : units_of(lim, "memory");
    r->cpu_m_nz = r->cpu_m ? r->cpu_m : NZ_CPU_M;
    r->mem_nz = r->mem ? r->mem : NZ_MEM;
}

void kc__pod_requests(const json_t *pod, kc_sched_res *out)
{
    const json_t *spec = json_object_get(pod, "spec");
    kc_sched_res sum = {0}, c;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(spec, "containers"), i, x)
    {
        container_requests(x, &c);
        sum.cpu_m += c.cpu_m;
        sum.mem += c.mem;
        sum.cpu_m_nz += c.cpu_m_nz;
        sum.mem_nz += c.mem_nz;
    }
    json_array_foreach(json_object_get(spec, "initContainers"), i, x)
    {
        container_requests(x, &c);
        if (c.cpu_m > sum.cpu_m)
            sum.cpu_m = c.cpu_m;
        if (c.mem > sum.mem)
            sum.mem = c.mem;
        if (c.cpu_m_nz > sum.cpu_m_nz)
            sum.cpu_m_nz = c.cpu_m_nz;
        if (c.mem_nz > sum.mem_nz)
            sum.mem_nz = c.mem_nz;
    }
    const json_t *oh = json_object_get(spec, "overhead");
    sum.cpu_m += milli_of(oh, "cpu");
    sum.mem += units_of(oh, "memory");
    sum.cpu_m_nz += milli_of(oh, "cpu");
    sum.mem_nz += units_of(oh, "memory");
    sum.pods = 1;
    *out = sum;
}

void kc__node_allocatable(const json_t *node, kc_sched_res *out)
{
    const json_t *a = json_object_get(json_object_get(node, "status"), "allocatable");
    memset(out, 0, sizeof *out);
    out->cpu_m = out->cpu_m_nz = milli_of(a, "cpu");
    out->mem = out->mem_nz = units_of(a, "memory");
    out->pods = units_of(a, "pods");
}

/* ---- taints and tolerations ---- */

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

bool kc__tolerates(const json_t *tol, const json_t *taint)
{
    const char *eff = str(tol, "effect"), *key = str(tol, "key"), *op = str(tol, "operator");
    if (*eff && strcmp(eff, str(taint, "effect")))
        return false;
    if (*key && strcmp(key, str(taint, "key")))
        return false;
    if (!strcmp(op, "Exists"))
        return true;
    if (!*op || !strcmp(op, "Equal"))
        return !strcmp(str(tol, "value"), str(taint, "value"));
    return false;
}

static bool tolerated(const json_t *pod, const json_t *taint)
{
    size_t i;
    json_t *t;
    json_array_foreach(ctrl_obj_get(pod, "spec.tolerations"), i, t)
    {
        if (kc__tolerates(t, taint))
            return true;
    }
    return false;
}

/* The first NoSchedule/NoExecute taint of node the pod does not tolerate,
 * counting a not-Ready node's condition taint (a new object), or NULL. */
static json_t *untolerated_taint(const json_t *pod, const json_t *node)
{
    const char *ready = kc__node_ready_status(node);
    const char *cond_key = !strcmp(ready, "True")    ? NULL
                           : !strcmp(ready, "False") ? "node.kubernetes.io/not-ready"
                                                     : "node.kubernetes.io/unreachable";
    size_t i;
    json_t *t;
    json_array_foreach(ctrl_obj_get(node, "spec.taints"), i, t)
    {
        const char *eff = str(t, "effect");
        if (strcmp(eff, "NoSchedule") && strcmp(eff, "NoExecute"))
            continue;
        if (!tolerated(pod, t))
            return json_incref(t);
    }
    if (cond_key) {
        json_t *synth = json_pack("{s:s, s:s}", "key", cond_key, "effect", "NoSchedule");
        if (synth && !tolerated(pod, synth))
            return synth;
        json_decref(synth);
    }
    return NULL;
}

/* ---- node affinity ---- */

static bool in_list(const json_t *values, const char *v)
{
    size_t i;
    json_t *x;
    json_array_foreach(values, i, x)
    {
        if (v && json_is_string(x) && !strcmp(json_string_value(x), v))
            return true;
    }
    return false;
}

static bool requirement(const json_t *e, const char *have)
{
    const char *op = str(e, "operator");
    const json_t *values = json_object_get(e, "values");
    if (!strcmp(op, "In"))
        return have && in_list(values, have);
    if (!strcmp(op, "NotIn"))
        return !have || !in_list(values, have);
    if (!strcmp(op, "Exists"))
        return have != NULL;
    if (!strcmp(op, "DoesNotExist"))
        return have == NULL;
    if (!strcmp(op, "Gt") || !strcmp(op, "Lt")) {
        const char *want = json_string_value(json_array_get(values, 0));
        char *e1, *e2;
        if (!have || !want)
            return false;
        long long h = strtoll(have, &e1, 10), w = strtoll(want, &e2, 10);
        if (*e1 || *e2)
            return false;
        return op[0] == 'G' ? h > w : h < w;
    }
    return false;
}

static bool term_matches(const json_t *term, const json_t *node)
{
    const json_t *exprs = json_object_get(term, "matchExpressions");
    const json_t *fields = json_object_get(term, "matchFields");
    if (json_array_size(exprs) + json_array_size(fields) == 0)
        return false; /* an empty term matches nothing */
    const json_t *labels = ctrl_obj_get(node, "metadata.labels");
    size_t i;
    json_t *e;
    json_array_foreach(exprs, i, e)
    {
        if (!requirement(e, json_string_value(json_object_get(labels, str(e, "key")))))
            return false;
    }
    json_array_foreach(fields, i, e)
    {
        if (strcmp(str(e, "key"), "metadata.name") || !requirement(e, ctrl_obj_name(node)))
            return false;
    }
    return true;
}

bool kc__node_affinity_matches(const json_t *pod, const json_t *node)
{
    const json_t *sel = ctrl_obj_get(pod, "spec.nodeSelector");
    if (sel && !kc__map_matches(sel, ctrl_obj_get(node, "metadata.labels")))
        return false;
    const json_t *req = ctrl_obj_get(pod, "spec.affinity");
    req = json_object_get(json_object_get(req, "nodeAffinity"),
                          "requiredDuringSchedulingIgnoredDuringExecution");
    if (!req)
        return true;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(req, "nodeSelectorTerms"), i, t)
    {
        if (term_matches(t, node))
            return true;
    }
    return false;
}

/* ---- filter and score ---- */

int kc__sched_filter(const json_t *pod, const json_t *node, const kc_sched_res *used,
                     json_t *reasons, bool *unresolvable)
{
    *unresolvable = false;
    /* NodeUnschedulable */
    if (ctrl_obj_get_bool(node, "spec.unschedulable", false)) {
        json_t *t = json_pack("{s:s, s:s}", "key", "node.kubernetes.io/unschedulable", "effect",
                              "NoSchedule");
        bool ok = t && tolerated(pod, t);
        json_decref(t);
        if (!ok) {
            json_array_append_new(reasons, json_string("node(s) were unschedulable"));
            *unresolvable = true;
            return 1;
        }
    }
    /* TaintToleration */
    json_t *taint = untolerated_taint(pod, node);
    if (taint) {
        char msg[600];
        snprintf(msg, sizeof msg, "node(s) had untolerated taint {%s: %s}", str(taint, "key"),
                 str(taint, "value"));
        json_decref(taint);
        json_array_append_new(reasons, json_string(msg));
        *unresolvable = true;
        return 1;
    }
    /* NodeAffinity */
    if (!kc__node_affinity_matches(pod, node)) {
        json_array_append_new(reasons,
                              json_string("node(s) didn't match Pod's node affinity/selector"));
        *unresolvable = true;
        return 1;
    }
    /* NodeResourcesFit */
    kc_sched_res want, alloc;
    kc__pod_requests(pod, &want);
    kc__node_allocatable(node, &alloc);
    size_t before = json_array_size(reasons);
    if (used->pods + 1 > alloc.pods)
        json_array_append_new(reasons, json_string("Too many pods"));
    if (want.cpu_m > 0 && want.cpu_m > alloc.cpu_m - used->cpu_m)
        json_array_append_new(reasons, json_string("Insufficient cpu"));
    if (want.mem > 0 && want.mem > alloc.mem - used->mem)
        json_array_append_new(reasons, json_string("Insufficient memory"));
    return json_array_size(reasons) > before;
}

static int64_t least_allocated(int64_t requested, int64_t capacity)
{
    if (capacity <= 0 || requested > capacity)
        return 0;
    return (capacity - requested) * 100 / capacity;
}

int64_t kc__sched_score(const json_t *pod, const json_t *node, const kc_sched_res *used)
{
    kc_sched_res want, alloc;
    kc__pod_requests(pod, &want);
    kc__node_allocatable(node, &alloc);
    int64_t cpu = least_allocated(used->cpu_m_nz + want.cpu_m_nz, alloc.cpu_m);
    int64_t mem = least_allocated(used->mem_nz + want.mem_nz, alloc.mem);
    return (cpu + mem) / 2;
}

/* ---- pod anti-affinity ---- */

const json_t *kc__anti_affinity_terms(const json_t *pod)
{
    const json_t *t = ctrl_obj_get(pod, "spec.affinity.podAntiAffinity");
    t = json_object_get(t, "requiredDuringSchedulingIgnoredDuringExecution");
    return json_array_size(t) ? t : NULL;
}

bool kc__term_selects(const json_t *term, const char *owner_ns, const char *ns,
                      const json_t *labels)
{
    const json_t *nss = json_object_get(term, "namespaces");
    const json_t *nsel = json_object_get(term, "namespaceSelector");
    bool all = json_is_object(nsel) && json_object_size(nsel) == 0;
    if (!all) {
        bool in = false;
        size_t i;
        json_t *x;
        json_array_foreach(nss, i, x)
        {
            in |= ns && json_is_string(x) && !strcmp(json_string_value(x), ns);
        }
        if (!json_array_size(nss))
            in = ns && owner_ns && !strcmp(ns, owner_ns);
        if (!in)
            return false;
    }
    return kc__selector_matches(json_object_get(term, "labelSelector"), labels) == 1;
}

/* ---- the message ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "N reason" strings of hist, sorted (Go's sort.Strings), joined with ", ". */
static bool histogram(const json_t *hist, char *buf, size_t len)
{
    size_t n = json_object_size(hist), k = 0, used = 0;
    char **items = calloc(n ? n : 1, sizeof *items);
    if (!items)
        return false;
    const char *key;
    json_t *v;
    bool ok = true;
    json_object_foreach((json_t *)hist, key, v)
    {
        size_t l = strlen(key) + 24;
        items[k] = malloc(l);
        if (!items[k]) {
            ok = false;
            break;
        }
        snprintf(items[k++], l, "%lld %s", (long long)json_integer_value(v), key);
    }
    if (ok)
        qsort(items, k, sizeof *items, cmp_str);
    buf[0] = 0;
    for (size_t i = 0; ok && i < k; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", items[i]);
        if (w < 0 || (size_t)w >= len - used)
            break; /* truncated: still a message */
        used += (size_t)w;
    }
    for (size_t i = 0; i < k; i++)
        free(items[i]);
    free(items);
    return ok;
}

char *kc__sched_message(size_t n_nodes, const json_t *reasons, const json_t *preempt)
{
    enum { CAP = 8192 };
    char *out = malloc(CAP), *a = malloc(CAP / 2), *b = malloc(CAP / 2);
    if (!out || !a || !b || !histogram(reasons, a, CAP / 2) || !histogram(preempt, b, CAP / 2)) {
        free(out);
        free(a);
        free(b);
        return NULL;
    }
    int w = snprintf(out, CAP, "0/%zu nodes are available:", n_nodes);
    if (*a)
        w += snprintf(out + w, CAP - (size_t)w, " %s.", a);
    if (*b && w < CAP)
        snprintf(out + w, CAP - (size_t)w, " preemption: 0/%zu nodes are available: %s..", n_nodes,
                 b);
    free(a);
    free(b);
    return out;
}
