/*
 * bench_watch.c - watch figures for libfakeapi, one JSON object a line.
 *
 *   watch_idle_rss        the server process's RSS before and after W idle
 *                         watches are open over HTTP, in total and per watch;
 *                         the clients run in a child process (its own growth
 *                         is reported beside, as client_process_kib)
 *   watch_fanout_rate     E events written as fast as the store takes them,
 *                         delivered to N watchers: lines received per second
 *                         in total, first write to last line
 *   watch_fanout_latency  E events written at a steady rate (--rate/s) to N
 *                         watchers: p50/p99/max from just before the write
 *                         call to the line arriving at the client, from a
 *                         CLOCK_MONOTONIC timestamp in each object's data
 *
 * Usage: bench_watch [--idle W] [--watchers N] [--events E] [--rate R] [--quick]
 *                    [--only idle|rate|latency]
 * Figures are reported, never asserted: the exit status is 0 unless the
 * benchmark itself could not run.
 *
 * DESIGN: the main thread owns the server and writes (fakeapi_apply, in
 * process). One client thread drives every watch of a phase through one curl
 * multi handle, splits each body into lines and records latencies in its own
 * arrays; the main thread reads them after joining it. Watches start from the
 * current resourceVersion, so they carry only the benchmark's events. The
 * server's per-watch queue is made longer than E so no watcher is closed as
 * slow while the writer runs ahead of delivery in the rate phase.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fakeapi/fakeapi.h"

typedef struct bench_opts {
    const char *only; /* "idle", "rate", "latency" or NULL for all */
    int idle;
    int watchers;
    int events;
    int rate;
} bench_opts;

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Resident set size of this process in KiB (from /proc). */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* ---- the client side: many watches on one curl multi handle --------------- */

typedef struct watcher {
    CURL *h;
    char part[512]; /* the start of the current line (only the timestamp matters) */
    size_t plen;
    bool headers;
    long lines;
    int64_t *lat; /* latencies, ns, one per line */
    long lat_cap;
    int64_t last_ns;
} watcher;

typedef struct fleet {
    CURLM *m;
    watcher *w;
    int n;
    long want; /* lines per watcher to stop at (0 = run until stop) */
    atomic_bool stop;
    atomic_int ready; /* watchers whose headers arrived */
    atomic_long total;
} fleet;

static fleet *cur_fleet;

/* The "t" value of a ConfigMap line: {"type":..,"object":{..."data":{"t":"123"}..}} */
static void line_done(watcher *w, int64_t now)
{
    w->part[w->plen < sizeof w->part ? w->plen : sizeof w->part - 1] = '\0';
    const char *t = strstr(w->part, "\"data\":{\"t\":\"");
    if (t && w->lines < w->lat_cap)
        w->lat[w->lines] = now - strtoll(t + 13, NULL, 10);
    w->lines++;
    w->last_ns = now;
    w->plen = 0;
    atomic_fetch_add(&cur_fleet->total, 1);
}

static size_t on_body(char *p, size_t sz, size_t nm, void *ud)
{
    watcher *w = ud;
    size_t len = sz * nm;
    int64_t now = mono_ns();
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(p + i, '\n', len - i);
        size_t n = (nl ? (size_t)(nl - p) : len) - i;
        /* Keep the line's start (the timestamp is near it); count the rest. */
        size_t kept = w->plen < sizeof w->part - 1 ? w->plen : sizeof w->part - 1;
        size_t room = sizeof w->part - 1 - kept;
        memcpy(w->part + kept, p + i, n < room ? n : room);
        w->plen += n;
        i += n;
        if (nl) {
            line_done(w, now);
            i++;
        }
    }
    return len;
}

static size_t on_header(char *p, size_t sz, size_t nm, void *ud)
{
    watcher *w = ud;
    if (sz * nm <= 2 && (p[0] == '\r' || p[0] == '\n') && !w->headers) {
        w->headers = true;
        atomic_fetch_add(&cur_fleet->ready, 1);
    }
    return sz * nm;
}

