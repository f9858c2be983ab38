/*
 * test_manager.c - the Manager against an in-process fakeapi: start order
 * and reverse stop, starting twice, graceful shutdown, a failing runnable,
 * the health and metrics endpoints over HTTP, the signal context; a
 * leader-election-gated controller's cache and queue are warm before the
 * manager is elected; controller names are unique unless a controller
 * skips the check.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctrl/manager.h"
#include "fakeapi/fakeapi.h"

static fakeapi_server *api;
static ctrl_config *cfg;

static void setup(void)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){0}, &api), 0);
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(api), &cfg, NULL), 0);
}

static void teardown(void)
{
    ctrl_config_free(cfg);
    fakeapi_stop(api);
}

TestSuite(manager, .init = setup, .fini = teardown, .timeout = 60);
TestSuite(controllers, .init = setup, .fini = teardown, .timeout = 60);

static void quiet(const char *line, void *user)
{
    (void)line, (void)user;
}

static ctrl_manager_options base_opts(void)
{
    return (ctrl_manager_options){
        .metrics_addr = "127.0.0.1:0", .health_probe_addr = "127.0.0.1:0", .log_sink = quiet};
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * CTRL_SECOND + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- running a manager on a thread ---- */

typedef struct runner {
    ctrl_manager *mgr;
    pthread_t t;
    int rc;
    int64_t returned_at;
} runner;

static void *run_mgr(void *arg)
{
    runner *r = arg;
    r->rc = ctrl_manager_start(r->mgr, NULL);
    r->returned_at = now_ns();
    return NULL;
}

static void run_bg(runner *r, ctrl_manager *mgr)
{
    r->mgr = mgr;
    r->rc = 1;
    cr_assert_eq(pthread_create(&r->t, NULL, run_mgr, r), 0);
}

/* ---- recording runnables ---- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char events[64][32];
static int nevents;

static void record(const char *what, const char *name)
{
    pthread_mutex_lock(&log_mu);
    if (nevents < 64)
        snprintf(events[nevents++], 32, "%s:%s", what, name);
    pthread_mutex_unlock(&log_mu);
}

static int find_event(const char *ev)
{
    pthread_mutex_lock(&log_mu);
    int at = -1;
    for (int i = 0; i < nevents && at < 0; i++)
        if (strcmp(events[i], ev) == 0)
            at = i;
    pthread_mutex_unlock(&log_mu);
    return at;
}

typedef struct fake {
    const char *name;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    int stop_delay_ms; /* start returns this long after stop */
    int fail_with;     /* start returns this at once (0 = block) */
    ctrl_informer *must_be_synced;
    bool was_synced;
} fake;

static void fake_init(fake *f, const char *name)
{
    memset(f, 0, sizeof *f);
    f->name = name;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
}

static int fake_start(void *ud)
{
    fake *f = ud;
    record("start", f->name);
    if (f->must_be_synced)
        f->was_synced = ctrl_informer_has_synced(f->must_be_synced);
    if (f->fail_with)
        return f->fail_with;
    pthread_mutex_lock(&f->mu);
    while (!f->stop)
        pthread_cond_wait(&f->cv, &f->mu);
    pthread_mutex_unlock(&f->mu);
    if (f->stop_delay_ms)
        sleep_ms(f->stop_delay_ms);
    record("end", f->name);
    return 0;
}

