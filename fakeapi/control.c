/*
 * control.c - the control endpoint under /fakeapi/v1/, kept off the
 * Kubernetes paths: server statistics and on-demand compaction.
 *
 *   GET  /fakeapi/v1/stats            revision, compacted, history, watches
 *   POST /fakeapi/v1/compact[?revision=N]   compact history up to N (default: now)
 */
#include <stdlib.h>
#include <string.h>

#include "server_int.h"
#include "watch.h"

static void stats(fakeapi_server *srv, fakeapi__resp *resp)
{
    fakeapi__store_lock(srv->store);
    json_t *st =
        json_pack("{s:I, s:I, s:I}", "revision", (json_int_t)fakeapi__store_rev(srv->store),
                  "compacted", (json_int_t)fakeapi__store_compacted(srv->store), "historyEvents",
                  (json_int_t)fakeapi__store_history_len(srv->store));
    fakeapi__store_unlock(srv->store);
    json_object_set_new(st, "watches",
                        json_integer((json_int_t)fakeapi__hub_watch_count(srv->hub)));
    json_object_set_new(st, "slowWatchersClosed",
                        json_integer((json_int_t)fakeapi__hub_slow_closed(srv->hub)));
    json_object_set_new(st, "requests", json_integer((json_int_t)atomic_load(&srv->requests)));
    fakeapi__resp_json(resp, 200, st);
}

static void compact(fakeapi_server *srv, const fakeapi__req *req, fakeapi__resp *resp)
{
    long long upto = fakeapi__q_int(req, "revision", 0);
    if (upto < 0) {
        fakeapi__resp_error(resp, 400, "BadRequest", NULL, "revision: not a number");
        return;
    }
    fakeapi__store_lock(srv->store);
    if (upto == 0)
        upto = (long long)fakeapi__store_rev(srv->store);
    int rc = fakeapi__store_compact(srv->store, (uint64_t)upto);
    uint64_t compacted = fakeapi__store_compacted(srv->store);
    fakeapi__store_unlock(srv->store);
    if (rc < 0) {
        fakeapi__resp_error(resp, 500, "InternalError", NULL, "compaction failed");
        return;
    }
    fakeapi__resp_json(resp, 200, json_pack("{s:I}", "compacted", (json_int_t)compacted));
}

void fakeapi__control(fakeapi_server *srv, const fakeapi__req *req, const fakeapi__route *rt,
                      fakeapi__resp *resp)
{
    if (!strcmp(rt->name, "stats") && !strcmp(req->method, "GET"))
        stats(srv, resp);
    else if (!strcmp(rt->name, "compact") && !strcmp(req->method, "POST"))
        compact(srv, req, resp);
    else
        fakeapi__resp_error(resp, 404, "NotFound", NULL, "no control endpoint %s %s", req->method,
                            req->path);
}
