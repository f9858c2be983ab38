/*
 * record.c - the audit log (see record.h): one Event per request.
 *
 * The Event carries what kube-apiserver's would at RequestResponse level:
 * auditID, stage, requestURI (as sent), verb, user (a service-account
 * token's account; the TLS client certificate's CN and O; otherwise the
 * configured user, or system:anonymous), sourceIPs, userAgent, objectRef,
 * responseStatus, requestObject, responseObject and both timestamps. The
 * request's Content-Type, which an Event has no field for, goes into the
 * annotation kube-harness.dev/content-type, which the importer reads.
 * auditIDs count up from the server's start, so a scenario run that records
 * draws nothing from the seeded generator and stays what it was.
 *
 * Any thread (the front end's loop threads, in-process callers); record_mu
 * guards the file and its options, and is never held while a body is
 * parsed or a line is built.
 */
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kh/yaml.h"
#include "protobuf.h"
#include "timefmt.h"
#include "token.h"

#define MAX_RECORDED_BODY ((size_t)8 << 20)
#define REDACTED_B64 "KHJlZGFjdGVkKQ==" /* "(redacted)" */

int fakeapi__record_open(fakeapi_server *srv, const char *path, bool secrets, const char *user,
                         char *err, size_t errlen)
{
    FILE *f = NULL;
    if (path && !(f = fopen(path, "w"))) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    pthread_mutex_lock(&srv->record_mu);
    FILE *old = srv->record;
    srv->record = f;
    srv->record_secrets = secrets;
    snprintf(srv->record_user, sizeof srv->record_user, "%s", user ? user : "");
    atomic_store(&srv->recording, f != NULL);
    pthread_mutex_unlock(&srv->record_mu);
    if (old)
        fclose(old);
    return 0;
}

void fakeapi__record_close(fakeapi_server *srv)
{
    char err[8];
    fakeapi__record_open(srv, NULL, false, NULL, err, sizeof err);
}

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* Who made the request, as an authenticator would name them. */
static json_t *user_of(fakeapi_server *srv, const fakeapi__req *req,
                       const fakeapi__record_info *info, const char *configured)
{
    json_t *claims = NULL;
    char why[200];
    if (req->token && *req->token &&
        fakeapi__token_verify(srv->sa_key, req->token, &claims, why, sizeof why) == 0) {
        const json_t *k8s = json_object_get(claims, "kubernetes.io");
        const char *ns = jstr(k8s, "namespace"),
                   *sa = jstr(json_object_get(k8s, "serviceaccount"), "name");
        if (ns && sa) {
            char name[600], group[300];
            snprintf(name, sizeof name, "system:serviceaccount:%s:%s", ns, sa);
            snprintf(group, sizeof group, "system:serviceaccounts:%s", ns);
            json_t *u = json_pack("{s:s, s:[s, s, s]}", "username", name, "groups",
                                  "system:serviceaccounts", group, "system:authenticated");
            json_decref(claims);
            return u;
        }
        json_decref(claims);
    }
    if (info->tls_client)
        return json_pack("{s:s, s:[s, s]}", "username", "fakeapi-admin", "groups", "system:masters",
                         "system:authenticated");
    if (configured && *configured)
        return json_pack("{s:s, s:[s]}", "username", configured, "groups", "system:authenticated");
    return json_pack("{s:s, s:[s]}", "username", "system:anonymous", "groups",
                     "system:unauthenticated");
}

/* Secret values replaced (in place): data with base64 "(redacted)",
 * stringData with "(redacted)"; a List's items too. */
static void redact(json_t *obj)
{
    json_t *items = json_object_get(obj, "items"), *item, *v;
    const char *k;
    size_t i;
    json_array_foreach(items, i, item) redact(item);
    json_t *data = json_object_get(obj, "data");
    json_object_foreach(data, k, v) json_object_set_new(data, k, json_string(REDACTED_B64));
    json_t *sdata = json_object_get(obj, "stringData");
    json_object_foreach(sdata, k, v) json_object_set_new(sdata, k, json_string("(redacted)"));
    /* a JSON patch: the values it writes */
    if (json_is_array(obj)) {
        json_array_foreach(obj, i, item)
        {
            const char *p = jstr(item, "path");
            if (p && (!strncmp(p, "/data", 5) || !strncmp(p, "/stringData", 11)) &&
                json_object_get(item, "value"))
                json_object_set_new(item, "value", json_string("(redacted)"));
        }
    }
}

/* A body as JSON (decoded from protobuf or YAML as the server decodes
 * it, as kube-apiserver logs the object), or NULL (empty, too large,
 * undecodable). */
static json_t *body_json(const char *body, size_t len, const char *ctype)
{
    if (!body || len == 0 || len > MAX_RECORDED_BODY)
        return NULL;
    if (ctype && strstr(ctype, "protobuf")) {
        json_t *out = NULL;
        return fakeapi__pb_decode(body, len, &out, NULL, 0) == 0 ? out : NULL;
    }
    if (ctype && strstr(ctype, "yaml")) {
        json_t *docs = NULL;
        if (kh_yaml_load(body, len, &docs, NULL) != 0)
            return NULL;
        json_t *one = json_array_size(docs) == 1 ? json_incref(json_array_get(docs, 0)) : NULL;
        json_decref(docs);
        return one;
    }
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t'))
        i++;
    if (i == len || (body[i] != '{' && body[i] != '['))
        return NULL;
    return json_loadb(body, len, 0, NULL);
}

