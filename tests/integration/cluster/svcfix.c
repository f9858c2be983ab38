/*
 * svcfix.c - the service controllers' test fixture (svcfix.h).
 */
#include "svcfix.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

fakeapi_server *fx_api;
kc_cluster *fx_cluster;

const char *fx_s(const char *fmt, ...)
{
    static char ring[8][16384];
    static int next;
    char *b = ring[next++ % 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof ring[0], fmt, ap);
    va_end(ap);
    return b;
}

void fx_start_with(const fakeapi_options *o, const char *doc)
{
    fakeapi_options def = {.seed = 77};
    cr_assert_eq(fakeapi_start(o ? o : &def, &fx_api), 0, "fakeapi_start");
    json_error_t jerr;
    json_t *d = json_loads(doc, 0, &jerr);
    cr_assert_not_null(d, "cluster document: %s", jerr.text);
    kc_config *cfg = NULL;
    char err[512] = "";
    cr_assert_eq(kc_config_new(d, NULL, &cfg, err, sizeof err), 0, "kc_config_new: %s", err);
    json_decref(d);
    /* SVCFIX_LOG=1 shows the cluster's log (debug) on stderr. */
    bool logs = getenv("SVCFIX_LOG") != NULL;
    kc_cluster_options co = {
        .config = cfg, .quiet = !logs, .log_level = logs ? CTRL_LOG_DEBUG : CTRL_LOG_INFO};
    int rc = kc_cluster_start(fakeapi_url(fx_api), &co, &fx_cluster, err, sizeof err);
    kc_config_free(cfg);
    cr_assert_eq(rc, 0, "kc_cluster_start: %s", err);
}

void fx_start(const char *doc)
{
    fx_start_with(NULL, doc);
}

void fx_stop(void)
{
    kc_cluster_stop(fx_cluster);
    fx_cluster = NULL;
    fakeapi_stop(fx_api);
    fx_api = NULL;
}

static const char *ctype(const char *method)
{
    return !strcmp(method, "PATCH") ? "application/merge-patch+json" : "application/json";
}

json_t *fx_req(int want, const char *method, const char *path, const char *body)
{
    int status = 0;
    json_t *out = NULL;
    cr_assert_eq(
        fakeapi_request(fx_api, method, path, body ? ctype(method) : NULL, body, &status, &out), 0);
    if (want ? status != want : (status < 200 || status > 299)) {
        char *text = out ? json_dumps(out, JSON_COMPACT) : NULL;
        cr_assert_fail("%s %s: %d (want %d): %s", method, path, status, want,
                       text ? text : "(no body)");
    }
    return out;
}

int fx_status(const char *method, const char *path, const char *body)
{
    int status = 0;
    json_t *out = NULL;
    cr_assert_eq(
        fakeapi_request(fx_api, method, path, body ? ctype(method) : NULL, body, &status, &out), 0);
    json_decref(out);
    return status;
}

json_t *fx_get(const char *path)
{
    int status = 0;
    json_t *out = NULL;
    cr_assert_eq(fakeapi_request(fx_api, "GET", path, NULL, NULL, &status, &out), 0);
    if (status == 404) {
        json_decref(out);
        return NULL;
    }
    cr_assert_eq(status, 200, "GET %s: %d", path, status);
    return out;
}

void fx_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool fx_wait(bool (*fn)(void *user), void *user, int timeout_ms)
{
    long long end = now_ms() + timeout_ms;
    for (;;) {
        if (fn(user))
            return true;
        if (now_ms() > end)
            return false;
        fx_sleep_ms(5);
    }
}

json_t *fx_at(const json_t *v, const char *path)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *cur = (json_t *)v;
    for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && cur;
         tok = strtok_r(NULL, ".", &save)) {
        if (json_is_array(cur)) {
            char *end;
            long i = strtol(tok, &end, 10);
            cur = *end ? NULL : json_array_get(cur, (size_t)i);
        } else {
            cur = json_object_get(cur, tok);
        }
    }
    return cur;
}

