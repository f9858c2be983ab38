/*
 * rollout.c - ReplicaSet and Deployment arithmetic (rollout.h).
 */
#include "rollout.h"

#include <stdlib.h>
#include <string.h>

#include "ctrl/object.h"
#include "podutil.h"

int kc__intstr_scaled(const json_t *v, int64_t total, bool round_up, int64_t *out)
{
    if (!v || json_is_null(v)) {
        *out = 0;
        return 0;
    }
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return 0;
    }
    const char *s = json_string_value(v);
    size_t n = s ? strlen(s) : 0;
    if (n < 2 || s[n - 1] != '%')
        return -1;
    char *end = NULL;
    long long pct = strtoll(s, &end, 10);
    if (end != s + n - 1)
        return -1;
    if (pct < 0 || total < 0)
        return -1;
    /* Non-negative, so integer division is floor. */
    int64_t x = (int64_t)pct * total;
    *out = round_up ? (x + 99) / 100 : x / 100;
    return 0;
}

int64_t kc__spec_replicas(const json_t *obj)
{
    return ctrl_obj_get_int(obj, "spec.replicas", 1);
}

bool kc__is_rolling(const json_t *d)
{
    const char *t = ctrl_obj_get_string(d, "spec.strategy.type");
    return !t || strcmp(t, "Recreate");
}

/* ResolveFenceposts. */
static int fenceposts(const json_t *d, int64_t *surge, int64_t *unavail)
{
    const json_t *ru = ctrl_obj_get(d, "spec.strategy.rollingUpdate");
    const json_t *ms = json_object_get(ru, "maxSurge"), *mu = json_object_get(ru, "maxUnavailable");
    json_t *quarter = json_string("25%");
    int64_t desired = kc__spec_replicas(d);
    int rc = kc__intstr_scaled(ms ? ms : quarter, desired, true, surge);
    if (rc == 0)
        rc = kc__intstr_scaled(mu ? mu : quarter, desired, false, unavail);
    json_decref(quarter);
    if (rc == 0 && *surge == 0 && *unavail == 0)
        *unavail = 1;
    return rc;
}

int64_t kc__max_surge(const json_t *d)
{
    if (!kc__is_rolling(d))
        return 0;
    int64_t s, u;
    return fenceposts(d, &s, &u) < 0 ? -1 : s;
}

int64_t kc__max_unavailable(const json_t *d)
{
    int64_t want = kc__spec_replicas(d);
    if (!kc__is_rolling(d) || want == 0)
        return 0;
    int64_t s, u;
    if (fenceposts(d, &s, &u) < 0)
        return -1;
    return u > want ? want : u;
}

int64_t kc__sum_spec(const json_t *rss)
{
    int64_t n = 0;
    size_t i;
    json_t *rs;
    json_array_foreach(rss, i, rs)
    {
        if (json_is_object(rs))
            n += ctrl_obj_get_int(rs, "spec.replicas", 1);
    }
    return n;
}

int64_t kc__sum_status(const json_t *rss, const char *field)
{
    int64_t n = 0;
    size_t i;
    json_t *rs;
    json_array_foreach(rss, i, rs)
    {
        json_t *st = json_object_get(rs, "status");
        if (json_is_object(rs))
            n += json_integer_value(json_object_get(st, field));
    }
    return n;
}

int64_t kc__new_rs_new_replicas(const json_t *d, const json_t *all_rss, const json_t *new_rs)
{
    int64_t want = kc__spec_replicas(d);
    int64_t cur = ctrl_obj_get_int(new_rs, "spec.replicas", 1);
    if (!kc__is_rolling(d))
        return want;
    int64_t surge;
    const json_t *ms = ctrl_obj_get(d, "spec.strategy.rollingUpdate.maxSurge");
    json_t *quarter = json_string("25%");
    int rc = kc__intstr_scaled(ms ? ms : quarter, want, true, &surge);
    json_decref(quarter);
    if (rc < 0)
        return -1;
    int64_t pods = kc__sum_spec(all_rss), max_total = want + surge;
    if (pods >= max_total)
        return cur;
    int64_t up = max_total - pods;
    if (up > want - cur)
        up = want - cur;
    return cur + up;
}

