/*
 * soak_fakeapi.c - does a loaded libfakeapi stay flat? Mixed load for a
 * while, the server process's RSS and open descriptors every interval, one
 * JSON object a line:
 *
 *   {"soak":"sample",...}   every --interval seconds: elapsed seconds, RSS
 *                           (KiB), open descriptors, open watches, and the
 *                           load so far (requests, watch hang-ups, abandoned,
 *                           half-closed and slowloris connections)
 *   {"soak":"summary",...}  the first- and second-half averages of RSS and
 *                           descriptors, whether the second half is flat (its
 *                           maximum within 10%, plus 32 descriptors or 8 MiB,
 *                           of its first sample), and whether the server kept
 *                           serving (a server that stopped accepting is flat
 *                           too): the raw clients (watch hang-ups, abandoned
 *                           requests) of the second half at least half those
 *                           of the first
 *
 * Usage: soak_fakeapi [--seconds N] [--interval S] [--conn-timeout S]
 * (default 300 s, samples every 10 s, the server's connection timeout 10 s
 * so that slowloris connections turn over within the run). Figures are
 * reported, never asserted: the exit status is 0 unless the soak could not
 * run. `meson test --benchmark` runs the 5-minute default.
 *
 * DESIGN: the server runs in this process (so /proc/self is its process);
 * the clients' own descriptors are bounded (three keep-alive curl handles,
 * one watch at a time, at most SLOWLORIS trickling connections) and counted
 * with the server's. Threads: three writers (create, update, list, delete
 * ConfigMaps over HTTP, each in its own namespace), one watcher (opens a
 * watch on every namespace, reads a little while events flow, hangs up with
 * a FIN or a reset), one abuser (abandoned requests, half-closes, slowloris
 * connections trickling a header byte a second), and the main thread, which
 * samples. Counters are atomics; nothing else is shared.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fakeapi/fakeapi.h"

/* Under ThreadSanitizer (the soak can be built there by hand): jansson's
 * reference counts are atomic inside the library but read plainly by its
 * inline json_decref, and events' objects are shared read-only by every
 * watch, as stress_cache.c explains; only those frames are suppressed. */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void)
{
    return "race:json_incref\n"
           "race:json_decref\n"
           "race:json_delete\n"
           "race:libjansson.so\n";
}

#define WRITERS 3
#define SLOWLORIS 20
#define MAX_SAMPLES 4096

static fakeapi_server *srv;
static atomic_bool stop;
static atomic_ulong n_requests, n_hangups, n_abandoned, n_halfclosed, n_slowloris;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int fd_count(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own */
}

static int raw_connect(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(fakeapi_port(srv))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void send_str(int fd, const char *s)
{
    ssize_t n = send(fd, s, strlen(s), MSG_NOSIGNAL);
    (void)n; /* the server may have let it go already */
}

/* ---- writers --------------------------------------------------------------- */

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
    (void)p, (void)ud;
    return size * n;
}

static void http(CURL *c, const char *method, const char *url, const char *ctype, const char *body)
{
    struct curl_slist *h = NULL;
    if (ctype) {
        char line[128];
        snprintf(line, sizeof line, "Content-Type: %s", ctype);
        h = curl_slist_append(h, line);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_NOBODY, 0L);
    if (!body)
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_perform(c);
    curl_slist_free_all(h);
    atomic_fetch_add(&n_requests, 1);
}

static void *writer_main(void *ud)
{
    int id = (int)(intptr_t)ud;
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    char url[256], body[1024], ns[32];
    snprintf(ns, sizeof ns, "soak%d", id);
    snprintf(url, sizeof url, "%s/api/v1/namespaces", fakeapi_url(srv));
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", ns);
    http(c, "POST", url, "application/json", body);
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        unsigned k = i % 64;
        snprintf(url, sizeof url, "%s/api/v1/namespaces/%s/configmaps", fakeapi_url(srv), ns);
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c%u\","
                 "\"labels\":{\"n\":\"%u\"}},\"data\":{\"v\":\"%u\"}}",
                 k, k % 4, i);
        http(c, "POST", url, "application/json", body);
        if (i % 8 == 0)
            http(c, "GET", url, NULL, NULL);
        snprintf(url, sizeof url, "%s/api/v1/namespaces/%s/configmaps/c%u", fakeapi_url(srv), ns,
                 k);
        snprintf(body, sizeof body, "{\"data\":{\"v\":\"%u-updated\"}}", i);
        http(c, "PATCH", url, "application/merge-patch+json", body);
        if (i % 3 == 0)
            http(c, "DELETE", url, NULL, NULL);
    }
    curl_easy_cleanup(c);
    return NULL;
}

