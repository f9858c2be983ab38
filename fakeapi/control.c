/*
 * control.c - the control endpoint under /fakeapi/v1/, kept off the
 * Kubernetes paths: server statistics and on-demand compaction.
 *
 *   GET  /fakeapi/v1/stats            revision, compacted, history, watches
 *   POST /fakeapi/v1/compact[?revision=N]   compact history up to N (default: now)
 *   GET  /fakeapi/v1/faults           the fault rules with their hit counts
 *   POST /fakeapi/v1/faults           add a rule (or an array of rules), JSON or YAML
 *   DELETE /fakeapi/v1/faults[/ID]    remove one rule, or all
 */
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "kh/yaml.h"
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

static void add_faults(fakeapi_server *srv, const fakeapi__req *req, fakeapi__resp *resp)
{
    json_t *docs = NULL;
    kh_yaml_error yerr;
    if (kh_yaml_load(req->body, req->body_len, &docs, &yerr) < 0 || json_array_size(docs) != 1) {
        fakeapi__resp_error(resp, 400, "BadRequest", NULL,
                            "fault rules: expected one JSON or YAML document (%s)",
                            docs ? "found several" : yerr.message);
        json_decref(docs);
        return;
    }
    char err[400];
    int n = fakeapi__faults_add_json(srv->faults, json_array_get(docs, 0), err, sizeof err);
    json_decref(docs);
    if (n < 0)
        fakeapi__resp_error(resp, 400, "BadRequest", NULL, "%s", err);
    else
        fakeapi__resp_json(resp, 201, fakeapi__faults_list(srv->faults));
}

static void faults(fakeapi_server *srv, const fakeapi__req *req, const char *rest,
                   fakeapi__resp *resp)
{
    const char *m = req->method;
    if (!*rest && !strcmp(m, "GET")) {
        fakeapi__resp_json(resp, 200, fakeapi__faults_list(srv->faults));
    } else if (!*rest && !strcmp(m, "POST")) {
        add_faults(srv, req, resp);
    } else if (!*rest && !strcmp(m, "DELETE")) {
        fakeapi__faults_clear(srv->faults);
        fakeapi__resp_json(resp, 200, json_array());
    } else if (*rest && !strcmp(m, "DELETE")) {
        char *end;
        unsigned long long id = strtoull(rest, &end, 10);
        if (*end || fakeapi__faults_remove(srv->faults, id) < 0)
            fakeapi__resp_error(resp, 404, "NotFound", NULL, "no fault rule %s", rest);
        else
            fakeapi__resp_json(resp, 200, fakeapi__faults_list(srv->faults));
    } else {
        fakeapi__resp_error(resp, 405, "MethodNotAllowed", NULL, "%s not allowed here", m);
    }
}

void fakeapi__control(fakeapi_server *srv, const fakeapi__req *req, const fakeapi__route *rt,
                      fakeapi__resp *resp)
{
    if (!strcmp(rt->name, "stats") && !strcmp(req->method, "GET"))
        stats(srv, resp);
    else if (!strcmp(rt->name, "compact") && !strcmp(req->method, "POST"))
        compact(srv, req, resp);
    else if (!strncmp(rt->name, "faults", 6) && (!rt->name[6] || rt->name[6] == '/'))
        faults(srv, req, rt->name[6] ? rt->name + 7 : "", resp);
    else
        fakeapi__resp_error(resp, 404, "NotFound", NULL, "no control endpoint %s %s", req->method,
                            req->path);
}