static bool ann_int(const json_t *obj, const char *key, int64_t *out)
{
    const char *s = ctrl_obj_annotation(obj, key);
    char *end = NULL;
    if (!s || !*s)
        return false;
    long long v = strtoll(s, &end, 10);
    if (*end)
        return false;
    *out = v;
    return true;
}

/* getReplicaSetFraction. */
static int64_t fraction(const json_t *rs, const json_t *d)
{
    int64_t want = kc__spec_replicas(d), size = ctrl_obj_get_int(rs, "spec.replicas", 1);
    if (want == 0)
        return -size;
    int64_t surge = kc__max_surge(d);
    int64_t total = want + (surge > 0 ? surge : 0), annotated;
    if (!ann_int(rs, KC_MAX_ANN, &annotated))
        annotated = ctrl_obj_get_int(d, "status.replicas", 0);
    if (annotated <= 0 || size < 0)
        return 0;
    /* math.Round of a non-negative quotient: halves away from zero. */
    return (2 * size * total + annotated) / (2 * annotated) - size;
}

int64_t kc__proportion(const json_t *rs, const json_t *d, int64_t to_add, int64_t added)
{
    if (!rs || ctrl_obj_get_int(rs, "spec.replicas", 1) == 0 || to_add == 0 || to_add == added)
        return 0;
    int64_t f = fraction(rs, d), allowed = to_add - added;
    if (to_add > 0)
        return f < allowed ? f : allowed;
    return f > allowed ? f : allowed;
}

int64_t kc__revision(const json_t *obj)
{
    int64_t v;
    return ann_int(obj, KC_REVISION_ANN, &v) ? v : 0;
}

/* Do objects a and b have the same members, skip aside? (Both objects.) */
static bool equal_but(const json_t *a, const json_t *b, const char *skip)
{
    size_t na = json_object_size(a) - (json_object_get(a, skip) ? 1 : 0);
    size_t nb = json_object_size(b) - (json_object_get(b, skip) ? 1 : 0);
    if (na != nb)
        return false;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)a, k, v)
    {
        if (strcmp(k, skip) && !json_equal(v, json_object_get(b, k)))
            return false;
    }
    return true;
}

/* A template's labels as they are without the hash label: NULL when none
 * other are left (the template then counts as having no labels at all). */
static const json_t *hashless(const json_t *labels)
{
    if (json_is_object(labels) &&
        json_object_size(labels) == (json_object_get(labels, KC_HASH_LABEL) ? 1u : 0u))
        return NULL;
    return labels;
}

/* The templates equal once the hash label is taken out of each: compared
 * in place, member by member (a copy of each cost a deep copy a pass). */
bool kc__templates_equal(const json_t *a, const json_t *b)
{
    if (!json_is_object(a) || !json_is_object(b))
        return json_equal(a, b);
    if (!equal_but(a, b, "metadata"))
        return false;
    const json_t *ma = json_object_get(a, "metadata"), *mb = json_object_get(b, "metadata");
    if (!json_is_object(ma) || !json_is_object(mb))
        return ma == mb || json_equal(ma, mb);
    if (!equal_but(ma, mb, "labels"))
        return false;
    const json_t *la = hashless(json_object_get(ma, "labels"));
    const json_t *lb = hashless(json_object_get(mb, "labels"));
    if (!la || !lb)
        return la == lb;
    if (!json_is_object(la) || !json_is_object(lb))
        return json_equal(la, lb);
    return equal_but(la, lb, KC_HASH_LABEL);
}

int kc__cmp_oldest(const json_t *a, const json_t *b)
{
    int64_t ta = kc__parse_time(ctrl_obj_meta(a, "creationTimestamp"));
    int64_t tb = kc__parse_time(ctrl_obj_meta(b, "creationTimestamp"));
    if (ta != tb)
        return ta < tb ? -1 : 1;
    const char *na = ctrl_obj_name(a), *nb = ctrl_obj_name(b);
    return strcmp(na ? na : "", nb ? nb : "");
}