/* ---- watches hung up while events flow ------------------------------------- */

static void *watcher_main(void *ud)
{
    (void)ud;
    static const char *const flavours[] = {
        "",
        "&allowWatchBookmarks=true",
        "&labelSelector=n%3D1",
        "&timeoutSeconds=1",
    };
    char buf[16384];
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        int fd = raw_connect();
        if (fd < 0) {
            usleep(10000);
            continue;
        }
        if (i % 2) {
            int small = 2048; /* the server's writes fill it: it is writing when we go */
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        }
        char rq[512];
        snprintf(rq, sizeof rq,
                 "GET /api/v1/configmaps?watch=true%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 "User-Agent: soak-watcher\r\n\r\n",
                 flavours[i % 4]);
        send_str(fd, rq);
        for (unsigned r = 0; r < i % 4; r++) {
            struct pollfd p = {.fd = fd, .events = POLLIN};
            if (poll(&p, 1, 50) > 0 && recv(fd, buf, sizeof buf, 0) <= 0)
                break;
        }
        if (i % 3 == 0) {
            struct linger lg = {.l_onoff = 1, .l_linger = 0}; /* a reset */
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        }
        close(fd);
        atomic_fetch_add(&n_hangups, 1);
        usleep(2000);
    }
    return NULL;
}

/* ---- abandoned, half-closed and slowloris connections ---------------------- */

static void *abuser_main(void *ud)
{
    (void)ud;
    static const char *const partial[] = {
        "GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\n",
        "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"apiVersion\":",
        "GET /api/v1/names",
    };
    int slow[SLOWLORIS];
    for (int i = 0; i < SLOWLORIS; i++)
        slow[i] = -1;
    int64_t last_trickle = 0;
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        int fd = raw_connect();
        if (fd >= 0) {
            send_str(fd, partial[i % 3]);
            if (i % 2) {
                shutdown(fd, SHUT_WR); /* half-closed: the server should close */
                struct pollfd p = {.fd = fd, .events = POLLIN};
                poll(&p, 1, 20);
                atomic_fetch_add(&n_halfclosed, 1);
            } else {
                atomic_fetch_add(&n_abandoned, 1);
            }
            close(fd);
        }
        /* Slowloris: a header byte a second on each; replace those let go. */
        if (now_ms() - last_trickle >= 1000) {
            last_trickle = now_ms();
            for (int k = 0; k < SLOWLORIS; k++) {
                if (slow[k] >= 0 && send(slow[k], "a", 1, MSG_NOSIGNAL) != 1) {
                    close(slow[k]);
                    slow[k] = -1;
                }
                if (slow[k] < 0 && (slow[k] = raw_connect()) >= 0) {
                    send_str(slow[k], "GET /api/v1/namespaces HTTP/1.1\r\nX-Slow: ");
                    atomic_fetch_add(&n_slowloris, 1);
                }
            }
        }
        usleep(5000);
    }
    for (int k = 0; k < SLOWLORIS; k++)
        if (slow[k] >= 0)
            close(slow[k]);
    return NULL;
}

/* ---- sampling -------------------------------------------------------------- */

typedef struct sample {
    long rss;
    int fds;
    unsigned long hangups, abandoned; /* the load so far */
} sample;

static size_t open_watches(void)
{
    fakeapi_watch_info *w = NULL;
    size_t n = 0;
    if (fakeapi_watches(srv, &w, &n) < 0)
        return 0;
    free(w);
    return n;
}

static double avg(const sample *s, size_t from, size_t to, bool rss)
{
    double sum = 0;
    for (size_t i = from; i < to; i++)
        sum += rss ? (double)s[i].rss : (double)s[i].fds;
    return to > from ? sum / (double)(to - from) : 0;
}

/* The second half's maximum within 10% (plus margin) of its first sample. */
static bool flat(const sample *s, size_t from, size_t to, bool rss, double margin)
{
    double first = rss ? (double)s[from].rss : (double)s[from].fds, max = first;
    for (size_t i = from; i < to; i++) {
        double v = rss ? (double)s[i].rss : (double)s[i].fds;
        if (v > max)
            max = v;
    }
    return max <= first * 1.10 + margin;
}

