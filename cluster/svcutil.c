/*
 * svcutil.c - Service selection, endpoint eligibility, FindPort and the
 * trigger-time tracker (svcutil.h).
 */
#include "svcutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/cache.h"
#include "ctrl/object.h"
#include "podutil.h"

bool kc__svc_has_selector(const json_t *svc)
{
    const json_t *sel = ctrl_obj_get(svc, "spec.selector");
    return json_is_object(sel) && json_object_size(sel) > 0;
}

bool kc__svc_headless(const json_t *svc)
{
    const char *ip = ctrl_obj_get_string(svc, "spec.clusterIP");
    return ip && !strcmp(ip, "None");
}

bool kc__svc_selects(const json_t *svc, const json_t *pod)
{
    const char *a = ctrl_obj_namespace(svc), *b = ctrl_obj_namespace(pod);
    if (!kc__svc_has_selector(svc) || !a || !b || strcmp(a, b))
        return false;
    return kc__map_matches(ctrl_obj_get(svc, "spec.selector"),
                           ctrl_obj_get(pod, "metadata.labels"));
}

json_t *kc__svc_map_pod(const json_t *pod, void *user)
{
    ctrl_informer *inf = user;
    json_t *out = json_array(), *svcs = NULL;
    const char *ns = ctrl_obj_namespace(pod);
    if (!out || !ns || ctrl_informer_list(inf, ns, NULL, &svcs) < 0)
        return out;
    size_t i;
    json_t *svc;
    json_array_foreach(svcs, i, svc)
    {
        if (kc__svc_selects(svc, pod))
            json_array_append_new(
                out, json_pack("{s:s, s:s}", "namespace", ns, "name", ctrl_obj_name(svc)));
    }
    json_decref(svcs);
    return out;
}

/* A label key or value that can go into a selector string as it is. */
static bool plain_token(const char *s)
{
    return s && *s &&
           strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./") ==
               strlen(s);
}

int kc__svc_pods(void *pod_informer, const json_t *svc, json_t **out)
{
    enum { CAP = 4096 };
    char sel[CAP];
    size_t n = 0;
    const char *k;
    json_t *v;
    /* The selector as a label selector string, so the cache hands out only
     * the matching pods; anything unusual lists them all (and filters). */
    json_object_foreach(ctrl_obj_get(svc, "spec.selector"), k, v)
    {
        const char *val = json_string_value(v);
        int w = plain_token(k) && plain_token(val) && n < CAP
                    ? snprintf(sel + n, CAP - n, "%s%s=%s", n ? "," : "", k, val)
                    : -1;
        if (w < 0 || (size_t)w >= CAP - n) {
            n = 0;
            break;
        }
        n += (size_t)w;
    }
    sel[n] = 0;
    json_t *all = NULL, *mine = json_array();
    int rc = mine ? ctrl_informer_list(pod_informer, ctrl_obj_namespace(svc), n ? sel : NULL, &all)
                  : CTRL_ERR_NOMEM;
    if (rc < 0) {
        json_decref(mine);
        return rc;
    }
    size_t i;
    json_t *pod;
    json_array_foreach(all, i, pod)
    {
        if (kc__svc_selects(svc, pod))
            json_array_append(mine, pod);
    }
    json_decref(all);
    *out = mine;
    return 0;
}

const char *kc__pod_ip(const json_t *pod)
{
    const char *ip = ctrl_obj_get_string(pod, "status.podIP");
    if (ip && *ip)
        return ip;
    ip = json_string_value(
        json_object_get(json_array_get(ctrl_obj_get(pod, "status.podIPs"), 0), "ip"));
    return ip && *ip ? ip : NULL;
}