static void fake_stop(void *ud)
{
    fake *f = ud;
    record("stop", f->name);
    pthread_mutex_lock(&f->mu);
    f->stop = true;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

static void add_fake(ctrl_manager *mgr, fake *f, bool needs_leader)
{
    ctrl_runnable r = {.name = f->name,
                       .start = fake_start,
                       .stop = fake_stop,
                       .ud = f,
                       .needs_leader = needs_leader};
    cr_assert_eq(ctrl_manager_add(mgr, &r), 0);
}

static void wait_event(const char *ev)
{
    for (int i = 0; i < 1000 && find_event(ev) < 0; i++)
        sleep_ms(5);
    cr_assert_geq(find_event(ev), 0, "%s happened", ev);
}

/* Runnables' threads record when they begin: the order the manager
 * promises (a group's threads have all begun before the next group's are
 * made), where the first line of each start callback could still race. */
static void on_thread_start(void *ud, const char *name)
{
    (void)ud;
    record("thread", name);
}

Test(manager, start_order_and_reverse_stop)
{
    ctrl_manager *mgr;
    ctrl_manager_options o = base_opts();
    const ctrl_hooks hooks = {.thread_start = on_thread_start};
    o.hooks = &hooks;
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    ctrl_informer *inf;
    cr_assert_eq(ctrl_cache_informer(ctrl_manager_cache(mgr), "v1", "ConfigMap", NULL, &inf, NULL),
                 0);
    fake a, b, c;
    fake_init(&a, "a");
    fake_init(&b, "b");
    fake_init(&c, "c");
    a.must_be_synced = inf;
    add_fake(mgr, &b, true); /* leader-elected, added first: still started last */
    add_fake(mgr, &a, false);
    add_fake(mgr, &c, false);
    runner r;
    run_bg(&r, mgr);
    wait_event("start:a");
    wait_event("start:b");
    wait_event("start:c");
    cr_assert(a.was_synced, "the cache synced before the runnables started");
    cr_assert_lt(find_event("thread:a"), find_event("thread:b"));
    cr_assert_lt(find_event("thread:c"), find_event("thread:b"));
    cr_assert(ctrl_manager_is_leader(mgr), "no leader election: the manager leads");
    cr_assert_eq(ctrl_manager_elected(mgr, CTRL_SECOND), 0);

    /* A runnable added while running starts at once. */
    fake d;
    fake_init(&d, "d");
    add_fake(mgr, &d, false);
    wait_event("start:d");

    ctrl_manager_stop(mgr);
    pthread_join(r.t, NULL);
    cr_assert_eq(r.rc, 0);
    /* Reverse: the leader group first, then the others, latest added first. */
    cr_assert_lt(find_event("end:b"), find_event("stop:d"));
    cr_assert_lt(find_event("stop:d"), find_event("stop:c"));
    cr_assert_lt(find_event("stop:c"), find_event("stop:a"));
    cr_assert_eq(ctrl_manager_start(mgr, NULL), CTRL_ERR_ARG, "a stopped manager does not restart");
    ctrl_manager_free(mgr);
}

Test(manager, start_twice)
{
    ctrl_manager *mgr;
    ctrl_manager_options o = base_opts();
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    fake a;
    fake_init(&a, "a");
    add_fake(mgr, &a, false);
    runner r;
    run_bg(&r, mgr);
    wait_event("start:a");
    cr_assert_eq(ctrl_manager_start(mgr, NULL), CTRL_ERR_ARG);
    ctrl_manager_stop(mgr);
    pthread_join(r.t, NULL);
    cr_assert_eq(r.rc, 0);
    ctrl_manager_free(mgr);
}

Test(manager, graceful_shutdown_waits)
{
    ctrl_manager *mgr;
    ctrl_manager_options o = base_opts();
    o.graceful_shutdown_ns = 5 * CTRL_SECOND;
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    fake a;
    fake_init(&a, "slow");
    a.stop_delay_ms = 300;
    add_fake(mgr, &a, false);
    runner r;
    run_bg(&r, mgr);
    wait_event("start:slow");
    int64_t t0 = now_ns();
    ctrl_manager_stop(mgr);
    pthread_join(r.t, NULL);
    cr_assert_eq(r.rc, 0);
    cr_assert_geq(r.returned_at - t0, 300 * CTRL_MILLISECOND, "waited for the runnable");
    cr_assert_geq(find_event("end:slow"), 0);
    ctrl_manager_free(mgr);
}

Test(manager, graceful_shutdown_times_out)
{
    ctrl_manager *mgr;
    ctrl_manager_options o = base_opts();
    o.graceful_shutdown_ns = 100 * CTRL_MILLISECOND;
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    fake a;
    fake_init(&a, "stuck");
    a.stop_delay_ms = 1500;
    add_fake(mgr, &a, false);
    runner r;
    run_bg(&r, mgr);
    wait_event("start:stuck");
    int64_t t0 = now_ns();
    ctrl_manager_stop(mgr);
    pthread_join(r.t, NULL);
    cr_assert_eq(r.rc, CTRL_ERR_TIMEOUT);
    cr_assert_lt(r.returned_at - t0, 1000 * CTRL_MILLISECOND, "did not wait past the grace period");
    cr_assert_lt(find_event("end:stuck"), 0, "still running when start returned");
    ctrl_manager_free(mgr); /* joins it */
    cr_assert_geq(find_event("end:stuck"), 0);
}

Test(manager, failing_runnable_stops_the_manager)
{
    ctrl_manager *mgr;
    ctrl_manager_options o = base_opts();
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    fake a, bad;
    fake_init(&a, "ok");
    fake_init(&bad, "bad");
    bad.fail_with = CTRL_ERR_IO;
    add_fake(mgr, &a, false);
    add_fake(mgr, &bad, false);
    cr_assert_eq(ctrl_manager_start(mgr, NULL), CTRL_ERR_IO);
    cr_assert_geq(find_event("stop:ok"), 0, "the others were stopped");
    ctrl_manager_free(mgr);
}

Test(manager, bad_options)
{
    ctrl_manager *mgr = NULL;
    ctrl_manager_options o = base_opts();
    o.leader_election = true; /* no id */
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), CTRL_ERR_ARG);
    o.leader_election_id = "x";
    o.lease_duration_ns = CTRL_SECOND;
    o.renew_deadline_ns = 2 * CTRL_SECOND; /* longer than the lease */
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), CTRL_ERR_ARG);
    cr_assert_null(mgr);
    o = base_opts();
    o.metrics_addr = "nonsense";
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    cr_assert_eq(ctrl_manager_start(mgr, NULL), CTRL_ERR_ARG, "an unusable address fails start");
    ctrl_manager_free(mgr);
}