static void usage(void)
{
    fprintf(stderr, "usage: soak_fakeapi [--seconds N] [--interval S] [--conn-timeout S]\n");
}

int main(int argc, char **argv)
{
    long seconds = 300, interval = 10, conn_timeout = 10;
    for (int i = 1; i < argc; i++) {
        long *to = !strcmp(argv[i], "--seconds")        ? &seconds
                   : !strcmp(argv[i], "--interval")     ? &interval
                   : !strcmp(argv[i], "--conn-timeout") ? &conn_timeout
                                                        : NULL;
        if (!to || i + 1 >= argc || (*to = strtol(argv[++i], NULL, 10)) <= 0) {
            usage();
            return 2;
        }
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    fakeapi_options o = {.seed = 7, .conn_timeout_s = (int)conn_timeout};
    int rc = fakeapi_start(&o, &srv);
    if (rc < 0) {
        fprintf(stderr, "soak_fakeapi: fakeapi_start: %s\n", fakeapi_strerror(rc));
        return 1;
    }
    pthread_t th[WRITERS + 2];
    size_t nth = 0;
    for (int i = 0; i < WRITERS; i++)
        pthread_create(&th[nth++], NULL, writer_main, (void *)(intptr_t)i);
    pthread_create(&th[nth++], NULL, watcher_main, NULL);
    pthread_create(&th[nth++], NULL, abuser_main, NULL);

    static sample s[MAX_SAMPLES];
    size_t n = 0;
    int64_t t0 = now_ms();
    while (n < MAX_SAMPLES && now_ms() - t0 < seconds * 1000) {
        int64_t next = t0 + (int64_t)(n + 1) * interval * 1000;
        while (now_ms() < next)
            usleep(50000);
        s[n] = (sample){rss_kib(), fd_count(), atomic_load(&n_hangups), atomic_load(&n_abandoned)};
        printf("{\"soak\":\"sample\",\"t_s\":%lld,\"rss_kib\":%ld,\"fds\":%d,\"watches\":%zu,"
               "\"requests\":%lu,\"watch_hangups\":%lu,\"abandoned\":%lu,\"half_closed\":%lu,"
               "\"slowloris\":%lu}\n",
               (long long)((now_ms() - t0) / 1000), s[n].rss, s[n].fds, open_watches(),
               atomic_load(&n_requests), atomic_load(&n_hangups), atomic_load(&n_abandoned),
               atomic_load(&n_halfclosed), atomic_load(&n_slowloris));
        fflush(stdout);
        n++;
    }
    atomic_store(&stop, true);
    for (size_t i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    size_t half = n / 2;
    if (n >= 2) {
        bool fds_flat = flat(s, half, n, false, 32), rss_flat = flat(s, half, n, true, 8192);
        /* A server that stopped accepting is flat too: the raw clients must
         * have got through in the second half about as often as in the first. */
        unsigned long first_load = s[half - 1].hangups + s[half - 1].abandoned;
        unsigned long second_load = s[n - 1].hangups + s[n - 1].abandoned - first_load;
        bool kept_serving = second_load * 2 >= first_load;
        printf("{\"soak\":\"summary\",\"seconds\":%ld,\"samples\":%zu,"
               "\"first_half_avg_rss_kib\":%.0f,\"second_half_avg_rss_kib\":%.0f,"
               "\"first_half_avg_fds\":%.1f,\"second_half_avg_fds\":%.1f,"
               "\"second_half_first_fds\":%d,\"second_half_first_rss_kib\":%ld,"
               "\"rss_flat\":%s,\"fds_flat\":%s,\"flat\":%s,\"first_half_raw_clients\":%lu,"
               "\"second_half_raw_clients\":%lu,\"kept_serving\":%s,\"requests\":%lu,"
               "\"watch_hangups\":%lu,\"abandoned\":%lu,\"half_closed\":%lu,\"slowloris\":%lu}\n",
               seconds, n, avg(s, 0, half, true), avg(s, half, n, true), avg(s, 0, half, false),
               avg(s, half, n, false), s[half].fds, s[half].rss, rss_flat ? "true" : "false",
               fds_flat ? "true" : "false", rss_flat && fds_flat ? "true" : "false", first_load,
               second_load, kept_serving ? "true" : "false", atomic_load(&n_requests),
               atomic_load(&n_hangups), atomic_load(&n_abandoned), atomic_load(&n_halfclosed),
               atomic_load(&n_slowloris));
    }
    fakeapi_stop(srv);
    curl_global_cleanup();
    return 0;
}