static const char *group_version(const fakeapi__route *rt, char *buf, size_t len)
{
    snprintf(buf, len, "%s", rt->version);
    return buf;
}

void fakeapi__record(fakeapi_server *srv, const fakeapi__record_info *info, const fakeapi__req *req,
                     const fakeapi__route *rt, const fakeapi__reqinfo *ri,
                     const fakeapi__resp *resp)
{
    char configured[256];
    bool secrets;
    pthread_mutex_lock(&srv->record_mu);
    bool on = srv->record != NULL;
    snprintf(configured, sizeof configured, "%s", srv->record_user);
    secrets = srv->record_secrets;
    pthread_mutex_unlock(&srv->record_mu);
    if (!on)
        return;

    unsigned long seq = atomic_fetch_add(&srv->record_seq, 1) + 1;
    char id[64], recv[40], done[40], ver[64];
    snprintf(id, sizeof id, "00000000-0000-4000-8000-%012lx", seq);
    fakeapi__fmt_microtime(info->received_ns, recv, sizeof recv);
    fakeapi__fmt_microtime(fakeapi__srv_now(srv), done, sizeof done);
    bool watch = resp->watch != NULL;
    /* a non-resource URL (discovery, /version) is a get, as kube-apiserver logs it */
    const char *verb = ri->verb && strcmp(ri->verb, "other") != 0 ? ri->verb
                       : !strcmp(req->method, "GET")              ? "get"
                                                                  : "other";
    json_t *ev = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "kind", "Event",
                           "apiVersion", "audit.k8s.io/v1", "level", "RequestResponse", "auditID",
                           id, "stage", watch ? "ResponseStarted" : "ResponseComplete",
                           "requestURI", info->target ? info->target : req->path, "verb", verb,
                           "user", user_of(srv, req, info, configured));
    if (!ev)
        return;
    if (info->source_ip)
        json_object_set_new(ev, "sourceIPs", json_pack("[s]", info->source_ip));
    if (req->user_agent)
        json_object_set_new(ev, "userAgent", json_string(req->user_agent));
    if (ri->resource && *ri->resource) {
        json_t *ref = json_pack("{s:s}", "resource", ri->resource);
        if (ri->ns && *ri->ns)
            json_object_set_new(ref, "namespace", json_string(ri->ns));
        if (ri->name && *ri->name)
            json_object_set_new(ref, "name", json_string(ri->name));
        if (ri->group && *ri->group)
            json_object_set_new(ref, "apiGroup", json_string(ri->group));
        if (rt->version[0])
            json_object_set_new(ref, "apiVersion", json_string(group_version(rt, ver, sizeof ver)));
        if (ri->sub && *ri->sub)
            json_object_set_new(ref, "subresource", json_string(ri->sub));
        json_object_set_new(ev, "objectRef", ref);
    }
    json_t *rbody = watch ? NULL : body_json(resp->body, resp->body_len, resp->content_type);
    json_t *status = json_pack("{s:{}, s:i}", "metadata", "code", resp->status);
    if (resp->status >= 400 && rbody) {
        const char *st = jstr(rbody, "status"), *msg = jstr(rbody, "message"),
                   *reason = jstr(rbody, "reason");
        if (st)
            json_object_set_new(status, "status", json_string(st));
        if (msg)
            json_object_set_new(status, "message", json_string(msg));
        if (reason)
            json_object_set_new(status, "reason", json_string(reason));
    }
    json_object_set_new(ev, "responseStatus", status);
    bool secret = ri->resource && !strcmp(ri->resource, "secrets") && (!ri->group || !*ri->group);
    json_t *qbody = watch ? NULL : body_json(req->body, req->body_len, req->content_type);
    /* as kube-apiserver does: the object's name, uid and resourceVersion from
     * the request's object when the path does not carry them */
    json_t *ref = json_object_get(ev, "objectRef");
    const json_t *qmeta = json_object_get(qbody, "metadata");
    if (ref && json_is_object(qmeta) && (!ri->sub || !*ri->sub)) {
        static const char *const from_body[] = {"name", "uid", "resourceVersion", NULL};
        for (size_t i = 0; from_body[i]; i++) {
            const char *v = jstr(qmeta, from_body[i]);
            if (v && *v && !json_object_get(ref, from_body[i]))
                json_object_set_new(ref, from_body[i], json_string(v));
        }
    }
    if (qbody) {
        if (secret && !secrets)
            redact(qbody);
        json_object_set_new(ev, "requestObject", qbody);
    }
    if (rbody) {
        if (secret && !secrets)
            redact(rbody);
        json_object_set_new(ev, "responseObject", rbody);
    }
    json_object_set_new(ev, "requestReceivedTimestamp", json_string(recv));
    json_object_set_new(ev, "stageTimestamp", json_string(done));
    json_t *ann = json_object();
    if (req->content_type && req->body_len)
        json_object_set_new(ann, "kube-harness.dev/content-type", json_string(req->content_type));
    if (json_object_size(ann))
        json_object_set_new(ev, "annotations", ann);
    else
        json_decref(ann);
    char *line = json_dumps(ev, JSON_COMPACT);
    json_decref(ev);
    if (!line)
        return;
    pthread_mutex_lock(&srv->record_mu);
    if (srv->record) {
        fputs(line, srv->record);
        fputc('\n', srv->record);
        fflush(srv->record);
    }
    pthread_mutex_unlock(&srv->record_mu);
    free(line);
}