bool kc__pod_in_endpoints(const json_t *pod, bool include_terminating)
{
    const char *phase = kc__pod_phase(pod);
    if (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
        return false;
    if (!kc__pod_ip(pod))
        return false;
    return include_terminating || !ctrl_obj_deleting(pod);
}

bool kc__pod_hostname_for(const json_t *pod, const json_t *svc)
{
    const char *host = ctrl_obj_get_string(pod, "spec.hostname");
    const char *sub = ctrl_obj_get_string(pod, "spec.subdomain");
    const char *name = ctrl_obj_name(svc), *a = ctrl_obj_namespace(pod),
               *b = ctrl_obj_namespace(svc);
    return host && *host && sub && name && !strcmp(sub, name) && a && b && !strcmp(a, b);
}

/* A container's port named name with protocol proto; 0 when none. */
static int64_t named_port(const json_t *containers, const char *name, const char *proto,
                          bool sidecars_only)
{
    size_t i, j;
    json_t *c, *p;
    json_array_foreach(containers, i, c)
    {
        if (sidecars_only) {
            const char *rp = json_string_value(json_object_get(c, "restartPolicy"));
            if (!rp || strcmp(rp, "Always"))
                continue;
        }
        json_array_foreach(json_object_get(c, "ports"), j, p)
        {
            const char *pn = json_string_value(json_object_get(p, "name"));
            const char *pp = json_string_value(json_object_get(p, "protocol"));
            if (pn && !strcmp(pn, name) && !strcmp(pp ? pp : "TCP", proto))
                return json_integer_value(json_object_get(p, "containerPort"));
        }
    }
    return 0;
}

int kc__find_port(const json_t *pod, const json_t *svc_port, int64_t *out)
{
    const json_t *tp = json_object_get(svc_port, "targetPort");
    if (!tp || json_is_null(tp)) {
        *out = json_integer_value(json_object_get(svc_port, "port"));
        return *out > 0 ? 0 : -1;
    }
    if (json_is_integer(tp)) {
        *out = json_integer_value(tp);
        return 0;
    }
    const char *name = json_string_value(tp);
    if (!name)
        return -1;
    const char *proto = json_string_value(json_object_get(svc_port, "protocol"));
    if (!proto)
        proto = "TCP";
    int64_t n = named_port(ctrl_obj_get(pod, "spec.containers"), name, proto, false);
    if (!n)
        n = named_port(ctrl_obj_get(pod, "spec.initContainers"), name, proto, true);
    if (n <= 0)
        return -1;
    *out = n;
    return 0;
}

/* ---- the trigger-time tracker ---- */

struct kc_trigger {
    pthread_mutex_t mu;
    json_t *state; /* key -> {"svc": ns, "pods": {name: ns}} */
};

kc_trigger *kc__trigger_new(void)
{
    kc_trigger *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->state = json_object();
    if (!t->state) {
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

void kc__trigger_free(kc_trigger *t)
{
    if (!t)
        return;
    json_decref(t->state);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

static int64_t time_field(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? kc__parse_time(s) : -1;
}

int64_t kc__trigger_compute(kc_trigger *t, const char *key, const json_t *svc, const json_t *pods)
{
    int64_t min = -1;
    json_t *now_pods = json_object();
    if (!now_pods)
        return -1;
    pthread_mutex_lock(&t->mu);
    json_t *st = json_object_get(t->state, key);
    json_t *was = json_object_get(st, "pods");
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        int64_t tt = time_field(kc__condition(pod, "Ready"), "lastTransitionTime");
        const char *name = ctrl_obj_name(pod);
        if (tt < 0 || !name)
            continue;
        json_object_set_new(now_pods, name, json_integer(tt));
        json_t *prev = json_object_get(was, name);
        if (!prev || tt > json_integer_value(prev))
            min = min < 0 || tt < min ? tt : min;
    }
    const char *ct = ctrl_obj_meta(svc, "creationTimestamp");
    int64_t stt = ct ? kc__parse_time(ct) : -1;
    json_t *prev_svc = json_object_get(st, "svc");
    if (stt >= 0 && (!prev_svc || stt > json_integer_value(prev_svc)))
        min = min < 0 || stt < min ? stt : min;
    json_object_set_new(t->state, key,
                        json_pack("{s:I, s:o}", "svc", (json_int_t)stt, "pods", now_pods));
    pthread_mutex_unlock(&t->mu);
    return min;
}

void kc__trigger_delete(kc_trigger *t, const char *key)
{
    pthread_mutex_lock(&t->mu);
    json_object_del(t->state, key);
    pthread_mutex_unlock(&t->mu);
}
