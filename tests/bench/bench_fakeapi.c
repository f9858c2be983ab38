/*
 * bench_fakeapi.c - figures for libfakeapi, one JSON object a line.
 *
 *   start_to_first_response  fakeapi_start (in memory, port 0) until GET /version answers
 *   start_no_http            fakeapi_start with no_http (store and bootstrap only)
 *   create_rate, get_rate, update_rate, list100_rate
 *                            requests/s over HTTP, keep-alive, N concurrent clients
 *   bare_mhd_get_rate        the same GET loop against a bare libmicrohttpd server
 *   get_vs_bare_ratio        get_rate / bare_mhd_get_rate
 *   list10k_latency          one GET of a namespace holding 10,000 ~1 KB objects
 *   pb_decode_deployment     protobuf.c decoding a ~1 KiB Deployment body (as kubectl
 *                            sends it) to JSON, microseconds per decode (target 20)
 *   create_inprocess_growth  fakeapi_request POST creates, one thread, timed per chunk
 *                            of 10,000 up to --grow objects: does create slow down as
 *                            the store grows?
 *
 *   apply_1k, merge_patch_1k, apply_vs_merge_ratio
 *                            in-process PATCH of one ~1 KiB ConfigMap, one field
 *                            changed each time: server-side apply (the object
 *                            carries managedFields of two managers) against a
 *                            merge patch of the same object; us per write
 * Usage: bench_fakeapi [--clients N] [--seconds S] [--rounds R] [--starts N]
 *                      [--big N] [--grow N] [--quick]
 *                      [--only start|rates|create|list10k|protobuf|growth|kinds|apply]
 * --only create runs the create phase alone (R rounds, the store growing).
 * growth is not part of the default run.
 * Rates are the best of R rounds of S seconds each; latencies are medians.
 * Figures are reported, never asserted: the exit status is 0 unless the
 * benchmark itself could not run.
 *
 * DESIGN: the main thread starts servers and times phases. During a rate
 * phase, N client threads each own one curl easy handle (so one keep-alive
 * connection) and loop until the main thread sets `stop`; they meet the main
 * thread at a barrier before each phase and are joined after it. Each client
 * writes only its own struct; the main thread reads it after the join. The
 * bare server is a second libmicrohttpd daemon with fakeapi's threading mode.
 */
#include <curl/curl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "fakeapi/fakeapi.h"
#include "pbenc.h"
#include "protobuf.h"

#define MAX_CLIENTS 256
#define KEEP_OBJECTS 1024                /* objects per client reused by get and update */
#define MAX_RESP_BYTES ((size_t)1 << 28) /* a response larger than this is an error */
#define PAYLOAD_BYTES 860                /* makes a created configmap about 1 KB */

typedef enum phase { PH_CREATE, PH_GET, PH_BARE, PH_UPDATE, PH_LIST, PH_COUNT } phase;

#define MAX_ROUNDS 64

/* What the rounds of one phase measured. */
typedef struct phase_result {
    double rate[MAX_ROUNDS];   /* requests/s */
    double cpu_us[MAX_ROUNDS]; /* process CPU (server + clients) per request */
    unsigned long errors;
    long last_bad; /* HTTP status of an unexpected answer, -1 transport */
} phase_result;

static const char *const phase_names[] = {"create_rate", "get_rate", "bare_mhd_get_rate",
                                          "update_rate", "list100_rate"};

typedef struct bench_opts {
    int clients;
    double seconds;
    int rounds;
    int starts;
    int big;
    int grow;         /* objects created by the growth figure */
    const char *only; /* NULL, "start", "rates", "create", "list10k", "protobuf", "growth", "kinds" */
} bench_opts;

/* One client: a thread, a curl handle and a response buffer. */
typedef struct run run;

typedef struct client {
    run *r;
    int id;
    pthread_t thread;
    CURL *h;
    struct curl_slist *hdrs;
    char *buf;
    size_t len, cap;
    bool overflow;
    char url[256];
    char body[2048];
    unsigned long seq; /* next create sequence number */
    int kept;          /* objects known for get/update (<= KEEP_OBJECTS) */
    unsigned long long rv[KEEP_OBJECTS];
    unsigned long ok, errors;
    long last_status;
} client;

/* State shared by the main thread and the clients of one run. */
struct run {
    const bench_opts *o;
    const char *base; /* fakeapi URL */
    const char *bare; /* bare server URL */
    phase ph;
    pthread_barrier_t go, done;
    atomic_bool stop;
    bool quit;
    client cl[MAX_CLIENTS];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v in place; returns the median. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *ud)
{
    client *c = ud;
    size_t n = size * nmemb;
    if (c->len + n + 1 > c->cap) {
        size_t cap = c->cap ? c->cap : 16384;
        while (cap < c->len + n + 1)
            cap *= 2;
        char *p = cap <= MAX_RESP_BYTES ? realloc(c->buf, cap) : NULL;
        if (!p) {
            c->overflow = true;
            return 0;
        }
        c->buf = p;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, data, n);
    c->len += n;
    c->buf[c->len] = '\0';
    return n;
}

static int client_init(client *c, int id)
{
    c->id = id;
    c->h = curl_easy_init();
    if (!c->h)
        return -1;
    c->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    c->hdrs = curl_slist_append(c->hdrs, "Accept: application/json");
    c->hdrs = curl_slist_append(c->hdrs, "Expect:"); /* no 100-continue round trip */
    curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, c->hdrs);
    curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(c->h, CURLOPT_TIMEOUT, 60L);
    return 0;
}