/* ---- HTTP ---- */

typedef struct body {
    char buf[65536];
    size_t len;
} body;

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    body *b = ud;
    size_t len = sz * n;
    if (b->len + len >= sizeof b->buf)
        len = sizeof b->buf - 1 - b->len;
    memcpy(b->buf + b->len, p, len);
    b->len += len;
    b->buf[b->len] = '\0';
    return sz * n;
}

static long http_get(int port, const char *path, body *b)
{
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    memset(b, 0, sizeof *b);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
    long status = -1;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    return status;
}

static int check_ok(void *user, char *buf, size_t len)
{
    (void)user, (void)buf, (void)len;
    return 0;
}

static int check_toggle(void *user, char *buf, size_t len)
{
    bool *failing = user;
    if (*failing) {
        snprintf(buf, len, "database is down");
        return -1;
    }
    return 0;
}

static void wait_port(ctrl_manager *mgr, bool health)
{
    for (int i = 0; i < 1000; i++) {
        if ((health ? ctrl_manager_health_port(mgr) : ctrl_manager_metrics_port(mgr)) > 0)
            return;
        sleep_ms(5);
    }
    cr_assert_fail("server did not start");
}

Test(manager, health_endpoints)
{
    ctrl_manager *mgr;
    ctrl_manager_options o = base_opts();
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    bool failing = false;
    cr_assert_eq(ctrl_manager_add_healthz(mgr, "ping", check_ok, NULL), 0);
    cr_assert_eq(ctrl_manager_add_healthz(mgr, "ping", check_ok, NULL), CTRL_ERR_ARG, "dup");
    cr_assert_eq(ctrl_manager_add_readyz(mgr, "store", check_toggle, &failing), 0);
    cr_assert_eq(ctrl_manager_add_readyz(mgr, "always", check_ok, NULL), 0);
    runner r;
    run_bg(&r, mgr);
    wait_port(mgr, true);
    int port = ctrl_manager_health_port(mgr);
    cr_assert_neq(port, ctrl_manager_metrics_port(mgr));
    body b;

    cr_assert_eq(http_get(port, "/healthz", &b), 200);
    cr_assert_str_eq(b.buf, "ok");
    cr_assert_eq(http_get(port, "/readyz?verbose", &b), 200);
    cr_assert_str_eq(b.buf, "[+]always ok\n[+]store ok\nhealthz check passed\n");

    failing = true;
    cr_assert_eq(http_get(port, "/readyz", &b), 500);
    cr_assert_str_eq(b.buf,
                     "[+]always ok\n[-]store failed: reason withheld\nhealthz check failed\n");
    cr_assert_eq(http_get(port, "/readyz?verbose=true", &b), 500);
    cr_assert(strstr(b.buf, "[-]store failed: database is down\n"), "%s", b.buf);
    cr_assert_eq(http_get(port, "/readyz/store", &b), 500);
    cr_assert(strstr(b.buf, "database is down"), "%s", b.buf);
    cr_assert_eq(http_get(port, "/readyz/always", &b), 200);
    cr_assert_str_eq(b.buf, "ok");
    cr_assert_eq(http_get(port, "/readyz?exclude=store", &b), 200, "%s", b.buf);
    cr_assert_eq(http_get(port, "/readyz/nope", &b), 404);
    cr_assert_eq(http_get(port, "/healthz", &b), 200, "liveness is separate from readiness");
    cr_assert_eq(http_get(port, "/elsewhere", &b), 404);

    failing = false;
    cr_assert_eq(http_get(port, "/readyz", &b), 200);

    ctrl_manager_stop(mgr);
    pthread_join(r.t, NULL);
    cr_assert_eq(r.rc, 0);
    cr_assert_eq(http_get(port, "/healthz", &b), -1, "server stopped with the manager");
    ctrl_manager_free(mgr);
}

