/*
 * stress_exchange - in-process exchanges under churn: client threads call
 * fakeapi_exchange at once (writes, GETs that a delay fault holds back,
 * watches with bookmarks every few milliseconds or a one-second timeout),
 * read their streams a random while, and end them by a cancel from another
 * thread, by reading to the end, or by freeing them open; a meddler closes
 * watches by client and lists them. Every read must return, every ended
 * stream must leave fakeapi_watches, and fakeapi_stop with readers blocked
 * must end them promptly; streams are freed after the stop.
 *
 * A plain program (no Criterion: it runs under ThreadSanitizer too):
 *   stress_exchange [ROUNDS]   (rounds per client thread, default 200)
 * Prints one JSON object; exits 0 when every check held.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fakeapi/fakeapi.h"

#define STRESS_NAME "stress_exchange"
#include "stress.h"

#define CLIENTS 4
#define KEYS 30
#define LAST_READERS 8
#define CMS "/api/v1/namespaces/default/configmaps"

static fakeapi_server *srv;
static atomic_ulong failures, streams, bytes, cancels, delayed;

static int call(const char *method, const char *target, const char *ctype, const char *body,
                const char *ua, fakeapi_exchange_resp *rs)
{
    fakeapi_exchange_req rq = {.method = method,
                               .target = target,
                               .content_type = ctype,
                               .user_agent = ua,
                               .body = body,
                               .body_len = body ? strlen(body) : 0};
    if (fakeapi_exchange(srv, &rq, rs) != 0) {
        FAIL("%s %s: call failed", method, target);
        return -1;
    }
    return rs->status;
}

/* A stream a client offers to the canceller (under mu). */
typedef struct slot {
    pthread_mutex_t mu;
    fakeapi_stream *s;
} slot;

static slot slots[CLIENTS];
static atomic_bool clients_done;

static void *canceller_main(void *ud)
{
    (void)ud;
    unsigned seed = 7;
    while (!atomic_load(&clients_done)) {
        slot *sl = &slots[rand_r(&seed) % CLIENTS];
        pthread_mutex_lock(&sl->mu);
        if (sl->s) {
            fakeapi_stream_cancel(sl->s);
            atomic_fetch_add(&cancels, 1);
        }
        pthread_mutex_unlock(&sl->mu);
        usleep(200 + rand_r(&seed) % 800);
    }
    return NULL;
}

static void *meddler_main(void *ud)
{
    (void)ud;
    unsigned seed = 11;
    while (!atomic_load(&clients_done)) {
        char client[32];
        snprintf(client, sizeof client, "client-%u", rand_r(&seed) % CLIENTS);
        fakeapi_close_watches(srv, client);
        fakeapi_watch_info *wi = NULL;
        size_t n = 0;
        if (fakeapi_watches(srv, &wi, &n) != 0)
            FAIL("fakeapi_watches failed");
        free(wi);
        usleep(1000 + rand_r(&seed) % 3000);
    }
    return NULL;
}

static void watch_round(int id, unsigned *seed, const char *ua)
{
    static const char *const kinds[] = {
        CMS "?watch=true",
        CMS "?watch=true&allowWatchBookmarks=true",
        CMS "?watch=true&timeoutSeconds=1",
        CMS "?watch=true&labelSelector=k%3D3",
    };
    fakeapi_exchange_resp rs;
    if (call("GET", kinds[rand_r(seed) % 4], NULL, NULL, ua, &rs) != 200 || !rs.stream) {
        FAIL("watch: status %d", rs.status);
        fakeapi_exchange_resp_free(&rs);
        return;
    }
    atomic_fetch_add(&streams, 1);
    fakeapi_stream *s = rs.stream;
    rs.stream = NULL;
    fakeapi_exchange_resp_free(&rs);
    int how = rand_r(seed) % 3; /* 0: offered to the canceller, 1: read a while, 2: to the end */
    slot *sl = &slots[id];
    if (how == 0) {
        pthread_mutex_lock(&sl->mu);
        sl->s = s;
        pthread_mutex_unlock(&sl->mu);
    }
    int reads = how == 1 ? 1 + (int)(rand_r(seed) % 5) : 1 << 30;
    int64_t start = now_ms();
    char buf[4096];
    ssize_t n = 1;
    for (int i = 0; i < reads && n > 0; i++) {
        n = fakeapi_stream_read(s, buf, sizeof buf);
        if (n > 0)
            atomic_fetch_add(&bytes, (unsigned long)n);
        if (how == 2 && now_ms() - start > 3000 && n > 0) {
            fakeapi_stream_cancel(s); /* a bookmarking watch never ends by itself */
        }
    }
    if (how == 0) {
        pthread_mutex_lock(&sl->mu);
        sl->s = NULL;
        pthread_mutex_unlock(&sl->mu);
    }
    fakeapi_stream_free(s);
}

static long rounds_per_client = 200;