static void client_deinit(client *c)
{
    curl_easy_cleanup(c->h);
    curl_slist_free_all(c->hdrs);
    free(c->buf);
    c->h = NULL;
    c->hdrs = NULL;
    c->buf = NULL;
}

/* One request on the client's connection. Returns the HTTP status, or -1. */
static long client_do(client *c, const char *method, const char *url, const char *body)
{
    c->len = 0;
    c->overflow = false;
    curl_easy_setopt(c->h, CURLOPT_URL, url);
    if (!body) {
        curl_easy_setopt(c->h, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, NULL);
    } else {
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
        curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, strcmp(method, "POST") ? method : NULL);
    }
    if (curl_easy_perform(c->h) != CURLE_OK || c->overflow)
        return -1;
    long status = 0;
    curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

/* metadata.resourceVersion of the object in the response, without parsing it all. */
static unsigned long long resp_rv(const client *c)
{
    const char *p = c->buf ? strstr(c->buf, "\"resourceVersion\":\"") : NULL;
    return p ? strtoull(p + 19, NULL, 10) : 0;
}

/* A ~1 KB configmap; rv 0 leaves resourceVersion out. */
static void configmap(char *out, size_t cap, const char *ns, const char *name,
                      unsigned long long rv, unsigned long gen)
{
    char payload[PAYLOAD_BYTES + 1];
    for (int i = 0; i < PAYLOAD_BYTES; i++)
        payload[i] = (char)('a' + (i + gen) % 26);
    payload[PAYLOAD_BYTES] = '\0';
    char rvs[48] = "";
    if (rv)
        snprintf(rvs, sizeof rvs, ",\"resourceVersion\":\"%llu\"", rv);
    snprintf(out, cap,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"%s\",\"labels\":{\"app\":\"bench\",\"tier\":\"load\"}%s},"
             "\"data\":{\"gen\":\"%lu\",\"payload\":\"%s\"}}",
             name, ns, rvs, gen, payload);
}

static void one_request(run *r, client *c, unsigned long k)
{
    char name[64];
    long st, want = 200;
    if ((r->ph == PH_GET || r->ph == PH_UPDATE) && !c->kept) {
        c->errors++; /* this client created nothing to read or update */
        c->last_status = 0;
        return;
    }
    switch (r->ph) {
    case PH_CREATE:
        snprintf(name, sizeof name, "c-%03d-%07lu", c->id, c->seq);
        configmap(c->body, sizeof c->body, "bench", name, 0, c->seq);
        snprintf(c->url, sizeof c->url, "%s/api/v1/namespaces/bench/configmaps", r->base);
        st = client_do(c, "POST", c->url, c->body);
        want = 201;
        if (st == want) {
            if (c->seq < KEEP_OBJECTS) {
                c->rv[c->seq] = resp_rv(c);
                c->kept = (int)c->seq + 1;
            }
            c->seq++;
        }
        break;
    case PH_GET:
        snprintf(c->url, sizeof c->url, "%s/api/v1/namespaces/bench/configmaps/c-%03d-%07lu",
                 r->base, c->id, k % (unsigned long)c->kept);
        st = client_do(c, "GET", c->url, NULL);
        break;
    case PH_UPDATE: {
        unsigned long i = k % (unsigned long)c->kept;
        snprintf(name, sizeof name, "c-%03d-%07lu", c->id, i);
        configmap(c->body, sizeof c->body, "bench", name, c->rv[i], k + 1);
        snprintf(c->url, sizeof c->url, "%s/api/v1/namespaces/bench/configmaps/%s", r->base, name);
        st = client_do(c, "PUT", c->url, c->body);
        if (st == want)
            c->rv[i] = resp_rv(c);
        break;
    }
    case PH_LIST:
        snprintf(c->url, sizeof c->url, "%s/api/v1/namespaces/bench-list/configmaps", r->base);
        st = client_do(c, "GET", c->url, NULL);
        break;
    case PH_BARE:
    default:
        snprintf(c->url, sizeof c->url, "%s/api/v1/namespaces/bench/configmaps/x", r->bare);
        st = client_do(c, "GET", c->url, NULL);
        break;
    }
    c->last_status = st;
    if (st == want)
        c->ok++;
    else
        c->errors++;
}

