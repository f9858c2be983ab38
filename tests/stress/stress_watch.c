/*
 * stress_watch - the server's event loop under churn: client threads open
 * watches over raw sockets (some with bookmarks every few milliseconds, some
 * with a one-second timeout, some with a label selector), read a random
 * amount and hang up, or read to the end; others send GETs that a delay
 * fault holds back; a writer creates, updates and deletes ConfigMaps in
 * process; a meddler closes watches by client and lists them. Every
 * suspended connection must be resumed by exactly one party, every hang-up
 * must free its watch, and the server must stop promptly with watches open.
 *
 * A plain program (no Criterion: it runs under ThreadSanitizer too):
 *   stress_watch [ROUNDS]      (rounds per client thread, default 200)
 * Prints one JSON object; exits 0 when every check held.
 */
#include <arpa/inet.h>
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

#define STRESS_NAME "stress_watch"
#include "stress.h"

#define CLIENTS 6
#define KEYS 50

static fakeapi_server *srv;
static atomic_bool done;
static atomic_ulong failures, watches_opened, bytes_read, delayed_gets, ended_by_server;

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A raw HTTP/1.1 request on a new connection; the socket, or -1. */
static int send_request(const char *path, const char *agent, bool close_after)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(fakeapi_port(srv))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char req[1024];
    int n =
        snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: %s\r\n%s\r\n",
                 path, agent, close_after ? "Connection: close\r\n" : "");
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Read up to limit bytes (0 = to the end) within ms; the byte count, and
 * *ended if the server ended the response. */
static size_t read_some(int fd, size_t limit, int ms, bool *ended, char *head, size_t headlen)
{
    char buf[8192];
    size_t total = 0;
    int64_t until = now_ms() + ms;
    *ended = false;
    while ((!limit || total < limit) && now_ms() < until) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)(until - now_ms())) <= 0)
            break;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
            *ended = true;
            break;
        }
        if (total < headlen) {
            size_t c = (size_t)n < headlen - total ? (size_t)n : headlen - total;
            memcpy(head + total, buf, c);
        }
        total += (size_t)n;
        /* The end of a chunked response: the last chunk. */
        if (n >= 5 && !memcmp(buf + n - 5, "0\r\n\r\n", 5)) {
            *ended = true;
            break;
        }
    }
    return total;
}

typedef struct client_args {
    int id;
    int rounds;
} client_args;

static void *client_run(void *ud)
{
    client_args *ca = ud;
    uint64_t rnd = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(ca->id + 1) * 0x100000001b3ULL;
    char agent[32];
    snprintf(agent, sizeof agent, "stress-%d", ca->id);
    for (int r = 0; r < ca->rounds && !atomic_load(&failures); r++) {
        /* One in ten a one-second watch read to its end; the rest quick. */
        static const unsigned kinds[10] = {0, 1, 3, 4, 0, 1, 3, 4, 0, 2};
        unsigned kind = kinds[next_rand(&rnd) % 10];
        const char *path;
        switch (kind) {
        case 0:
            path = "/api/v1/namespaces/default/configmaps?watch=true";
            break;
        case 1:
            path = "/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true";
            break;
        case 2:
            path = "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1";
            break;
        case 3:
            path = "/api/v1/configmaps?watch=true&labelSelector=g%3Dodd";
            break;
        default:
            path = "/api/v1/namespaces/default/configmaps/k1"; /* delayed by a fault */
            break;
        }
        int fd = send_request(path, agent, kind == 4);
        if (fd < 0) {
            FAIL("client %d: cannot connect", ca->id);
            break;
        }
        bool ended;
        char head[16] = {0};
        if (kind == 4) {
            size_t n = read_some(fd, 0, 3000, &ended, head, sizeof head - 1);
            if (n == 0 || strncmp(head, "HTTP/1.1 ", 9))
                FAIL("client %d: delayed GET got no answer", ca->id);
            else
                atomic_fetch_add(&delayed_gets, 1);
        } else if (kind == 2) {
            size_t n = read_some(fd, 0, 4000, &ended, head, sizeof head - 1);
            if (!ended)
                FAIL("client %d: a watch with timeoutSeconds=1 still open after 4 s", ca->id);
            else
                atomic_fetch_add(&ended_by_server, 1);
            atomic_fetch_add(&bytes_read, n);
            atomic_fetch_add(&watches_opened, 1);
        } else {
            size_t limit = 1 + (size_t)(next_rand(&rnd) % 20000);
            int ms = 1 + (int)(next_rand(&rnd) % 40);
            atomic_fetch_add(&bytes_read, read_some(fd, limit, ms, &ended, head, 0));
            atomic_fetch_add(&watches_opened, 1);
        }
        close(fd); /* hang up, read or not */
    }
    return NULL;
}