Test(manager, metrics_endpoint)
{
    ctrl_manager *mgr;
    ctrl_manager_options o = base_opts();
    o.health_probe_addr = NULL; /* off */
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    ctrl_metrics_counter(ctrl_manager_metrics(mgr), "my_things_total", "Things.");
    ctrl_metrics_add(ctrl_manager_metrics(mgr), "my_things_total", "kind=\"a\"", 7);
    runner r;
    run_bg(&r, mgr);
    wait_port(mgr, false);
    cr_assert_eq(ctrl_manager_health_port(mgr), 0, "health probes off");
    /* Some traffic through the manager's client. */
    json_t *out = NULL;
    cr_assert_eq(
        ctrl_client_get(ctrl_manager_client(mgr), "v1", "Namespace", NULL, "default", &out, NULL),
        0);
    json_decref(out);
    ctrl_client_get(ctrl_manager_client(mgr), "v1", "ConfigMap", "default", "absent", &out, NULL);

    body b;
    cr_assert_eq(http_get(ctrl_manager_metrics_port(mgr), "/metrics", &b), 200);
    cr_assert(strstr(b.buf, "# TYPE rest_client_requests_total counter\n"), "%s", b.buf);
    cr_assert(strstr(b.buf, "# HELP rest_client_requests_total "), "%s", b.buf);
    cr_assert(strstr(b.buf, "my_things_total{kind=\"a\"} 7\n"), "%s", b.buf);
    char want[256];
    snprintf(want, sizeof want,
             "rest_client_requests_total{code=\"200\",host=\"127.0.0.1:%u\",method=\"GET\"} ",
             (unsigned)fakeapi_port(api));
    const char *line = strstr(b.buf, want);
    cr_assert(line, "%s in\n%s", want, b.buf);
    cr_assert_geq(atof(line + strlen(want)), 2, "discovery and the get");
    snprintf(want, sizeof want,
             "rest_client_requests_total{code=\"404\",host=\"127.0.0.1:%u\",method=\"GET\"} 1\n",
             (unsigned)fakeapi_port(api));
    cr_assert(strstr(b.buf, want), "%s in\n%s", want, b.buf);
    cr_assert_eq(http_get(ctrl_manager_metrics_port(mgr), "/other", &b), 404);
    ctrl_manager_stop(mgr);
    pthread_join(r.t, NULL);
    ctrl_manager_free(mgr);
}

/* ---- signals ---- */

