/*
 * workloads.h - what the ReplicaSet and Deployment integration tests share:
 * an in-process fakeapi with libcluster's controllers running against it
 * (kc_cluster_start, no nodes), objects applied and read through fakeapi's
 * C API, a stand-in kubelet (pods marked Running and Ready through
 * pods/status, as the test decides), and polls with a bound.
 *
 * Set KH_TEST_LOG=1 to see the cluster's log lines.
 */
#ifndef KC_TEST_WORKLOADS_H
#define KC_TEST_WORKLOADS_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakeapi/fakeapi.h"
#include "kc/cluster.h"

#define WAIT_MS 15000

static fakeapi_server *api;
static kc_cluster *cl;

static inline void wl_log_sink(const char *line, void *user)
{
    (void)user;
    if (getenv("KH_TEST_LOG"))
        fprintf(stderr, "%s\n", line);
}

static inline void wl_up(const char *doc_json)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){.seed = 11}, &api), 0);
    json_error_t je;
    json_t *doc = json_loads(doc_json, 0, &je);
    cr_assert(doc, "%s", je.text);
    kc_config *cfg = NULL;
    char err[512] = "";
    cr_assert_eq(kc_config_new(doc, NULL, &cfg, err, sizeof err), 0, "%s", err);
    json_decref(doc);
    kc_cluster_options o = {.config = cfg, .log_sink = wl_log_sink};
    int rc = kc_cluster_start(fakeapi_url(api), &o, &cl, err, sizeof err);
    kc_config_free(cfg);
    cr_assert_eq(rc, 0, "kc_cluster_start: %s", err);
}

static inline void wl_down(void)
{
    kc_cluster_stop(cl);
    cl = NULL;
    fakeapi_stop(api);
    api = NULL;
}

static inline void wl_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline int64_t wl_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Poll expr every 10 ms for up to WAIT_MS; true once it holds. */
#define WL_WAIT(expr)                                                                              \
    __extension__({                                                                                \
        int64_t wl_t0_ = wl_mono_ms();                                                             \
        bool wl_ok_ = false;                                                                       \
        while (!(wl_ok_ = (expr)) && wl_mono_ms() - wl_t0_ < WAIT_MS)                              \
            wl_sleep_ms(10);                                                                       \
        wl_ok_;                                                                                    \
    })

static inline void wl_apply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void wl_apply(const char *fmt, ...)
{
    char text[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fakeapi_error err = {0};
    int rc = fakeapi_apply(api, text, strlen(text), &err);
    cr_assert_eq(rc, 0, "apply: %s\n%s", err.message, text);
}

/* A request in-process; the HTTP status. *out (may be NULL) the answer. */
static inline int wl_request(const char *method, const char *path, const char *ctype,
                             const char *body, json_t **out)
{
    int status = 0;
    json_t *ans = NULL;
    cr_assert_eq(fakeapi_request(api, method, path, ctype, body, &status, &ans), 0);
    if (out)
        *out = ans;
    else
        json_decref(ans);
    return status;
}

static inline int wl_merge(const char *path, const char *body)
{
    return wl_request("PATCH", path, "application/merge-patch+json", body, NULL);
}

/* Objects of a kind in "default" matching sel (NULL = all): a new array. */
static inline json_t *wl_list(const char *api_version, const char *kind, const char *sel)
{
    json_t *out = NULL;
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_list(api, api_version, kind, "default", sel, &out, &err), 0, "%s",
                 err.message);
    return out;
}

static inline size_t wl_count(const char *api_version, const char *kind, const char *sel)
{
    json_t *l = wl_list(api_version, kind, sel);
    size_t n = json_array_size(l);
    json_decref(l);
    return n;
}

/* One object in "default", or NULL. */
static inline json_t *wl_get(const char *api_version, const char *kind, const char *name)
{
    json_t *out = NULL;
    if (fakeapi_get(api, api_version, kind, "default", name, &out, NULL) != 0)
        return NULL;
    return out;
}

/* The integer at a dotted path of an object (def when missing). */
static inline long long wl_int(const json_t *obj, const char *path, long long def)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const json_t *v = obj;
    for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && v;
         tok = strtok_r(NULL, ".", &save))
        v = json_object_get(v, tok);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

static inline const char *wl_str(const json_t *obj, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const json_t *v = obj;
    for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && v;
         tok = strtok_r(NULL, ".", &save))
        v = json_object_get(v, tok);
    return json_string_value(v);
}

static inline const char *wl_ann(const json_t *obj, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"), key));
}

/* The condition of that type in obj's status, or NULL (borrowed). */
static inline json_t *wl_cond(const json_t *obj, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && !strcmp(t, type))
            return c;
    }
    return NULL;
}

static inline bool wl_pod_ready(const json_t *pod)
{
    const json_t *c = wl_cond(pod, "Ready");
    const char *s = json_string_value(json_object_get(c, "status"));
    return s && !strcmp(s, "True");
}

/* The kubelet's part: mark up to max pods (matching sel) Running and
 * Ready, in name order; returns how many it marked. */
static inline int wl_ready_pods(const char *sel, int max)
{
    json_t *pods = wl_list("v1", "Pod", sel);
    int n = 0;
    char now[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        if (n >= max)
            break;
        if (wl_pod_ready(pod) ||
            json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp"))
            continue;
        char path[512], body[1024];
        snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s/status",
                 wl_str(pod, "metadata.name"));
        snprintf(body, sizeof body,
                 "{\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\","
                 "\"status\":\"True\",\"lastTransitionTime\":\"%s\"}]}}",
                 now);
        if (wl_merge(path, body) == 200)
            n++;
    }
    json_decref(pods);
    return n;
}

static inline int wl_ready_all(const char *sel)
{
    return wl_ready_pods(sel, 1 << 30);
}

/* Pods matching sel that are Ready (and not being deleted). */
static inline size_t wl_ready_count(const char *sel)
{
    json_t *pods = wl_list("v1", "Pod", sel);
    size_t n = 0, i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        if (wl_pod_ready(pod) &&
            !json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp"))
            n++;
    }
    json_decref(pods);
    return n;
}

/* Does an Event about name with reason carry exactly message? */
static inline bool wl_event(const char *name, const char *reason, const char *message)
{
    json_t *evs = wl_list("v1", "Event", NULL);
    bool found = false;
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e)
    {
        const char *n = wl_str(e, "involvedObject.name"), *r = wl_str(e, "reason"),
                   *m = wl_str(e, "message");
        if (n && r && m && !strcmp(n, name) && !strcmp(r, reason) && !strcmp(m, message))
            found = true;
    }
    json_decref(evs);
    return found;
}

#endif