static void *client_main(void *arg)
{
    client *c = arg;
    run *r = c->r;
    for (;;) {
        pthread_barrier_wait(&r->go);
        if (r->quit)
            break;
        c->ok = c->errors = 0;
        for (unsigned long k = 0; !atomic_load_explicit(&r->stop, memory_order_relaxed); k++)
            one_request(r, c, k);
        pthread_barrier_wait(&r->done);
    }
    return NULL;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Run round `round` of phase ph for o->seconds; results into *res. */
static void run_phase(run *r, phase ph, int round, phase_result *res)
{
    r->ph = ph;
    atomic_store(&r->stop, false);
    pthread_barrier_wait(&r->go);
    double t0 = now_s(), c0 = cpu_s();
    struct timespec d = {(time_t)r->o->seconds,
                         (long)((r->o->seconds - (double)(time_t)r->o->seconds) * 1e9)};
    nanosleep(&d, NULL);
    atomic_store(&r->stop, true);
    double t1 = now_s();
    pthread_barrier_wait(&r->done);
    double c1 = cpu_s();
    unsigned long ok = 0;
    for (int i = 0; i < r->o->clients; i++) {
        ok += r->cl[i].ok;
        res->errors += r->cl[i].errors;
        if (r->cl[i].errors)
            res->last_bad = r->cl[i].last_status;
    }
    res->rate[round] = (double)ok / (t1 - t0);
    res->cpu_us[round] = ok ? (c1 - c0) * 1e6 / (double)ok : 0;
}

/* ---- the bare libmicrohttpd server ---- */

typedef struct bare_body {
    char *data;
    size_t len;
} bare_body;

static enum MHD_Result bare_request(void *cls, struct MHD_Connection *conn, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_size, void **con_cls)
{
    (void)url, (void)method, (void)version, (void)upload_data;
    static int seen;
    const bare_body *b = cls;
    /*
     * Answer on the second call, as fakeapi does: a response queued on the
     * first call (before MHD has read the whole request) makes libmicrohttpd
     * 0.9.75 send "Connection: close", which would defeat keep-alive.
     */
    if (!*con_cls) {
        *con_cls = &seen;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(b->len, b->data, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
    enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* Same flags and limits as fakeapi's listen_http (server.c). */
static struct MHD_Daemon *bare_start(bare_body *b, char *url, size_t cap)
{
    /* fakeapi's mode (server.c): epoll loop threads, one per core (2 to 8). */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = cores < 2 ? 2 : cores > 8 ? 8 : (unsigned)cores;
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL,
        bare_request, b, MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)32 * 1024, MHD_OPTION_CONNECTION_LIMIT, (unsigned)4000,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024, MHD_OPTION_END);
    if (!d)
        return NULL;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    snprintf(url, cap, "http://127.0.0.1:%u", info ? (unsigned)info->port : 0u);
    return d;
}

/* ---- figures ---- */

static double best_rate(const phase_result *res, int n)
{
    double best = 0;
    for (int i = 0; i < n; i++)
        best = res->rate[i] > best ? res->rate[i] : best;
    return best;
}

static void emit_rate(const char *bench, const phase_result *res, int n, const bench_opts *o,
                      const char *extra)
{
    double cpu = res->cpu_us[0];
    for (int i = 1; i < n; i++)
        cpu = res->cpu_us[i] < cpu ? res->cpu_us[i] : cpu;
    printf("{\"bench\":\"%s\",\"value\":%.0f,\"unit\":\"req/s\",\"stat\":\"best_of_%d\","
           "\"runs\":[",
           bench, best_rate(res, n), n);
    for (int i = 0; i < n; i++)
        printf("%s%.0f", i ? "," : "", res->rate[i]);
    printf("],\"cpu_us_per_req\":%.1f,\"clients\":%d,\"seconds\":%g,\"errors\":%lu", cpu,
           o->clients, o->seconds, res->errors);
    if (res->errors)
        printf(",\"last_error_status\":%ld", res->last_bad);
    printf("%s}\n", extra ? extra : "");
    fflush(stdout);
}

static void emit_latency(const char *bench, double *ms, int n, const char *extra)
{
    double med = median(ms, n);
    printf("{\"bench\":\"%s\",\"value\":%.3f,\"unit\":\"ms\",\"stat\":\"median\",\"n\":%d,"
           "\"min\":%.3f,\"p90\":%.3f,\"max\":%.3f%s}\n",
           bench, med, n, ms[0], ms[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1], ms[n - 1],
           extra ? extra : "");
    fflush(stdout);
}

static int apply_text(fakeapi_server *srv, const char *text)
{
    fakeapi_error err = {0};
    int rc = fakeapi_apply(srv, text, strlen(text), &err);
    if (rc < 0)
        fprintf(stderr, "bench: fakeapi_apply: %s: %s\n", fakeapi_strerror(rc), err.message);
    return rc;
}

/* Create n configmaps named <prefix>-NNNNN in ns, in-process, 500 per apply. */
static int apply_configmaps(fakeapi_server *srv, const char *ns, const char *prefix, int n)
{
    enum { CHUNK = 500, OBJ = 1400 };
    char *doc = malloc((size_t)CHUNK * OBJ + 256);
    char name[64];
    int rc = -1;
    if (!doc)
        return -1;
    for (int i = 0; i < n; i += CHUNK) {
        size_t len = (size_t)sprintf(doc, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
        for (int j = i; j < n && j < i + CHUNK; j++) {
            snprintf(name, sizeof name, "%s-%05d", prefix, j);
            if (j > i)
                doc[len++] = ',';
            configmap(doc + len, OBJ, ns, name, 0, (unsigned long)j);
            len += strlen(doc + len);
        }
        strcpy(doc + len, "]}");
        if (apply_text(srv, doc) < 0)
            goto out;
    }
    rc = 0;
out:
    free(doc);
    return rc;
}

static int bench_start(const bench_opts *o)
{
    double *ms = calloc((size_t)o->starts, sizeof *ms);
    client c = {0};
    int rc = -1;
    char url[160];
    if (!ms || client_init(&c, 0) < 0)
        goto out;
    for (int i = 0; i < o->starts; i++) {
        fakeapi_server *srv;
        double t0 = now_s();
        if (fakeapi_start(&(fakeapi_options){0}, &srv) < 0)
            goto out;
        snprintf(url, sizeof url, "%s/version", fakeapi_url(srv));
        long st = client_do(&c, "GET", url, NULL);
        double t1 = now_s();
        fakeapi_stop(srv);
        if (st != 200) {
            fprintf(stderr, "bench: GET /version: %ld\n", st);
            goto out;
        }
        ms[i] = (t1 - t0) * 1e3;
    }
    emit_latency("start_to_first_response", ms, o->starts,
                 ",\"target_ms\":5,\"db\":\"memory\",\"request\":\"GET /version\"");
    for (int i = 0; i < o->starts; i++) {
        fakeapi_server *srv;
        double t0 = now_s();
        if (fakeapi_start(&(fakeapi_options){.no_http = true}, &srv) < 0)
            goto out;
        double t1 = now_s();
        fakeapi_stop(srv);
        ms[i] = (t1 - t0) * 1e3;
    }
    emit_latency("start_no_http", ms, o->starts, ",\"db\":\"memory\"");
    rc = 0;
out:
    client_deinit(&c);
    free(ms);
    return rc;
}

/* GET url with c: 0 and the body in c->buf, or -1. */
static int fetch(client *c, const char *url)
{
    snprintf(c->url, sizeof c->url, "%s", url);
    return client_do(c, "GET", c->url, NULL) == 200 ? 0 : -1;
}

static int bench_rates(const bench_opts *o)
{
    run *r = calloc(1, sizeof *r);
    phase_result *res = calloc(PH_COUNT, sizeof *res);
    fakeapi_server *srv = NULL;
    struct MHD_Daemon *bare = NULL;
    bare_body bb = {0};
    char bare_url[96], url[256], extra[256], list_extra[128];
    int started = 0, rc = -1;
    if (!r || !res || fakeapi_start(&(fakeapi_options){.seed = 1}, &srv) < 0)
        goto out;
    if (apply_text(srv, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
                        "\"metadata\":{\"name\":\"bench\"}}") < 0 ||
        apply_text(srv, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
                        "\"metadata\":{\"name\":\"bench-list\"}}") < 0 ||
        apply_configmaps(srv, "bench-list", "l", 100) < 0 ||
        apply_configmaps(srv, "bench", "probe", 1) < 0)
        goto out;
    r->o = o;
    r->base = fakeapi_url(srv);
    r->bare = bare_url;
    pthread_barrier_init(&r->go, NULL, (unsigned)o->clients + 1);
    pthread_barrier_init(&r->done, NULL, (unsigned)o->clients + 1);
    for (; started < o->clients; started++) {
        r->cl[started].r = r;
        if (client_init(&r->cl[started], started) < 0 ||
            pthread_create(&r->cl[started].thread, NULL, client_main, &r->cl[started]) != 0) {
            client_deinit(&r->cl[started]);
            break;
        }
    }
    if (started < o->clients) {
        fprintf(stderr, "bench: cannot start %d clients\n", o->clients);
        goto out;
    }
    /* The bare server answers the body of a real configmap GET, byte for byte. */
    snprintf(url, sizeof url, "%s/api/v1/namespaces/bench/configmaps/probe-00000", r->base);
    if (fetch(&r->cl[0], url) < 0 || !(bb.data = malloc(r->cl[0].len + 1)))
        goto out;
    memcpy(bb.data, r->cl[0].buf, r->cl[0].len + 1);
    bb.len = r->cl[0].len;
    snprintf(url, sizeof url, "%s/api/v1/namespaces/bench-list/configmaps", r->base);
    if (fetch(&r->cl[0], url) < 0)
        goto out;
    snprintf(list_extra, sizeof list_extra, ",\"objects_per_list\":100,\"response_bytes\":%zu",
             r->cl[0].len);
    if (!(bare = bare_start(&bb, bare_url, sizeof bare_url)))
        goto out;
    /*
     * Create first, so that get and update have objects. The bare server runs
     * right after get in every round, so both see the same machine load.
     */
    bool create_only = o->only && !strcmp(o->only, "create");
    for (int round = 0; round < o->rounds; round++)
        for (int ph = 0; ph < (create_only ? PH_CREATE + 1 : PH_COUNT); ph++)
            run_phase(r, (phase)ph, round, &res[ph]);

    unsigned long total = 0;
    for (int i = 0; i < o->clients; i++)
        total += r->cl[i].seq;
    snprintf(extra, sizeof extra, ",\"object_bytes\":%zu,\"target\":10000,\"objects_total\":%lu",
             bb.len, total);
    emit_rate(phase_names[PH_CREATE], &res[PH_CREATE], o->rounds, o, extra);
    if (create_only) {
        rc = 0;
        goto out;
    }
    snprintf(extra, sizeof extra, ",\"object_bytes\":%zu", bb.len);
    for (int ph = PH_GET; ph < PH_COUNT; ph++)
        emit_rate(phase_names[ph], &res[ph], o->rounds, o, ph == PH_LIST ? list_extra : extra);
    double best_get = best_rate(&res[PH_GET], o->rounds);
    double best_bare = best_rate(&res[PH_BARE], o->rounds);
    printf("{\"bench\":\"get_vs_bare_ratio\",\"value\":%.3f,\"unit\":\"ratio\","
           "\"stat\":\"best_get/best_bare\",\"per_round\":[",
           best_bare > 0 ? best_get / best_bare : 0);
    for (int i = 0; i < o->rounds; i++)
        printf("%s%.3f", i ? "," : "",
               res[PH_BARE].rate[i] > 0 ? res[PH_GET].rate[i] / res[PH_BARE].rate[i] : 0);
    printf("],\"target\":0.70,\"clients\":%d,"
           "\"mhd_flags\":\"INTERNAL_POLLING_THREAD|EPOLL|ALLOW_SUSPEND_RESUME, pool\"}\n",
           o->clients);
    fflush(stdout);
    rc = 0;
out:
    if (started) {
        r->quit = true;
        pthread_barrier_wait(&r->go);
        for (int i = 0; i < started; i++) {
            pthread_join(r->cl[i].thread, NULL);
            client_deinit(&r->cl[i]);
        }
        pthread_barrier_destroy(&r->go);
        pthread_barrier_destroy(&r->done);
    }
    if (bare)
        MHD_stop_daemon(bare);
    free(bb.data);
    fakeapi_stop(srv);
    free(res);
    free(r);
    return rc;
}

static int bench_big_list(const bench_opts *o)
{
    enum { TIMES = 10 };
    fakeapi_server *srv = NULL;
    client c = {0};
    double ms[TIMES], cpu_ms[TIMES];
    char extra[256];
    int rc = -1;
    if (fakeapi_start(&(fakeapi_options){.seed = 2}, &srv) < 0 || client_init(&c, 0) < 0)
        goto out;
    if (apply_text(srv, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
                        "\"metadata\":{\"name\":\"bench-big\"}}") < 0)
        goto out;
    double t0 = now_s();
    if (apply_configmaps(srv, "bench-big", "big", o->big) < 0)
        goto out;
    double apply_s = now_s() - t0;
    printf("{\"bench\":\"apply_inprocess_rate\",\"value\":%.0f,\"unit\":\"objects/s\","
           "\"objects\":%d,\"per_apply\":500}\n",
           (double)o->big / apply_s, o->big);
    snprintf(c.url, sizeof c.url, "%s/api/v1/namespaces/bench-big/configmaps", fakeapi_url(srv));
    if (client_do(&c, "GET", c.url, NULL) != 200) /* warm-up: connection, caches */
        goto out;
    for (int i = 0; i < TIMES; i++) {
        double t1 = now_s(), c1 = cpu_s();
        long st = client_do(&c, "GET", c.url, NULL);
        ms[i] = (now_s() - t1) * 1e3;
        cpu_ms[i] = (cpu_s() - c1) * 1e3;
        if (st != 200)
            goto out;
    }
    /* CPU time (server and client) says what the list costs on a loaded machine. */
    snprintf(extra, sizeof extra,
             ",\"objects\":%d,\"response_bytes\":%zu,\"cpu_ms_median\":%.3f,\"target_ms\":50",
             o->big, c.len, median(cpu_ms, TIMES));
    emit_latency("list10k_latency", ms, TIMES, extra);
    rc = 0;
out:
    client_deinit(&c);
    fakeapi_stop(srv);
    return rc;
}

/*
 * In-process creates (fakeapi_request, no HTTP, one thread) of ~1 KB
 * configmaps into one namespace, timed per chunk of 10,000: the wall and CPU
 * microseconds per create of each chunk, so a store that slows down as it
 * grows shows as a rising line.
 */
static int bench_growth(const bench_opts *o)
{
    enum { CHUNK = 10000 };
    fakeapi_server *srv = NULL;
    char body[2048], name[64];
    int rc = -1;
    if (fakeapi_start(&(fakeapi_options){.seed = 3, .no_http = true}, &srv) < 0 ||
        apply_text(srv, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
                        "\"metadata\":{\"name\":\"grow\"}}") < 0)
        goto out;
    printf("{\"bench\":\"create_inprocess_growth\",\"unit\":\"us/create\",\"chunk\":%d,"
           "\"objects\":%d,\"chunks\":[",
           CHUNK, o->grow);
    for (int i = 0; i < o->grow; i += CHUNK) {
        double t0 = now_s(), c0 = cpu_s();
        int n = 0;
        for (int j = i; j < o->grow && j < i + CHUNK; j++, n++) {
            int st = 0;
            snprintf(name, sizeof name, "g-%07d", j);
            configmap(body, sizeof body, "grow", name, 0, (unsigned long)j);
            if (fakeapi_request(srv, "POST", "/api/v1/namespaces/grow/configmaps",
                                "application/json", body, &st, NULL) < 0 ||
                st != 201) {
                fprintf(stderr, "bench: in-process create %s: %d\n", name, st);
                goto out;
            }
        }
        printf("%s{\"upto\":%d,\"wall_us\":%.1f,\"cpu_us\":%.1f}", i ? "," : "", i + n,
               (now_s() - t0) * 1e6 / n, (cpu_s() - c0) * 1e6 / n);
        fflush(stdout);
    }
    printf("]}\n");
    rc = 0;
out:
    fakeapi_stop(srv);
    return rc;
}

/* A Deployment as `kubectl create deployment` and a chart would write it. */
static const char pb_deployment[] =
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
    "\"namespace\":\"shop\",\"labels\":{\"app\":\"web\",\"tier\":\"frontend\","
    "\"app.kubernetes.io/managed-by\":\"Helm\"},\"annotations\":{\"meta.helm.sh/release-name\":"
    "\"shop\",\"meta.helm.sh/release-namespace\":\"shop\"}},\"spec\":{\"replicas\":3,"
    "\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"strategy\":{\"type\":\"RollingUpdate\","
    "\"rollingUpdate\":{\"maxUnavailable\":\"25%\",\"maxSurge\":1}},\"template\":{\"metadata\":"
    "{\"labels\":{\"app\":\"web\",\"tier\":\"frontend\"},\"annotations\":{\"checksum/config\":"
    "\"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\"}},\"spec\":{"
    "\"serviceAccountName\":"
    "\"web\",\"terminationGracePeriodSeconds\":30,\"containers\":[{\"name\":\"nginx\",\"image\":"
    "\"nginx:1.27\",\"imagePullPolicy\":\"IfNotPresent\",\"args\":[\"--port\",\"8080\"],"
    "\"ports\":[{\"name\":\"http\",\"containerPort\":8080,\"protocol\":\"TCP\"}],\"env\":"
    "[{\"name\":\"MODE\",\"value\":\"production\"},{\"name\":\"LOG_LEVEL\",\"value\":\"info\"},"
    "{\"name\":\"UPSTREAM\",\"value\":\"http://api.shop.svc.cluster.local:8080\"},"
    "{\"name\":\"DB_PASSWORD\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"db\",\"key\":"
    "\"password\"}}},{\"name\":\"POD_NAME\",\"valueFrom\":"
    "{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"metadata.name\"}}}],\"resources\":"
    "{\"limits\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"},\"requests\":{\"cpu\":\"100m\","
    "\"memory\":\"128Mi\"}},\"readinessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":"
    "\"http\"},\"initialDelaySeconds\":5,\"periodSeconds\":10},\"livenessProbe\":{\"tcpSocket\":"
    "{\"port\":8080},\"failureThreshold\":3,\"timeoutSeconds\":2},\"securityContext\":"
    "{\"runAsNonRoot\":true,\"runAsUser\":101,\"allowPrivilegeEscalation\":false,"
    "\"capabilities\":{\"drop\":[\"ALL\"]}},\"volumeMounts\":[{\"name\":"
    "\"config\",\"mountPath\":\"/etc/nginx/conf.d\",\"readOnly\":true}]},{\"name\":\"sidecar\","
    "\"image\":\"busybox:1.36\",\"command\":[\"sh\",\"-c\",\"tail -f /dev/null\"]}],\"volumes\":"
    "[{\"name\":\"config\",\"configMap\":{\"name\":\"web-config\",\"defaultMode\":420}},{\"name\":"
    "\"tls\",\"secret\":{\"secretName\":"
    "\"web-tls\",\"optional\":false}}],"
    "\"nodeSelector\":{\"kubernetes.io/os\":\"linux\"},\"tolerations\":[{\"key\":\"dedicated\","
    "\"operator\":\"Equal\",\"value\":\"web\",\"effect\":\"NoSchedule\"}],\"imagePullSecrets\":"
    "[{\"name\":\"registry-credentials\"}],\"priorityClassName\":\"frontend-high\"}}},"
    "\"status\":{}}";

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* protobuf.c decoding a ~1 KiB Deployment body (decode and free): the
 * median of batches. */
static int bench_protobuf(void)
{
    enum { BATCH = 2000, BATCHES = 15 };
    json_t *obj = json_loads(pb_deployment, 0, NULL);
    uint8_t *pb = NULL;
    size_t n = 0;
    char err[256];
    double us[BATCHES], cpu[BATCHES];
    if (!obj || fakeapi__pb_encode(obj, &pb, &n, err, sizeof err) < 0) {
        fprintf(stderr, "bench: encoding the Deployment: %s\n", obj ? err : "bad JSON");
        json_decref(obj);
        return -1;
    }
    json_decref(obj);
    for (int b = 0; b < BATCHES; b++) {
        double t0 = now_s(), c0 = thread_cpu_s();
        for (int i = 0; i < BATCH; i++) {
            json_t *out = NULL;
            if (fakeapi__pb_decode(pb, n, &out, err, sizeof err) < 0) {
                fprintf(stderr, "bench: decode: %s\n", err);
                free(pb);
                return -1;
            }
            json_decref(out);
        }
        us[b] = (now_s() - t0) * 1e6 / BATCH;
        cpu[b] = (thread_cpu_s() - c0) * 1e6 / BATCH;
    }
    /* The thread's CPU time too: on a shared machine the wall clock also
     * counts the time other processes had the core. */
    printf("{\"bench\":\"pb_decode_deployment\",\"value\":%.2f,\"unit\":\"us\","
           "\"stat\":\"median_of_%d_batches_of_%d\",\"cpu_us\":%.2f,\"body_bytes\":%zu,"
           "\"target_us\":20}\n",
           median(us, BATCHES), BATCHES, BATCH, median(cpu, BATCHES), n);
    free(pb);
    return 0;
}

/* A ~1 KB Deployment: two containers, ports, env, resources, a probe, a volume. */
static const char bench_deploy[] =
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"%s\","
    "\"labels\":{\"app\":\"web\",\"tier\":\"frontend\"},\"annotations\":{\"team\":\"a\"}},"
    "\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
    "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\",\"tier\":\"frontend\"}},"
    "\"spec\":{\"containers\":[{\"name\":\"web\",\"image\":\"nginx:1.27\","
    "\"args\":[\"--port=8080\",\"--verbose\"],\"ports\":[{\"name\":\"http\","
    "\"containerPort\":8080}],\"env\":[{\"name\":\"MODE\",\"value\":\"prod\"},"
    "{\"name\":\"POD\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.name\"}}}],"
    "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"},"
    "\"limits\":{\"cpu\":\"1\",\"memory\":\"256Mi\"}},\"readinessProbe\":{\"httpGet\":"
    "{\"path\":\"/healthz\",\"port\":8080}},\"volumeMounts\":[{\"name\":\"cfg\","
    "\"mountPath\":\"/etc/web\"}]},{\"name\":\"sidecar\",\"image\":\"busybox:1.36\","
    "\"command\":[\"sh\",\"-c\",\"sleep 3600\"]}],\"volumes\":[{\"name\":\"cfg\","
    "\"configMap\":{\"name\":\"web-config\"}}],\"nodeSelector\":{\"kubernetes.io/os\":"
    "\"linux\"}}}}}";

/* One chunk of creates of kind 0 (ConfigMap) or 1 (Deployment), over HTTP
 * with c or in-process when c is NULL: CPU microseconds per create, or -1. */
static double create_chunk(fakeapi_server *srv, client *c, int kind, int round, int n,
                           size_t *bytes)
{
    char body[2048], name[64], url[256];
    const char *path = kind ? "/apis/apps/v1/namespaces/kinds/deployments"
                            : "/api/v1/namespaces/kinds/configmaps";
    snprintf(url, sizeof url, "%s%s", c ? fakeapi_url(srv) : "", path);
    double c0 = cpu_s();
    for (int j = 0; j < n; j++) {
        int st = 0;
        snprintf(name, sizeof name, "%c%c-%d-%05d", c ? 'h' : 'p', kind ? 'd' : 'c', round, j);
        if (kind)
            snprintf(body, sizeof body, bench_deploy, name);
        else
            configmap(body, sizeof body, "kinds", name, 0, (unsigned long)j);
        *bytes = strlen(body);
        if (c)
            st = (int)client_do(c, "POST", url, body);
        else if (fakeapi_request(srv, "POST", url, "application/json", body, &st, NULL) < 0)
            st = -1;
        if (st != 201) {
            fprintf(stderr, "bench: create %s: %d\n", name, st);
            return -1;
        }
    }
    return (cpu_s() - c0) * 1e6 / n;
}

/*
 * Creates of a ~1 KB Deployment, which is type-checked at every depth,
 * defaulted and validated, against creates of ~1 KB ConfigMaps: one
 * client over HTTP (server and client CPU of this process), and in-process
 * (fakeapi_request, no HTTP), alternating chunks so both kinds see the same
 * machine load. The best chunk of each, and the ratio (target: at most 1.5).
 */
static int bench_builtin_create(const bench_opts *o)
{
    enum { CHUNK = 1000 };
    fakeapi_server *srv = NULL;
    client c = {0};
    double best[2][2] = {{1e30, 1e30}, {1e30, 1e30}}; /* [http][kind] */
    size_t bytes[2] = {0, 0};
    int rc = -1, chunks = o->rounds > 3 ? o->rounds : 3;
    if (fakeapi_start(&(fakeapi_options){.seed = 4}, &srv) < 0 || client_init(&c, 0) < 0 ||
        apply_text(srv, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
                        "\"metadata\":{\"name\":\"kinds\"}}") < 0)
        goto out;
    for (int round = 0; round < chunks; round++)
        for (int http = 0; http < 2; http++)
            for (int kind = 0; kind < 2; kind++) {
                double us = create_chunk(srv, http ? &c : NULL, kind, round, CHUNK, &bytes[kind]);
                if (us < 0)
                    goto out;
                if (us < best[http][kind])
                    best[http][kind] = us;
            }
    static const char *const how[] = {"inprocess", "http"};
    for (int http = 0; http < 2; http++) {
        printf("{\"bench\":\"create_%s_configmap\",\"value\":%.1f,\"unit\":\"us/create\","
               "\"stat\":\"best_chunk_cpu\",\"chunk\":%d,\"body_bytes\":%zu}\n",
               how[http], best[http][0], CHUNK, bytes[0]);
        printf("{\"bench\":\"create_%s_deployment\",\"value\":%.1f,\"unit\":\"us/create\","
               "\"stat\":\"best_chunk_cpu\",\"chunk\":%d,\"body_bytes\":%zu,"
               "\"checks\":\"types, unknown fields, defaults, validation\"}\n",
               how[http], best[http][1], CHUNK, bytes[1]);
        printf("{\"bench\":\"create_%s_deployment_vs_configmap\",\"value\":%.2f,\"unit\":\"ratio\""
               "%s}\n",
               how[http], best[http][1] / best[http][0], http ? ",\"target\":1.5" : "");
    }
    fflush(stdout);
    rc = 0;
out:
    client_deinit(&c);
    fakeapi_stop(srv);
    return rc;
}

/* One in-process write; false (and a message) unless it answered 200. */
static bool write_ok(fakeapi_server *srv, const char *path, const char *ctype, const char *body)
{
    int st = 0;
    if (fakeapi_request(srv, "PATCH", path, ctype, body, &st, NULL) < 0 || st != 200) {
        fprintf(stderr, "bench: PATCH %s (%s): %d\n", path, ctype, st);
        return false;
    }
    return true;
}

/*
 * The same ~1 KiB ConfigMap written n times by a server-side apply (with
 * managedFields: a second manager owns a label) and by a merge patch, one
 * data value changing each time, interleaved in rounds so both see the same
 * machine. Reports the median microseconds per write of each, and the ratio.
 */
static int bench_apply(const bench_opts *o)
{
    enum { N = 2000, ROUNDS = 5, KEYS = 20 };
    fakeapi_server *srv = NULL;
    char body[4096], data[2048];
    double apply_us[ROUNDS], merge_us[ROUNDS], apply_cpu[ROUNDS], merge_cpu[ROUNDS];
    int rc = -1;
    const char *ap = "/api/v1/namespaces/default/configmaps/ssa?fieldManager=bench";
    const char *mp = "/api/v1/namespaces/default/configmaps/mp?fieldManager=bench";
    const char *apply_ct = "application/apply-patch+yaml",
               *merge_ct = "application/merge-patch+json";
    if (fakeapi_start(&(fakeapi_options){.seed = 5, .no_http = true}, &srv) < 0)
        goto out;
    for (int round = 0; round < (o->rounds < ROUNDS ? o->rounds : ROUNDS); round++) {
        for (int kind = 0; kind < 2; kind++) {
            const char *path = kind ? mp : ap;
            const char *name = kind ? "mp" : "ssa";
            double t0 = 0, c0 = 0;
            for (int i = -1; i < N; i++) {
                size_t len = 0;
                for (int k = 0; k < KEYS; k++)
                    len += (size_t)snprintf(data + len, sizeof data - len,
                                            "%s\"key-%02d\":\"value %02d of the benchmark, %8d\"",
                                            k ? "," : "", k, k, k == 0 ? i + round * N : 0);
                snprintf(body, sizeof body,
                         "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                         "\"%s\",\"namespace\":\"default\",\"labels\":{\"app\":\"bench\"}},"
                         "\"data\":{%s}}",
                         name, data);
                if (i < 0) {
                    /* Create it (apply or POST), then give it a second manager (a label). */
                    int st = 0;
                    char plain[128];
                    snprintf(plain, sizeof plain, "/api/v1/namespaces/default/configmaps/%s", name);
                    if (round == 0) {
                        if (kind)
                            fakeapi_request(srv, "POST", "/api/v1/namespaces/default/configmaps",
                                            "application/json", body, &st, NULL);
                        else
                            fakeapi_request(srv, "PATCH", ap, apply_ct, body, &st, NULL);
                        if (st != 201 ||
                            !write_ok(srv, plain, merge_ct,
                                      "{\"metadata\":{\"labels\":{\"other\":\"x\"}}}")) {
                            fprintf(stderr, "bench: creating %s: %d\n", name, st);
                            goto out;
                        }
                    }
                    t0 = now_s();
                    c0 = cpu_s();
                    continue;
                }
                if (!write_ok(srv, path, kind ? merge_ct : apply_ct, body))
                    goto out;
            }
            double us = (now_s() - t0) * 1e6 / N, cpu = (cpu_s() - c0) * 1e6 / N;
            (kind ? merge_us : apply_us)[round] = us;
            (kind ? merge_cpu : apply_cpu)[round] = cpu;
        }
    }
    int n = o->rounds < ROUNDS ? o->rounds : ROUNDS;
    double a = median(apply_us, n), m = median(merge_us, n);
    double ac = median(apply_cpu, n), mc = median(merge_cpu, n);
    printf("{\"bench\":\"apply_1k\",\"value\":%.1f,\"unit\":\"us/write\",\"stat\":\"median\","
           "\"cpu_us_per_write\":%.1f,\"rounds\":%d,\"writes\":%d,\"bytes\":%zu}\n",
           a, ac, n, N, strlen(body));
    printf("{\"bench\":\"merge_patch_1k\",\"value\":%.1f,\"unit\":\"us/write\",\"stat\":"
           "\"median\",\"cpu_us_per_write\":%.1f,\"rounds\":%d,\"writes\":%d,\"bytes\":%zu}\n",
           m, mc, n, N, strlen(body));
    printf("{\"bench\":\"apply_vs_merge_ratio\",\"value\":%.2f,\"cpu_ratio\":%.2f,\"unit\":"
           "\"x\"}\n",
           a / m, ac / mc);
    fflush(stdout);
    rc = 0;
out:
    fakeapi_stop(srv);
    return rc;
}

static int parse_args(int argc, char **argv, bench_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            o->seconds = 0.5;
            o->rounds = 1;
            o->starts = 10;
            continue;
        }
        if (!v)
            return -1;
        if (!strcmp(a, "--clients"))
            o->clients = atoi(v);
        else if (!strcmp(a, "--seconds"))
            o->seconds = atof(v);
        else if (!strcmp(a, "--rounds"))
            o->rounds = atoi(v);
        else if (!strcmp(a, "--starts"))
            o->starts = atoi(v);
        else if (!strcmp(a, "--big"))
            o->big = atoi(v);
        else if (!strcmp(a, "--grow"))
            o->grow = atoi(v);
        else if (!strcmp(a, "--only") &&
                 (!strcmp(v, "start") || !strcmp(v, "rates") || !strcmp(v, "create") ||
                  !strcmp(v, "list10k") || !strcmp(v, "protobuf") || !strcmp(v, "growth") ||
                  !strcmp(v, "kinds") || !strcmp(v, "apply")))
            o->only = v;
        else
            return -1;
        i++;
    }
    if (o->clients < 1 || o->clients > MAX_CLIENTS || o->seconds <= 0 || o->rounds < 1 ||
        o->rounds > MAX_ROUNDS || o->starts < 1 || o->big < 1 || o->grow < 1)
        return -1;
    return 0;
}