static void *stop_later(void *arg)
{
    (void)arg;
    sleep_ms(200);
    kill(getpid(), SIGTERM);
    return NULL;
}

/* Its own suite, with no server started by a fixture: the child of fork()
 * must not inherit locks held by threads it does not have, so it starts
 * everything itself, after blocking the signals. */
Test(signals, signal_stops_gracefully, .timeout = 60)
{
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        ctrl_stop *stop = ctrl_signal_context();
        fakeapi_server *srv;
        ctrl_config *c;
        ctrl_manager *mgr;
        ctrl_manager_options o = base_opts();
        if (!stop || fakeapi_start(&(fakeapi_options){0}, &srv) != 0 ||
            ctrl_config_from_url(fakeapi_url(srv), &c, NULL) != 0 ||
            ctrl_manager_new_for_config(c, &o, &mgr, NULL) != 0)
            _exit(10);
        pthread_t t;
        pthread_create(&t, NULL, stop_later, NULL);
        int rc = ctrl_manager_start(mgr, stop);
        pthread_join(t, NULL);
        ctrl_manager_free(mgr);
        /* A manager started after the signal stops at once. */
        if (ctrl_manager_new_for_config(c, &o, &mgr, NULL) != 0)
            _exit(11);
        int rc2 = ctrl_manager_start(mgr, stop);
        ctrl_manager_free(mgr);
        ctrl_config_free(c);
        fakeapi_stop(srv);
        _exit(rc == 0 && rc2 == 0 ? 0 : 12);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "child exited normally (status %d)", status);
    cr_assert_eq(WEXITSTATUS(status), 0);
}

/* ---- controllers in the manager ---- */

static pthread_mutex_t rec_mu = PTHREAD_MUTEX_INITIALIZER;
static int reconciles;
static char name_line[2048];

static ctrl_result count_reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)ctx, (void)req, (void)user;
    pthread_mutex_lock(&rec_mu);
    reconciles++;
    pthread_mutex_unlock(&rec_mu);
    return ctrl_done();
}

static int reconciled(void)
{
    pthread_mutex_lock(&rec_mu);
    int n = reconciles;
    pthread_mutex_unlock(&rec_mu);
    return n;
}

static void apply(const char *doc)
{
    fakeapi_error e = {0};
    cr_assert_eq(fakeapi_apply(api, doc, strlen(doc), &e), 0, "%s", e.message);
}

Test(controllers, leader_gated_cache_is_warm_before_election)
{
    reconciles = 0;
    for (int i = 0; i < 3; i++) {
        char doc[256];
        snprintf(doc, sizeof doc,
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
                 "\"default\",\"name\":\"cm%d\"}}",
                 i);
        apply(doc);
    }
    /* Someone else holds the Lease: this manager waits one lease duration
     * (from when it first sees the record) before it may take over. */
    apply("{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{"
          "\"namespace\":\"default\",\"name\":\"warm-lock\"},\"spec\":{\"holderIdentity\":"
          "\"other\",\"leaseDurationSeconds\":3}}");
    ctrl_manager_options o = base_opts();
    o.leader_election = true;
    o.leader_election_id = "warm-lock";
    o.leader_election_namespace = "default";
    o.identity = "me";
    o.lease_duration_ns = 3 * CTRL_SECOND;
    o.renew_deadline_ns = 2 * CTRL_SECOND;
    o.retry_period_ns = 200 * CTRL_MILLISECOND;
    ctrl_manager *mgr = NULL;
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    cr_assert_eq(
        ctrl_builder_complete(ctrl_builder_named(ctrl_builder_for(mgr, "v1", "ConfigMap"), "cms"),
                              count_reconcile, NULL),
        0);
    runner r;
    int64_t t0 = now_ns();
    run_bg(&r, mgr);
    ctrl_metrics *m = ctrl_manager_metrics(mgr);
    const char *low = "name=\"cms\",priority=\"-100\"";
    /* The cache syncs before the elector's first try, and the other's
     * Lease then holds for 3 s more: the queue is warm before any chance
     * of election. */
    while (ctrl_metrics_value(m, "workqueue_depth", low) < 3 && now_ns() - t0 < 10 * CTRL_SECOND)
        sleep_ms(5);
    /* Not elected yet: the informer has synced and the initial list waits
     * in the queue; no worker runs. */
    cr_assert_not(ctrl_manager_is_leader(mgr));
    cr_assert_eq(ctrl_metrics_value(m, "workqueue_depth", low), 3, "the queue is warm");
    cr_assert_eq(reconciled(), 0);
    cr_assert_eq(ctrl_manager_elected(mgr, 10 * CTRL_SECOND), 0);
    while (reconciled() < 3 && now_ns() - t0 < 15 * CTRL_SECOND)
        sleep_ms(5);
    cr_assert_eq(reconciled(), 3, "elected: the warm queue is worked off");
    ctrl_manager_stop(mgr);
    pthread_join(r.t, NULL);
    ctrl_manager_free(mgr);
}