/* ---- victims ---- */

typedef struct ranked {
    const json_t *pod;
    const char *node;
    int phase;
    bool ready;
    int64_t cost;
    long rank;
    int64_t ready_at; /* 0 = unknown */
    int64_t restarts;
    int64_t created; /* 0 = unknown */
} ranked;

static int phase_ordinal(const json_t *pod)
{
    const char *p = kc__pod_phase(pod);
    if (!strcmp(p, "Unknown"))
        return 1;
    if (!strcmp(p, "Running"))
        return 2;
    return 0;
}

static int64_t max_restarts(const json_t *pod)
{
    int64_t m = 0;
    size_t i;
    json_t *cs;
    json_array_foreach(ctrl_obj_get(pod, "status.containerStatuses"), i, cs)
    {
        int64_t r = json_integer_value(json_object_get(cs, "restartCount"));
        if (r > m)
            m = r;
    }
    return m;
}

static int64_t time_or_zero(const char *s)
{
    int64_t t = s ? kc__parse_time(s) : -1;
    return t < 0 ? 0 : t;
}

/* afterOrZero(a, b) as a comparison: a first when it is zero or later. */
static int after_or_zero(int64_t a, int64_t b)
{
    if (a == b)
        return 0;
    if (a == 0 || b == 0)
        return a == 0 ? -1 : 1;
    return a > b ? -1 : 1;
}

static int cmp_victims(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (strcmp(a->node, b->node) && (!*a->node || !*b->node))
        return !*a->node ? -1 : 1;
    if (a->phase != b->phase)
        return a->phase < b->phase ? -1 : 1;
    if (a->ready != b->ready)
        return !a->ready ? -1 : 1;
    if (a->cost != b->cost)
        return a->cost < b->cost ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank > b->rank ? -1 : 1;
    if (a->ready && b->ready) {
        int c = after_or_zero(a->ready_at, b->ready_at);
        if (c)
            return c;
    }
    if (a->restarts != b->restarts)
        return a->restarts > b->restarts ? -1 : 1;
    int c = after_or_zero(a->created, b->created);
    if (c)
        return c;
    const char *na = ctrl_obj_name(a->pod), *nb = ctrl_obj_name(b->pod);
    return strcmp(na ? na : "", nb ? nb : "");
}

void kc__sort_victims(const json_t **pods, size_t n, const json_t *related)
{
    ranked *r = n ? calloc(n, sizeof *r) : NULL;
    if (!r)
        return;
    for (size_t i = 0; i < n; i++) {
        const json_t *p = pods[i];
        const char *node = ctrl_obj_get_string(p, "spec.nodeName");
        r[i].pod = p;
        r[i].node = node ? node : "";
        r[i].phase = phase_ordinal(p);
        r[i].ready = kc__pod_ready(p);
        const char *cost = ctrl_obj_annotation(p, "controller.kubernetes.io/pod-deletion-cost");
        r[i].cost = cost ? strtoll(cost, NULL, 10) : 0;
        size_t j;
        json_t *q;
        json_array_foreach(related, j, q)
        {
            const char *qn = ctrl_obj_get_string(q, "spec.nodeName");
            if (kc__pod_active(q) && !strcmp(qn ? qn : "", r[i].node))
                r[i].rank++;
        }
        r[i].ready_at = time_or_zero(
            json_string_value(json_object_get(kc__condition(p, "Ready"), "lastTransitionTime")));
        r[i].restarts = max_restarts(p);
        r[i].created = time_or_zero(ctrl_obj_meta(p, "creationTimestamp"));
    }
    qsort(r, n, sizeof *r, cmp_victims);
    for (size_t i = 0; i < n; i++)
        pods[i] = r[i].pod;
    free(r);
}