static void *client_run(void *ud)
{
    int id = (int)(intptr_t)ud;
    unsigned seed = 1000u + (unsigned)id;
    char ua[32];
    snprintf(ua, sizeof ua, "client-%d", id);
    for (long r = 0; r < rounds_per_client; r++) {
        int what = rand_r(&seed) % 4;
        fakeapi_exchange_resp rs;
        char body[256];
        int k = rand_r(&seed) % KEYS;
        if (what == 0) {
            watch_round(id, &seed, ua);
            continue;
        } else if (what == 1) {
            snprintf(body, sizeof body,
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"k%d\","
                     "\"labels\":{\"k\":\"%d\"}},\"data\":{\"r\":\"%ld\"}}",
                     k, k % 5, r);
            int st = call("POST", CMS, "application/json", body, ua, &rs);
            if (st == 409) {
                fakeapi_exchange_resp_free(&rs);
                char target[128];
                snprintf(target, sizeof target, CMS "/k%d", k);
                st = call("PATCH", target, "application/merge-patch+json",
                          "{\"data\":{\"touched\":\"yes\"}}", ua, &rs);
            }
            if (st != 201 && st != 200 && st != 404)
                FAIL("write: status %d", st);
        } else if (what == 2) {
            char target[128];
            snprintf(target, sizeof target, CMS "/k%d", k);
            int st = call("DELETE", target, NULL, NULL, ua, &rs);
            if (st != 200 && st != 404)
                FAIL("delete: status %d", st);
        } else {
            int st = call("GET", CMS "/slow", NULL, NULL, ua, &rs);
            if (st != 404)
                FAIL("delayed get: status %d", st);
            atomic_fetch_add(&delayed, 1);
        }
        fakeapi_exchange_resp_free(&rs);
    }
    return NULL;
}

typedef struct last_reader {
    fakeapi_stream *s;
    pthread_t th;
    atomic_bool done;
    ssize_t rc;
} last_reader;

static void *last_main(void *ud)
{
    last_reader *l = ud;
    char buf[1024];
    ssize_t n;
    while ((n = fakeapi_stream_read(l->s, buf, sizeof buf)) > 0)
        ;
    l->rc = n;
    atomic_store(&l->done, true);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rounds_per_client = atol(argv[1]);
    fakeapi_options o = {.seed = 1, .no_http = true, .bookmark_interval_ms = 5};
    if (fakeapi_start(&o, &srv) != 0) {
        fprintf(stderr, "stress_exchange: cannot start\n");
        return 1;
    }
    fakeapi_error err;
    if (fakeapi_fault_add_json(
            srv, "{\"match\":{\"verb\":\"get\",\"name\":\"slow\"},\"action\":{\"delay\":\"2ms\"}}",
            &err) != 0) {
        fprintf(stderr, "stress_exchange: %s\n", err.message);
        return 1;
    }
    int64_t t0 = now_ms();
    for (int i = 0; i < CLIENTS; i++)
        pthread_mutex_init(&slots[i].mu, NULL);
    pthread_t cl[CLIENTS], canceller, meddler;
    pthread_create(&canceller, NULL, canceller_main, NULL);
    pthread_create(&meddler, NULL, meddler_main, NULL);
    for (int i = 0; i < CLIENTS; i++)
        pthread_create(&cl[i], NULL, client_run, (void *)(intptr_t)i);
    for (int i = 0; i < CLIENTS; i++)
        pthread_join(cl[i], NULL);
    atomic_store(&clients_done, true);
    pthread_join(canceller, NULL);
    pthread_join(meddler, NULL);
    /* Every stream has been freed: none is listed. */
    fakeapi_watch_info *wi = NULL;
    size_t n = 0;
    if (fakeapi_watches(srv, &wi, &n) != 0 || n != 0)
        FAIL("%zu watches still listed after every stream was freed", n);
    free(wi);
    /* Stop with readers blocked: each returns 0, promptly. */
    last_reader last[LAST_READERS];
    for (int i = 0; i < LAST_READERS; i++) {
        fakeapi_exchange_resp rs;
        memset(&last[i], 0, sizeof last[i]);
        if (call("GET", CMS "?watch=true&resourceVersion=0", NULL, NULL, "last", &rs) != 200 ||
            !rs.stream) {
            FAIL("last watch: status %d", rs.status);
            return 1;
        }
        last[i].s = rs.stream;
        pthread_create(&last[i].th, NULL, last_main, &last[i]);
    }
    usleep(20000);
    int64_t s0 = now_ms();
    fakeapi_stop(srv);
    int64_t stop_ms = now_ms() - s0;
    if (stop_ms > 2000)
        FAIL("fakeapi_stop took %lld ms", (long long)stop_ms);
    for (int i = 0; i < LAST_READERS; i++) {
        pthread_join(last[i].th, NULL);
        if (last[i].rc != 0)
            FAIL("a reader blocked at stop returned %zd", last[i].rc);
        fakeapi_stream_free(last[i].s); /* after the stop */
    }
    for (int i = 0; i < CLIENTS; i++)
        pthread_mutex_destroy(&slots[i].mu);
    printf("{\"stress\":\"exchange\",\"rounds\":%ld,\"streams\":%lu,\"cancels\":%lu,"
           "\"delayed_gets\":%lu,\"bytes\":%lu,\"stop_ms\":%lld,\"seconds\":%.1f,\"failures\":%lu}"
           "\n",
           rounds_per_client * CLIENTS, atomic_load(&streams), atomic_load(&cancels),
           atomic_load(&delayed), atomic_load(&bytes), (long long)stop_ms,
           (double)(now_ms() - t0) / 1000.0, atomic_load(&failures));
    return atomic_load(&failures) ? 1 : 0;
}