static void name_sink(const char *line, void *user)
{
    (void)user;
    pthread_mutex_lock(&rec_mu);
    if (strstr(line, "must be unique") && !name_line[0])
        snprintf(name_line, sizeof name_line, "%s", line);
    pthread_mutex_unlock(&rec_mu);
}

Test(controllers, names_are_unique_unless_validation_is_skipped)
{
    ctrl_manager_options o = base_opts();
    o.metrics_addr = "0";
    o.log_sink = name_sink;
    ctrl_manager *mgr = NULL;
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    ctrl_controller_options skip = {.skip_name_validation = true};
    cr_assert_eq(
        ctrl_builder_complete(ctrl_builder_named(ctrl_builder_for(mgr, "v1", "ConfigMap"), "same"),
                              count_reconcile, NULL),
        0);
    name_line[0] = '\0';
    cr_assert_eq(
        ctrl_builder_complete(ctrl_builder_named(ctrl_builder_for(mgr, "v1", "Secret"), "same"),
                              count_reconcile, NULL),
        CTRL_ERR_ARG, "a duplicate name is refused");
    cr_assert(strstr(name_line, "controller=same"), "the refusal is logged: %s", name_line);
    cr_assert_eq(ctrl_builder_complete(
                     ctrl_builder_with_options(
                         ctrl_builder_named(ctrl_builder_for(mgr, "v1", "Secret"), "same"), &skip),
                     count_reconcile, NULL),
                 0, "allowed with skip_name_validation");
    /* The default (the kind in lower case) collides the same way. */
    cr_assert_eq(
        ctrl_builder_complete(ctrl_builder_for(mgr, "v1", "Secret"), count_reconcile, NULL), 0);
    cr_assert_eq(
        ctrl_builder_complete(ctrl_builder_for(mgr, "v1", "Secret"), count_reconcile, NULL),
        CTRL_ERR_ARG);
    /* Per manager: another manager may use the same names. */
    ctrl_manager *other = NULL;
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &other, NULL), 0);
    cr_assert_eq(ctrl_builder_complete(
                     ctrl_builder_named(ctrl_builder_for(other, "v1", "ConfigMap"), "same"),
                     count_reconcile, NULL),
                 0);
    ctrl_manager_free(other);
    ctrl_manager_free(mgr);
}

/* ---- cache reads of a kind whose informer has not synced ---- */

static int secret_rc = 1;

static ctrl_result read_secret(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)user;
    if (strcmp(req->name, "after") != 0)
        return ctrl_done();
    json_t *obj = NULL;
    int rc = ctrl_client_get(ctrl_ctx_client(ctx), "v1", "Secret", "default", "s1", &obj, NULL);
    json_decref(obj);
    pthread_mutex_lock(&rec_mu);
    secret_rc = rc;
    pthread_mutex_unlock(&rec_mu);
    return ctrl_done();
}

