/*
 * batchtest.c - the fixture of the workload controllers' integration tests
 * (batchtest.h).
 *
 * DESIGN: the clock is real time plus an offset (one atomic). Timed waits
 * never sleep more than SLICE of real time at once, so a jump of the offset
 * is seen within SLICE by every waiter (a waiter woken early re-checks, as
 * with any condition variable).
 */
#include "batchtest.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrl/object.h"

#define SLICE (20 * CTRL_MILLISECOND)

fakeapi_server *bt_api;
kc_cluster *bt_cluster;
ctrl_client *bt_client;

static _Atomic int64_t offset;

static int64_t real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * CTRL_SECOND + ts.tv_nsec;
}

static int64_t clock_now(void *ud)
{
    (void)ud;
    return real_ns() + atomic_load(&offset);
}

static void clock_sleep(void *ud, int64_t ns)
{
    int64_t until = clock_now(ud) + ns;
    for (;;) {
        int64_t left = until - clock_now(ud);
        if (left <= 0)
            return;
        if (left > SLICE)
            left = SLICE;
        struct timespec ts = {0, (long)left};
        nanosleep(&ts, NULL);
    }
}

static void clock_wait(void *ud, pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline)
{
    int64_t left = deadline == INT64_MAX ? SLICE : deadline - clock_now(ud);
    if (left <= 0)
        return;
    if (left > SLICE)
        left = SLICE;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = ts.tv_nsec + left;
    ts.tv_sec += (time_t)(ns / CTRL_SECOND);
    ts.tv_nsec = (long)(ns % CTRL_SECOND);
    pthread_cond_timedwait(cv, mu, &ts);
}

static const ctrl_clock ctrl_clk = {
    .now_ns = clock_now, .sleep_ns = clock_sleep, .wait_until = clock_wait};
static const fakeapi_clock api_clk = {.now_ns = clock_now};

static void log_sink(const char *line, void *user)
{
    (void)user;
    if (getenv("KH_TEST_LOG"))
        fprintf(stderr, "%s\n", line);
}

int64_t bt_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void bt_nap(void)
{
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

void bt_start(const char *doc, int64_t start_wall_ns)
{
    atomic_store(&offset, start_wall_ns ? start_wall_ns - real_ns() : 0);
    fakeapi_options fo = {.clock = &api_clk, .seed = 7};
    cr_assert_eq(fakeapi_start(&fo, &bt_api), 0);
    json_error_t jerr;
    json_t *d = json_loads(doc, 0, &jerr);
    cr_assert(d, "bad document: %s", jerr.text);
    kc_config *cfg = NULL;
    char errbuf[256] = "";
    cr_assert_eq(kc_config_new(d, NULL, &cfg, errbuf, sizeof errbuf), 0, "%s", errbuf);
    json_decref(d);
    kc_cluster_options o = {.config = cfg, .clock = &ctrl_clk, .log_sink = log_sink};
    int rc = kc_cluster_start(fakeapi_url(bt_api), &o, &bt_cluster, errbuf, sizeof errbuf);
    kc_config_free(cfg);
    cr_assert_eq(rc, 0, "kc_cluster_start: %s", errbuf);
    ctrl_config *cc = NULL;
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(bt_api), &cc, NULL), 0);
    cr_assert_eq(ctrl_client_new(cc, NULL, &bt_client, NULL), 0);
    ctrl_config_free(cc);
}

void bt_stop(void)
{
    kc_cluster_stop(bt_cluster);
    bt_cluster = NULL;
    ctrl_client_free(bt_client);
    bt_client = NULL;
    fakeapi_stop(bt_api);
    bt_api = NULL;
}

void bt_advance(int64_t ns)
{
    atomic_fetch_add(&offset, ns);
    if (bt_api)
        fakeapi_clock_advanced(bt_api);
}

int64_t bt_now(void)
{
    return clock_now(NULL);
}

void bt_apply(const char *text)
{
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_apply(bt_api, text, strlen(text), &err), 0, "apply: %s", err.message);
}

json_t *bt_get(const char *api_version, const char *kind, const char *ns, const char *name)
{
    json_t *obj = NULL;
    if (fakeapi_get(bt_api, api_version, kind, ns, name, &obj, NULL) < 0)
        return NULL;
    return obj;
}

json_t *bt_list(const char *api_version, const char *kind, const char *ns, const char *selector)
{
    json_t *items = NULL;
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_list(bt_api, api_version, kind, ns, selector, &items, &err), 0, "list: %s",
                 err.message);
    return items;
}

static void patch(bool status, const char *api_version, const char *kind, const char *ns,
                  const char *name, const char *patch_json)
{
    json_t *p = json_loads(patch_json, 0, NULL);
    cr_assert(p, "bad patch %s", patch_json);
    ctrl_error err = {0};
    int rc = status ? ctrl_client_patch_status(bt_client, api_version, kind, ns, name,
                                               CTRL_PATCH_MERGE, p, NULL, NULL, &err)
                    : ctrl_client_patch(bt_client, api_version, kind, ns, name, CTRL_PATCH_MERGE, p,
                                        NULL, NULL, &err);
    json_decref(p);
    cr_assert_eq(rc, 0, "patch %s %s: %s", kind, name, err.message);
    ctrl_error_deinit(&err);
}

void bt_patch_status(const char *api_version, const char *kind, const char *ns, const char *name,
                     const char *patch_json)
{
    patch(true, api_version, kind, ns, name, patch_json);
}

void bt_patch(const char *api_version, const char *kind, const char *ns, const char *name,
              const char *patch_json)
{
    patch(false, api_version, kind, ns, name, patch_json);
}

void bt_pod_phase(const char *ns, const char *name, const char *phase, bool ready)
{
    char now[32];
    time_t t = (time_t)(bt_now() / CTRL_SECOND);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char p[512];
    snprintf(p, sizeof p,
             "{\"status\":{\"phase\":\"%s\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\","
             "\"lastTransitionTime\":\"%s\"}]}}",
             phase, ready ? "True" : "False", now);
    bt_patch_status("v1", "Pod", ns, name, p);
}

const char *bt_str(const json_t *obj, const char *path)
{
    const char *s = ctrl_obj_get_string(obj, path);
    return s ? s : "";
}

long long bt_int(const json_t *obj, const char *path, long long def)
{
    return (long long)ctrl_obj_get_int(obj, path, def);
}

json_t *bt_cond(const json_t *obj, const char *type)
{
    json_t *conds = ctrl_obj_get(obj, "status.conditions");
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && !strcmp(t, type))
            return c;
    }
    return NULL;
}
