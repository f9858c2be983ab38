/*
 * exchange.c - the transport-neutral steps of serving a request (see
 * exchange.h), shared by the HTTP front end and the in-process exchange.
 */
#include "exchange.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonscan.h"
#include "metrics.h"
#include "trace.h"

bool fakeapi__exchange_target(const char *target, char **path, json_t **query, fakeapi__resp *resp)
{
    char err[400];
    int rc = fakeapi__url_split(target, path, query, err, sizeof err);
    if (rc == 0)
        return true;
    /* As kube-apiserver: a path no name can have is not found; a query
     * that cannot be read exactly is refused rather than half-read. */
    if (rc == FAKEAPI__URL_BAD_PATH)
        fakeapi__resp_error(resp, 404, "NotFound", NULL, "%s", err);
    else if (rc == FAKEAPI__URL_NOMEM)
        fakeapi__resp_error(resp, 500, "InternalError", NULL, "%s", err);
    else
        fakeapi__resp_error(resp, 400, "BadRequest", NULL, "%s", err);
    return false;
}

void fakeapi__exchange_too_large(fakeapi_server *srv, fakeapi__resp *resp)
{
    fakeapi__resp_error(resp, 413, "RequestEntityTooLarge", NULL,
                        "the request body is larger than the limit of %zu bytes", srv->max_body);
}

static bool media_in(const char *ct, const char *const *types)
{
    for (; *types; types++)
        if (fakeapi__media_is(ct, *types))
            return true;
    return false;
}

/*
 * Without a media type the server reads, 415. This is also what keeps web
 * pages out where the Origin check cannot (a browser too old to send
 * Origin): a browser sends a cross-site request without asking first (CORS
 * preflight, which this server never grants) only as GET, HEAD or POST with
 * a form or text/plain body, so a POST to the control endpoint needs a JSON
 * (or YAML) Content-Type even without a body, and a body to a verb that
 * reads one needs a type it reads (a verb the path does not have is 405,
 * later).
 */
bool fakeapi__exchange_media_ok(const char *path, const char *method, const char *ct, bool browser,
                                size_t body_len, fakeapi__resp *resp)
{
    static const char *const objects[] = {"application/json", "application/yaml",
                                          "application/vnd.kubernetes.protobuf", NULL};
    static const char *const patches[] = {
        "application/json-patch+json", "application/merge-patch+json",
        "application/strategic-merge-patch+json", "application/apply-patch+yaml", NULL};
    static const char *const control[] = {"application/json", "application/yaml", NULL};
    fakeapi__route rt;
    fakeapi__route_parse(path, &rt);
    const char *const *ok = NULL;
    const char *list = NULL;
    if (rt.kind == FAKEAPI__RT_CONTROL && !strcmp(method, "POST")) {
        ok = control;
        list = "application/json, application/yaml";
    } else if (body_len > 0 && !strcmp(method, "POST") &&
               (rt.kind == FAKEAPI__RT_COLLECTION || rt.kind == FAKEAPI__RT_SUBRESOURCE)) {
        ok = objects;
        list = "application/json, application/yaml, application/vnd.kubernetes.protobuf";
    } else if (body_len > 0 && !strcmp(method, "PUT") &&
               (rt.kind == FAKEAPI__RT_OBJECT || rt.kind == FAKEAPI__RT_SUBRESOURCE)) {
        ok = objects;
        list = "application/json, application/yaml, application/vnd.kubernetes.protobuf";
    } else if (body_len > 0 && !strcmp(method, "PATCH") &&
               (rt.kind == FAKEAPI__RT_OBJECT || rt.kind == FAKEAPI__RT_SUBRESOURCE)) {
        ok = patches;
        list = "application/json-patch+json, application/merge-patch+json, "
               "application/strategic-merge-patch+json, application/apply-patch+yaml";
    }
    /* No Content-Type with a body is read as JSON, as kube-apiserver does
     * (kubectl create --raw sends none), unless a browser sent it: a page
     * can send a body without one (a Blob) without asking first. A bare
     * POST to the control endpoint (compact) has no such excuse. */
    if (!ok || media_in(ct, ok) || (!ct && !browser && body_len > 0))
        return true;
    fakeapi__resp_error(resp, 415, "UnsupportedMediaType", NULL,
                        "the body of the request was in an unknown format - accepted media "
                        "types include: %s",
                        list);
    return false;
}

