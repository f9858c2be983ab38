/*
 * health.c - /livez, /readyz, /healthz and their checks (see health.h).
 *
 * The checks are the ones kube-apiserver has that mean something here:
 * ping and log (the process answers), etcd and, for readiness,
 * etcd-readiness (the store answers a read), and shutdown (readiness ends
 * when fakeapi_stop begins). The words are the API server's healthz
 * package's.
 */
#include "health.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "strbuf.h"

/* A check: NULL when it passes, else why it failed (for the single-check
 * path; the list withholds the reason, as the real server does). */
typedef const char *(*check_fn)(fakeapi_server *srv);

typedef struct check {
    const char *name;
    check_fn run;
    bool live, ready, health; /* the endpoints that list it */
} check;

static const char *check_ok(fakeapi_server *srv)
{
    (void)srv;
    return NULL;
}

/* The store answers a read (kube-apiserver's etcd checks ask etcd). */
static const char *check_store(fakeapi_server *srv)
{
    fakeapi__store_lock(srv->store);
    int rc = fakeapi__store_state(srv->store, "/namespaces", "", "default");
    fakeapi__store_unlock(srv->store);
    return rc < 0 ? "the store did not answer a read" : NULL;
}

static const char *check_shutdown(fakeapi_server *srv)
{
    return atomic_load(&srv->stopping) ? "process is shutting down" : NULL;
}

static const check checks[] = {
    {"ping", check_ok, true, true, true},
    {"log", check_ok, true, true, true},
    {"etcd", check_store, true, true, true},
    {"etcd-readiness", check_store, false, true, false},
    {"shutdown", check_shutdown, false, true, false},
};

static bool listed(const check *ck, const char *endpoint)
{
    if (!strcmp(endpoint, "livez"))
        return ck->live;
    if (!strcmp(endpoint, "readyz"))
        return ck->ready;
    return ck->health;
}

static void answer_text(fakeapi__resp *resp, int status, fakeapi__strbuf *b)
{
    size_t len = 0;
    char *text = fakeapi__strbuf_take(b, &len);
    if (!text || b->failed) {
        free(text);
        fakeapi__resp_error(resp, 500, "InternalError", NULL, "out of memory");
        return;
    }
    resp->content_type = "text/plain; charset=utf-8";
    fakeapi__resp_take(resp, status, text, len);
}

/* /livez/ping: "ok", or 500 "internal server error: <why>". */
static void serve_one(fakeapi_server *srv, const check *ck, fakeapi__resp *resp)
{
    fakeapi__strbuf b = {.max = 4096};
    const char *why = ck->run(srv);
    if (why)
        fakeapi__strbuf_addf(&b, "internal server error: %s\n", why);
    else
        fakeapi__strbuf_adds(&b, "ok");
    answer_text(resp, why ? 500 : 200, &b);
}

/* The endpoint: every check it lists, in order. Failures are always listed;
 * success is "ok" unless ?verbose (present, whatever its value). One
 * ?exclude=NAME is honoured (the query keeps one value per parameter). */
static void serve_all(fakeapi_server *srv, const fakeapi__req *req, const char *endpoint,
                      fakeapi__resp *resp)
{
    const char *exclude = fakeapi__q(req, "exclude");
    bool excluded_seen = false, failed = false;
    fakeapi__strbuf b = {.max = 16384};
    for (size_t i = 0; i < sizeof checks / sizeof *checks; i++) {
        const check *ck = &checks[i];
        if (!listed(ck, endpoint))
            continue;
        if (exclude && !strcmp(exclude, ck->name)) {
            excluded_seen = true;
            fakeapi__strbuf_addf(&b, "[+]%s excluded: ok\n", ck->name);
        } else if (ck->run(srv)) {
            failed = true;
            fakeapi__strbuf_addf(&b, "[-]%s failed: reason withheld\n", ck->name);
        } else {
            fakeapi__strbuf_addf(&b, "[+]%s ok\n", ck->name);
        }
    }
    if (exclude && *exclude && !excluded_seen)
        fakeapi__strbuf_addf(&b,
                             "warn: some health checks cannot be excluded: no matches for "
                             "\"%s\"\n",
                             exclude);
    if (failed) {
        fakeapi__strbuf_addf(&b, "%s check failed\n", endpoint);
        answer_text(resp, 500, &b);
        return;
    }
    if (!fakeapi__q(req, "verbose")) {
        fakeapi__strbuf_deinit(&b);
        b = (fakeapi__strbuf){.max = 16};
        fakeapi__strbuf_adds(&b, "ok");
    } else {
        fakeapi__strbuf_addf(&b, "%s check passed\n", endpoint);
    }
    answer_text(resp, 200, &b);
}

void fakeapi__health_serve(fakeapi_server *srv, const fakeapi__req *req, const fakeapi__route *rt,
                           fakeapi__resp *resp)
{
    if (!rt->name[0]) {
        serve_all(srv, req, rt->resource, resp);
        return;
    }
    for (size_t i = 0; i < sizeof checks / sizeof *checks; i++) {
        if (listed(&checks[i], rt->resource) && !strcmp(checks[i].name, rt->name)) {
            serve_one(srv, &checks[i], resp);
            return;
        }
    }
    fakeapi__resp_error(resp, 404, "NotFound", NULL,
                        "the server could not find the requested resource");
}