static void *writer_run(void *ud)
{
    (void)ud;
    uint64_t rnd = 42;
    char doc[256];
    for (unsigned long i = 0; !atomic_load(&done); i++) {
        int k = (int)(next_rand(&rnd) % KEYS);
        int len;
        if (next_rand(&rnd) % 5 == 0) {
            char name[16];
            snprintf(name, sizeof name, "k%d", k);
            if (k != 1)
                fakeapi_delete(srv, "v1", "ConfigMap", "default", name, NULL);
            continue;
        }
        len = snprintf(doc, sizeof doc,
                       "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                       "\"k%d\",\"namespace\":\"default\",\"labels\":{\"g\":\"%s\"}},"
                       "\"data\":{\"i\":\"%lu\"}}",
                       k, i % 2 ? "odd" : "even", i);
        if (fakeapi_apply(srv, doc, (size_t)len, NULL) < 0)
            FAIL("write %lu failed", i);
        if (i % 8 == 0)
            usleep(1000);
    }
    return NULL;
}

static void *meddler_run(void *ud)
{
    (void)ud;
    uint64_t rnd = 7;
    while (!atomic_load(&done)) {
        usleep(3000);
        fakeapi_watch_info *w = NULL;
        size_t n = 0;
        if (fakeapi_watches(srv, &w, &n) == 0)
            free(w);
        if (next_rand(&rnd) % 8 == 0) {
            char who[32];
            snprintf(who, sizeof who, "stress-%d", (int)(next_rand(&rnd) % CLIENTS));
            fakeapi_close_watches(srv, who);
        }
    }
    return NULL;
}

static size_t open_watches(void)
{
    fakeapi_watch_info *w = NULL;
    size_t n = 0;
    if (fakeapi_watches(srv, &w, &n) < 0)
        return (size_t)-1;
    free(w);
    return n;
}

/* Open watches, then stop the server under them: prompt, every stream ends. */
static void stop_with_open_watches(void)
{
    int fds[20];
    for (int i = 0; i < 20; i++)
        fds[i] = send_request(i % 2 ? "/api/v1/namespaces/default/configmaps?watch=true"
                                    : "/api/v1/configmaps?watch=true&allowWatchBookmarks=true",
                              "stress-stop", false);
    int64_t t0 = now_ms();
    while (open_watches() < 20 && now_ms() - t0 < 5000)
        usleep(5000);
    if (open_watches() != 20)
        FAIL("only %zu of 20 watches open before stop", open_watches());
    t0 = now_ms();
    fakeapi_stop(srv);
    srv = NULL;
    int64_t took = now_ms() - t0;
    if (took > 2000)
        FAIL("fakeapi_stop took %lld ms with 20 open watches", (long long)took);
    for (int i = 0; i < 20; i++) {
        bool ended = false;
        char head[1];
        if (fds[i] >= 0)
            read_some(fds[i], 0, 2000, &ended, head, 0);
        if (!ended)
            FAIL("watch %d still open after stop", i);
        if (fds[i] >= 0)
            close(fds[i]);
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    if (rounds < 1) {
        fprintf(stderr, "usage: stress_watch [ROUNDS]\n");
        return 2;
    }
    fakeapi_options o = {.seed = 3, .watch_queue_len = 64, .bookmark_interval_ms = 5};
    if (fakeapi_start(&o, &srv) < 0) {
        fprintf(stderr, "stress_watch: cannot start the server\n");
        return 1;
    }
    static const char k1[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                             "{\"name\":\"k1\",\"namespace\":\"default\"}}";
    fakeapi_apply(srv, k1, sizeof k1 - 1, NULL);
    fakeapi_error err;
    fakeapi_fault delay = {
        .verb = "get", .resource = "configmaps", .action = FAKEAPI_FAULT_DELAY, .delay_ms = 30};
    if (fakeapi_fault_add(srv, &delay, NULL, &err) < 0) {
        fprintf(stderr, "stress_watch: fault rule: %s\n", err.message);
        return 1;
    }
    int64_t t0 = now_ms();
    pthread_t clients[CLIENTS], writer, meddler;
    client_args args[CLIENTS];
    pthread_create(&writer, NULL, writer_run, NULL);
    pthread_create(&meddler, NULL, meddler_run, NULL);
    for (int i = 0; i < CLIENTS; i++) {
        args[i] = (client_args){.id = i, .rounds = rounds};
        pthread_create(&clients[i], NULL, client_run, &args[i]);
    }
    for (int i = 0; i < CLIENTS; i++)
        pthread_join(clients[i], NULL);
    atomic_store(&done, true);
    pthread_join(writer, NULL);
    pthread_join(meddler, NULL);

    /* Every client has hung up: every watch must go, promptly. */
    int64_t t1 = now_ms();
    while (open_watches() > 0 && now_ms() - t1 < 3000)
        usleep(5000);
    size_t left = open_watches();
    if (left)
        FAIL("%zu watches outlived their clients by 3 s", left);
    stop_with_open_watches();
    printf("{\"stress\":\"watch\",\"rounds\":%d,\"watches\":%lu,\"ended_by_server\":%lu,"
           "\"delayed_gets\":%lu,\"bytes\":%lu,\"seconds\":%.1f,\"failures\":%lu}\n",
           rounds * CLIENTS, atomic_load(&watches_opened), atomic_load(&ended_by_server),
           atomic_load(&delayed_gets), atomic_load(&bytes_read), (double)(now_ms() - t0) / 1e3,
           atomic_load(&failures));
    return atomic_load(&failures) ? 1 : 0;
}