void fakeapi__exchange_classify(fakeapi__exchange *ex)
{
    fakeapi__route_parse(ex->req.path, &ex->rt);
    fakeapi__classify(&ex->req, &ex->rt, &ex->ri);
}

bool fakeapi__exchange_unfaulted(const fakeapi__exchange *ex)
{
    return ex->rt.kind == FAKEAPI__RT_CONTROL || ex->rt.kind == FAKEAPI__RT_METRICS;
}

bool fakeapi__exchange_choose(fakeapi_server *srv, fakeapi__exchange *ex)
{
    fakeapi__fault_plan *plan = &ex->plan;
    /* A catch-all rule must not lock out the way to remove it. */
    if (fakeapi__exchange_unfaulted(ex))
        memset(plan, 0, sizeof *plan);
    else
        fakeapi__faults_eval(srv->faults, &ex->ri, plan);
    /* The fired rules that act first: traced, compaction done. */
    for (size_t i = 0; i < plan->n_fired; i++)
        fakeapi__trace_fault(srv, &ex->ri, plan->fired[i], "fired");
    if (plan->compact)
        fakeapi__store_compact_locking(srv->store, 0);
    return plan->delay_ns > 0 && !atomic_load(&srv->stopping);
}

void fakeapi__exchange_delay_arm(fakeapi_server *srv, fakeapi__sleeper *s,
                                 const fakeapi__fault_plan *plan)
{
    int64_t due = fakeapi__srv_now(srv) + plan->delay_ns;
    s->until = due;
    s->reported = true;
    s->holdable = srv->opts.on_held != NULL;
    atomic_store(&s->dropped, false);
    /* Held (deterministic runs): the embedder answers it, told now, once
     * it is armed so that a release finds it. */
    if (fakeapi__waker_arm(srv->waker, s) == FAKEAPI__HELD)
        srv->opts.on_held(srv->opts.on_held_ud, s->id, due);
}

void fakeapi__exchange_pre(fakeapi__exchange *ex, fakeapi__resp *resp)
{
    const fakeapi__fault_plan *plan = &ex->plan;
    ex->req.plan = plan;
    ex->answer = true;
    if (plan->terminal == FAKEAPI_FAULT_ERROR) {
        fakeapi__resp_error(resp, plan->status, plan->reason, NULL, "%s", plan->message);
        resp->retry_after = plan->retry_after;
    } else if (plan->terminal == FAKEAPI_FAULT_DROP) {
        ex->answer = false;
    }
}

/* The resourceVersion a write answered with, for the trace: scanned for
 * (jsonscan.h; a body is always the server's own text), or parsed when the
 * scan cannot answer. */
static void resp_rv(const fakeapi__resp *resp, char *buf, size_t len)
{
    buf[0] = '\0';
    if (resp->body_len > 65536)
        return; /* a big list: not worth parsing for the trace */
    fakeapi__jscan_want want = {.path = {"metadata", "resourceVersion"}};
    if (resp->body && fakeapi__json_scan_own(resp->body, resp->body_len, &want, 1) == 0) {
        if (want.found)
            snprintf(buf, len, "%.*s", (int)want.len, want.str);
        return;
    }
    json_t *b = resp->body ? json_loadb(resp->body, resp->body_len, 0, NULL) : NULL;
    const char *rv =
        json_string_value(json_object_get(json_object_get(b, "metadata"), "resourceVersion"));
    snprintf(buf, len, "%s", rv ? rv : "");
    json_decref(b);
}

void fakeapi__exchange_finish(fakeapi_server *srv, const fakeapi__exchange *ex,
                              const fakeapi__resp *resp, const fakeapi__record_info *info)
{
    char rv[24];
    rv[0] = '\0';
    if (fakeapi__tracing(srv))
        resp_rv(resp, rv, sizeof rv);
    int status = ex->answer ? resp->status : 0;
    fakeapi__metrics_request(srv->metrics, &ex->ri, status);
    fakeapi__trace_request(srv, &ex->ri, ex->req.method, ex->req.path, status, rv);
    if (ex->answer && fakeapi__recording(srv) && !fakeapi__exchange_unfaulted(ex))
        fakeapi__record(srv, info, &ex->req, &ex->rt, &ex->ri, resp);
}