static int fleet_open(fleet *f, const char *url, int n, long lat_cap)
{
    memset(f, 0, sizeof *f);
    cur_fleet = f;
    f->m = curl_multi_init();
    f->w = calloc((size_t)n, sizeof *f->w);
    if (!f->m || !f->w)
        return -1;
    f->n = n;
    curl_multi_setopt(f->m, CURLMOPT_MAX_TOTAL_CONNECTIONS, 0L);
    for (int i = 0; i < n; i++) {
        watcher *w = &f->w[i];
        w->lat_cap = lat_cap;
        w->lat = lat_cap ? malloc((size_t)lat_cap * sizeof *w->lat) : NULL;
        w->h = curl_easy_init();
        if (!w->h || (lat_cap && !w->lat))
            return -1;
        curl_easy_setopt(w->h, CURLOPT_URL, url);
        curl_easy_setopt(w->h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(w->h, CURLOPT_WRITEDATA, w);
        curl_easy_setopt(w->h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(w->h, CURLOPT_HEADERDATA, w);
        curl_easy_setopt(w->h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(w->h, CURLOPT_FORBID_REUSE, 1L);
        curl_multi_add_handle(f->m, w->h);
    }
    return 0;
}

static bool fleet_finished(fleet *f)
{
    if (!f->want)
        return false;
    for (int i = 0; i < f->n; i++)
        if (f->w[i].lines < f->want)
            return false;
    return true;
}

static void *fleet_run(void *ud)
{
    fleet *f = ud;
    int running = 1;
    while (running && !atomic_load(&f->stop) && !fleet_finished(f)) {
        curl_multi_perform(f->m, &running);
        curl_multi_poll(f->m, NULL, 0, 20, NULL);
    }
    return NULL;
}

static void fleet_close(fleet *f)
{
    for (int i = 0; i < f->n; i++) {
        curl_multi_remove_handle(f->m, f->w[i].h);
        curl_easy_cleanup(f->w[i].h);
        free(f->w[i].lat);
    }
    free(f->w);
    curl_multi_cleanup(f->m);
}

static size_t open_watches(fakeapi_server *srv)
{
    fakeapi_watch_info *info = NULL;
    size_t n = 0;
    if (fakeapi_watches(srv, &info, &n) < 0)
        return 0;
    free(info);
    return n;
}

/* Wait (up to secs) until every watcher has its headers and the server counts them. */
static bool fleet_wait_ready(fleet *f, fakeapi_server *srv, size_t expect, int secs)
{
    int64_t end = mono_ns() + (int64_t)secs * 1000000000;
    while (mono_ns() < end) {
        if (atomic_load(&f->ready) == f->n && open_watches(srv) >= expect)
            return true;
        usleep(10000);
    }
    return false;
}

/* ---- phases ----------------------------------------------------------------- */

static int start_server(fakeapi_server **srv, size_t queue_len)
{
    fakeapi_options o = {.seed = 7, .watch_queue_len = queue_len, .history_max_events = 1000000};
    int rc = fakeapi_start(&o, srv);
    if (rc < 0) {
        fprintf(stderr, "bench_watch: fakeapi_start: %s\n", fakeapi_strerror(rc));
        return -1;
    }
    static const char ns[] = "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
                             "\"metadata\":{\"name\":\"bench\"}}";
    return fakeapi_apply(*srv, ns, strlen(ns), NULL) < 0 ? -1 : 0;
}

static const char *watch_url(fakeapi_server *srv)
{
    static char url[512];
    snprintf(url, sizeof url,
             "%s/api/v1/namespaces/bench/configmaps?watch=true&resourceVersion=%llu",
             fakeapi_url(srv), (unsigned long long)fakeapi_revision(srv));
    return url;
}

/* The client side of the idle phase, in a child process so that the
 * server's memory is measured alone: read the URL from `in`, open n watches,
 * report "<opened> <client rss growth KiB>" on `out` once every one has its
 * headers, and hold them until `in` closes. */
static int idle_client(int in, int out, int n)
{
    char url[512];
    ssize_t len = read(in, url, sizeof url - 1);
    if (len <= 0)
        return 1;
    url[len] = '\0';
    long before = rss_kib();
    fleet f;
    pthread_t th;
    if (fleet_open(&f, url, n, 0) < 0 || pthread_create(&th, NULL, fleet_run, &f))
        return 1;
    int64_t end = mono_ns() + 60 * 1000000000LL;
    while (atomic_load(&f.ready) < n && mono_ns() < end)
        usleep(10000);
    char msg[64];
    int m = snprintf(msg, sizeof msg, "%d %ld\n", atomic_load(&f.ready), rss_kib() - before);
    if (write(out, msg, (size_t)m) != m)
        return 1;
    char c;
    while (read(in, &c, 1) > 0) /* until the parent closes the pipe */
        ;
    atomic_store(&f.stop, true);
    pthread_join(th, NULL);
    fleet_close(&f);
    return 0;
}

static int bench_idle(const bench_opts *bo)
{
    int down[2], up[2];
    if (pipe(down) < 0 || pipe(up) < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(down[1]);
        close(up[0]);
        _exit(idle_client(down[0], up[1], bo->idle));
    }
    close(down[0]);
    close(up[1]);
    fakeapi_server *srv;
    if (start_server(&srv, 0) < 0)
        return -1;
    long before = rss_kib();
    const char *url = watch_url(srv);
    long client_kib = -1;
    int ready = 0;
    char msg[64];
    ssize_t len = -1;
    if (write(down[1], url, strlen(url)) == (ssize_t)strlen(url))
        len = read(up[0], msg, sizeof msg - 1);
    if (len > 0) {
        msg[len] = '\0';
        sscanf(msg, "%d %ld", &ready, &client_kib);
    }
    int64_t end = mono_ns() + 10 * 1000000000LL;
    while (open_watches(srv) < (size_t)bo->idle && mono_ns() < end)
        usleep(10000);
    usleep(200000); /* let every connection settle into its suspended state */
    long after = rss_kib();
    size_t open = open_watches(srv);
    close(down[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    close(up[0]);
    fakeapi_stop(srv);
    bool ok = ready == bo->idle && open == (size_t)bo->idle && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0;
    printf("{\"bench\":\"watch_idle_rss\",\"value\":%.1f,\"unit\":\"MiB\",\"watches\":%zu,"
           "\"rss_before_kib\":%ld,\"rss_after_kib\":%ld,\"per_watch_kib\":%.1f,"
           "\"client_process_kib\":%ld,\"all_open\":%s}\n",
           (double)(after - before) / 1024.0, open, before, after,
           open ? (double)(after - before) / (double)open : 0.0, client_kib, ok ? "true" : "false");
    fflush(stdout);
    return ok ? 0 : -1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Write E objects (paced at rate/s unless rate is 0) to N watchers. */
static int bench_fanout(const bench_opts *bo, int rate)
{
    fakeapi_server *srv;
    if (start_server(&srv, (size_t)bo->events + 16) < 0)
        return -1;
    fleet f;
    pthread_t th;
    if (fleet_open(&f, watch_url(srv), bo->watchers, bo->events) < 0) {
        fprintf(stderr, "bench_watch: cannot open %d watches\n", bo->watchers);
        return -1;
    }
    f.want = bo->events;
    if (pthread_create(&th, NULL, fleet_run, &f))
        return -1;
    if (!fleet_wait_ready(&f, srv, (size_t)bo->watchers, 30)) {
        fprintf(stderr, "bench_watch: watches did not open\n");
        atomic_store(&f.stop, true);
        pthread_join(th, NULL);
        return -1;
    }
    int64_t t0 = mono_ns(), period = rate ? 1000000000 / rate : 0;
    char doc[256];
    for (int i = 0; i < bo->events; i++) {
        if (period) {
            int64_t due = t0 + (int64_t)i * period, now;
            while ((now = mono_ns()) < due) {
                struct timespec ts = {0, due - now};
                nanosleep(&ts, NULL);
            }
        }
        int len = snprintf(doc, sizeof doc,
                           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                           "{\"name\":\"e%d\",\"namespace\":\"bench\"},\"data\":{\"t\":\"%lld\"}}",
                           i, (long long)mono_ns());
        if (fakeapi_apply(srv, doc, (size_t)len, NULL) < 0) {
            fprintf(stderr, "bench_watch: write %d failed\n", i);
            break;
        }
    }
    int64_t write_end = mono_ns();
    /* Wait for delivery (at most 60 s). */
    int64_t end = mono_ns() + 60 * 1000000000LL;
    while (!fleet_finished(&f) && mono_ns() < end)
        usleep(2000);
    atomic_store(&f.stop, true);
    pthread_join(th, NULL);
    long total = 0, short_watchers = 0;
    int64_t last = t0;
    size_t nlat = 0;
    int64_t *all = malloc((size_t)bo->watchers * (size_t)bo->events * sizeof *all);
    for (int i = 0; i < f.n && all; i++) {
        watcher *w = &f.w[i];
        total += w->lines;
        if (w->lines < bo->events)
            short_watchers++;
        if (w->last_ns > last)
            last = w->last_ns;
        long n = w->lines < w->lat_cap ? w->lines : w->lat_cap;
        memcpy(all + nlat, w->lat, (size_t)n * sizeof *all);
        nlat += (size_t)n;
    }
    unsigned long slow = fakeapi_slow_watch_closes(srv);
    fleet_close(&f);
    fakeapi_stop(srv);
    if (!all)
        return -1;
    qsort(all, nlat, sizeof *all, cmp_i64);
    double secs = (double)(last - t0) / 1e9;
    double p50 = nlat ? (double)all[nlat / 2] / 1e6 : 0;
    double p99 = nlat ? (double)all[nlat * 99 / 100] / 1e6 : 0;
    double max = nlat ? (double)all[nlat - 1] / 1e6 : 0;
    free(all);
    const char *name = rate ? "watch_fanout_latency" : "watch_fanout_rate";
    if (rate)
        printf("{\"bench\":\"%s\",\"value\":%.3f,\"unit\":\"ms\",\"stat\":\"p99\","
               "\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,",
               name, p99, p50, p99, max);
    else
        printf("{\"bench\":\"%s\",\"value\":%.0f,\"unit\":\"events/s\","
               "\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,",
               name, secs > 0 ? (double)total / secs : 0.0, p50, p99, max);
    printf("\"watchers\":%d,\"events\":%d,\"write_rate\":%.0f,\"delivered\":%ld,"
           "\"seconds\":%.3f,\"short_watchers\":%ld,\"slow_closes\":%lu}\n",
           bo->watchers, bo->events, (double)bo->events / ((double)(write_end - t0) / 1e9), total,
           secs, short_watchers, slow);
    fflush(stdout);
    return short_watchers ? -1 : 0;
}

int main(int argc, char **argv)
{
    bench_opts bo = {.idle = 1000, .watchers = 100, .events = 10000, .rate = 2000};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--idle") && i + 1 < argc)
            bo.idle = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--watchers") && i + 1 < argc)
            bo.watchers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--events") && i + 1 < argc)
            bo.events = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rate") && i + 1 < argc)
            bo.rate = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            bo.only = argv[++i];
        else if (!strcmp(argv[i], "--quick")) {
            bo.idle = 100;
            bo.watchers = 10;
            bo.events = 1000;
        } else {
            fprintf(stderr,
                    "usage: %s [--idle W] [--watchers N] [--events E] [--rate R] [--quick]\n"
                    "          [--only idle|rate|latency]\n",
                    argv[0]);
            return 2;
        }
    }
    if (bo.idle < 1 || bo.watchers < 1 || bo.events < 1 || bo.rate < 1) {
        fprintf(stderr, "bench_watch: counts must be positive\n");
        return 2;
    }
    raise_nofile();
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = 0;
    if (!bo.only || !strcmp(bo.only, "idle"))
        rc |= bench_idle(&bo);
    if (!bo.only || !strcmp(bo.only, "rate"))
        rc |= bench_fanout(&bo, 0);
    if (!bo.only || !strcmp(bo.only, "latency"))
        rc |= bench_fanout(&bo, bo.rate);
    curl_global_cleanup();
    return rc ? 1 : 0;
}