static bool want(const bench_opts *o, const char *group)
{
    if (!strcmp(group, "growth")) /* slow: only when asked for */
        return o->only && !strcmp(o->only, group);
    if (o->only && !strcmp(o->only, "create"))
        return !strcmp(group, "rates");
    return !o->only || !strcmp(o->only, group);
}

int main(int argc, char **argv)
{
    bench_opts o = {
        .clients = 16, .seconds = 2.0, .rounds = 3, .starts = 50, .big = 10000, .grow = 60000};
    if (parse_args(argc, argv, &o) < 0) {
        fprintf(stderr,
                "usage: %s [--clients N] [--seconds S] [--rounds R] [--starts N] "
                "[--big N] [--grow N] [--only start|rates|create|list10k|protobuf|growth|kinds|apply] "
                "[--quick]\n",
                argv[0]);
        return 2;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    int rc = (want(&o, "start") && bench_start(&o) < 0) ||
             (want(&o, "rates") && bench_rates(&o) < 0) ||
             (want(&o, "list10k") && bench_big_list(&o) < 0) ||
             (want(&o, "protobuf") && bench_protobuf() < 0) ||
             (want(&o, "growth") && bench_growth(&o) < 0) ||
             (want(&o, "kinds") && bench_builtin_create(&o) < 0) ||
             (want(&o, "apply") && bench_apply(&o) < 0);
    curl_global_cleanup();
    if (rc)
        fprintf(stderr, "bench: failed\n");
    return rc;
}