json_t *fx_wait_field(const char *path, const char *field, const char *want, int timeout_ms)
{
    json_t *w = json_loads(want, JSON_DECODE_ANY, NULL);
    cr_assert_not_null(w, "bad expected JSON: %s", want);
    long long end = now_ms() + timeout_ms;
    json_t *obj = NULL;
    for (;;) {
        json_decref(obj);
        obj = fx_get(path);
        json_t *v = obj ? fx_at(obj, field) : NULL;
        if (v ? json_equal(v, w) : json_is_null(w))
            break;
        if (now_ms() > end)
            break;
        fx_sleep_ms(5);
    }
    json_decref(w);
    return obj;
}

void fx_pod_ready(const char *ns, const char *name, bool ready, const char *since)
{
    json_t *r = fx_req(0, "PATCH", fx_s("/api/v1/namespaces/%s/pods/%s/status", ns, name),
                       fx_s("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\","
                            "\"lastTransitionTime\":\"%s\"}]}}",
                            ready ? "True" : "False", since ? since : "2026-01-01T00:00:00Z"));
    json_decref(r);
}

const char *fx_pod(const char *ns, const char *name, const char *labels, const char *ports,
                   const char *spec, const char *ip, bool ready, const char *ready_since)
{
    static char uids[8][64];
    static int next;
    json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:s}]}}", "apiVersion", "v1",
                            "kind", "Pod", "metadata", "name", name, "namespace", ns, "spec",
                            "containers", "name", "c", "image", "busybox");
    cr_assert_not_null(pod);
    json_t *l = json_loads(labels ? labels : "{}", 0, NULL);
    cr_assert_not_null(l, "labels: %s", labels);
    json_object_set_new(json_object_get(pod, "metadata"), "labels", l);
    if (ports) {
        json_t *p = json_loads(ports, 0, NULL);
        cr_assert_not_null(p, "ports: %s", ports);
        json_object_set_new(fx_at(pod, "spec.containers.0"), "ports", p);
    }
    if (spec) {
        json_t *s = json_loads(spec, 0, NULL);
        cr_assert_not_null(s, "spec: %s", spec);
        json_object_update(json_object_get(pod, "spec"), s);
        json_decref(s);
    }
    char *body = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    json_t *made = fx_req(201, "POST", fx_s("/api/v1/namespaces/%s/pods", ns), body);
    free(body);
    char *uid = uids[next++ % 8];
    snprintf(uid, sizeof uids[0], "%s", json_string_value(fx_at(made, "metadata.uid")));
    json_decref(made);
    json_t *st =
        json_pack("{s:{s:s, s:[{s:s, s:s, s:s}]}}", "status", "phase", "Running", "conditions",
                  "type", "Ready", "status", ready ? "True" : "False", "lastTransitionTime",
                  ready_since ? ready_since : "2026-01-01T00:00:00Z");
    if (ip)
        json_object_set_new(json_object_get(st, "status"), "podIP", json_string(ip));
    body = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    json_t *r = fx_req(0, "PATCH", fx_s("/api/v1/namespaces/%s/pods/%s/status", ns, name), body);
    json_decref(r);
    free(body);
    return uid;
}

const char *fx_b64dec(const char *s)
{
    static char ring[4][16384];
    static int next;
    char *out = ring[next++ % 4];
    size_t n = 0, bits = 0;
    unsigned v = 0;
    for (const char *p = s; *p && *p != '='; p++) {
        const char *tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char *at = strchr(tbl, *p);
        cr_assert_not_null(at, "not base64: %s", s);
        v = (v << 6) | (unsigned)(at - tbl);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            cr_assert_lt(n, sizeof ring[0] - 1);
            out[n++] = (char)((v >> bits) & 0xff);
        }
    }
    out[n] = 0;
    return out;
}