Test(controllers, unsynced_kind_is_read_from_the_server)
{
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"namespace\":"
          "\"default\",\"name\":\"s1\"}}");
    apply("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
          "\"default\",\"name\":\"before\"}}");
    /* Secrets can be read one by one but never listed or watched: their
     * informer never syncs. */
    fakeapi_error e = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "list",
                                                    .resource = "secrets",
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 403},
                                   NULL, &e),
                 0, "%s", e.message);
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "watch",
                                                    .resource = "secrets",
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 403},
                                   NULL, &e),
                 0, "%s", e.message);
    ctrl_manager_options o = base_opts();
    o.metrics_addr = "0";
    ctrl_manager *mgr = NULL;
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    cr_assert_eq(
        ctrl_builder_complete(ctrl_builder_named(ctrl_builder_for(mgr, "v1", "ConfigMap"), "cms"),
                              read_secret, NULL),
        0);
    runner r;
    int64_t t0 = now_ns();
    run_bg(&r, mgr);
    /* Running: it reconciled the ConfigMap that was there. */
    const char *ok = "controller=\"cms\",result=\"success\"";
    while (ctrl_metrics_value(ctrl_manager_metrics(mgr), "controller_runtime_reconcile_total", ok) <
               1 &&
           now_ns() - t0 < 10 * CTRL_SECOND)
        sleep_ms(5);
    cr_assert_eq(
        ctrl_metrics_value(ctrl_manager_metrics(mgr), "controller_runtime_reconcile_total", ok), 1);
    /* A controller added at run time puts Secrets in the cache; its
     * informer never syncs. */
    cr_assert_eq(
        ctrl_builder_complete(ctrl_builder_named(ctrl_builder_for(mgr, "v1", "Secret"), "secrets"),
                              count_reconcile, NULL),
        0);
    cr_assert(ctrl_cache_has(ctrl_manager_cache(mgr), "v1", "Secret"));
    apply("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
          "\"default\",\"name\":\"after\"}}");
    int rc = 1;
    while (rc == 1 && now_ns() - t0 < 10 * CTRL_SECOND) {
        sleep_ms(5);
        pthread_mutex_lock(&rec_mu);
        rc = secret_rc;
        pthread_mutex_unlock(&rec_mu);
    }
    cr_assert_eq(rc, 0, "the Secret exists: read from the server, not from a partial cache (%s)",
                 ctrl_strerror(rc));
    /* The controller waiting for its never-synced informer does not hold
     * the shutdown. */
    int64_t t1 = now_ns();
    ctrl_manager_stop(mgr);
    pthread_join(r.t, NULL);
    cr_assert_eq(r.rc, 0);
    cr_assert_lt(now_ns() - t1, 5 * CTRL_SECOND);
    ctrl_manager_free(mgr);
}

/* ---- the API reader reads from the server ---- */

static ctrl_client *seen_client, *seen_reader;

static ctrl_result note_clients(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)req, (void)user;
    pthread_mutex_lock(&rec_mu);
    seen_client = ctrl_ctx_client(ctx);
    seen_reader = ctrl_ctx_api_reader(ctx);
    pthread_mutex_unlock(&rec_mu);
    return ctrl_done();
}

Test(controllers, api_reader_is_the_managers_uncached_client)
{
    apply("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
          "\"default\",\"name\":\"probe\"}}");
    ctrl_manager_options o = base_opts();
    o.metrics_addr = "0";
    ctrl_manager *mgr = NULL;
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    cr_assert_eq(
        ctrl_builder_complete(ctrl_builder_for(mgr, "v1", "ConfigMap"), note_clients, NULL), 0);
    runner r;
    int64_t t0 = now_ns();
    run_bg(&r, mgr);
    bool seen = false;
    while (!seen && now_ns() - t0 < 10 * CTRL_SECOND) {
        sleep_ms(5);
        pthread_mutex_lock(&rec_mu);
        seen = seen_reader != NULL;
        pthread_mutex_unlock(&rec_mu);
    }
    cr_assert(seen, "no reconcile");
    /* The controller's client reads from the cache; the API reader is the
     * manager's client, which does not (controller-runtime's
     * GetAPIReader). */
    cr_assert_neq(seen_reader, seen_client);
    cr_assert_eq(seen_reader, ctrl_manager_client(mgr));
    ctrl_manager_stop(mgr);
    pthread_join(r.t, NULL);
    cr_assert_eq(r.rc, 0);
    ctrl_manager_free(mgr);
}
