/*
 * verbs_delete.c - delete and deletecollection: DeleteOptions from the body
 * or the query, preconditions, finalizers and deletionTimestamp, propagation
 * policies (the garbage collector, gc.c, finishes what they start), and the
 * removal of a CRD's objects with the CRD.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "convert.h"
#include "objmeta.h"
#include "protobuf.h"
#include "selector.h"
#include "timefmt.h"
#include "verbs.h"

typedef struct delete_opts {
    const char *policy;  /* Background, Foreground, Orphan; NULL = kind default */
    int64_t grace;       /* gracePeriodSeconds; FAKEAPI__GRACE_UNSET when not given */
    const char *pre_uid; /* preconditions */
    const char *pre_rv;
    json_t *body; /* owns the strings above when they came from it */
} delete_opts;

static int parse_delete_opts(fakeapi__ctx *c, delete_opts *o)
{
    memset(o, 0, sizeof *o);
    o->policy = fakeapi__q(c->req, "propagationPolicy");
    o->grace = FAKEAPI__GRACE_UNSET;
    const char *gq = fakeapi__q(c->req, "gracePeriodSeconds");
    if (gq && *gq) {
        char *end;
        long long g = strtoll(gq, &end, 10);
        if (*end) {
            fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                                "gracePeriodSeconds: invalid value \"%s\": not an integer", gq);
            return -1;
        }
        o->grace = g;
    }
    if (c->req->body_len > 0 &&
        fakeapi__media_is(c->req->content_type, "application/vnd.kubernetes.protobuf")) {
        /* kubectl drain, helm uninstall: a protobuf DeleteOptions. */
        char err[384];
        if (fakeapi__pb_decode(c->req->body, c->req->body_len, &o->body, err, sizeof err) == 0) {
            const char *kind = json_string_value(json_object_get(o->body, "kind"));
            if (kind && !strcmp(kind, "DeleteOptions"))
                goto decoded;
            snprintf(err, sizeof err, "protobuf body of kind \"%s\" is not DeleteOptions",
                     kind ? kind : "");
        }
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "the body of the request was not valid DeleteOptions: %s", err);
        json_decref(o->body);
        o->body = NULL;
        return -1;
    }
decoded:
    if (c->req->body_len > 0 && !o->body) {
        json_error_t jerr;
        o->body = json_loadb(c->req->body, c->req->body_len, 0, &jerr);
        if (!json_is_object(o->body)) {
            fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                                "the body of the request was not valid DeleteOptions: %s",
                                o->body ? "not an object" : jerr.text);
            json_decref(o->body);
            o->body = NULL;
            return -1;
        }
    }
    if (o->body) {
        const char *p = json_string_value(json_object_get(o->body, "propagationPolicy"));
        if (p)
            o->policy = p;
        json_t *orphan = json_object_get(o->body, "orphanDependents");
        if (!p && json_is_boolean(orphan))
            o->policy = json_is_true(orphan) ? "Orphan" : "Background";
        json_t *g = json_object_get(o->body, "gracePeriodSeconds");
        if (json_is_integer(g))
            o->grace = json_integer_value(g);
        json_t *pre = json_object_get(o->body, "preconditions");
        o->pre_uid = json_string_value(json_object_get(pre, "uid"));
        o->pre_rv = json_string_value(json_object_get(pre, "resourceVersion"));
        /* As the query's dryRun (handler.c): only All, or the delete would be
         * a real one. */
        size_t i;
        json_t *d;
        json_array_foreach(json_object_get(o->body, "dryRun"), i, d)
        {
            const char *v = json_string_value(d);
            if (!v || strcmp(v, "All")) {
                char cause[300];
                snprintf(cause, sizeof cause,
                         "Unsupported value: \"%.200s\": supported values: \"All\"", v ? v : "");
                fakeapi__resp_error(c->resp, 422, "Invalid",
                                    json_pack("{s:s, s:s, s:s, s:[{s:s, s:s, s:s}]}", "name", "",
                                              "group", "meta.k8s.io", "kind", "DeleteOptions",
                                              "causes", "reason", "FieldValueNotSupported",
                                              "message", cause, "field", "dryRun"),
                                    "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: %s", cause);
                json_decref(o->body);
                o->body = NULL;
                return -1;
            }
        }
    }
    if (o->policy && strcmp(o->policy, "Background") && strcmp(o->policy, "Foreground") &&
        strcmp(o->policy, "Orphan")) {
        fakeapi__resp_error(c->resp, 422, "Invalid", NULL,
                            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: "
                            "Unsupported value: \"%s\": supported values: \"Foreground\", "
                            "\"Background\", \"Orphan\"",
                            o->policy);
        json_decref(o->body);
        o->body = NULL;
        return -1;
    }
    return 0;
}

/* A CRD takes its objects with it. Inside the txn, before the CRD goes. */
static int remove_crd_objects(fakeapi__txn *t, const json_t *crd)
{
    const char *name = fakeapi__meta_str(crd, "name");
    json_t *spec = json_object_get(crd, "spec");
    const char *group = json_string_value(json_object_get(spec, "group"));
    const char *plural =
        json_string_value(json_object_get(json_object_get(spec, "names"), "plural"));
    if (!group || !plural)
        return 0;
    char key[512];
    snprintf(key, sizeof key, "%s/%s", group, plural);
    fakeapi__resource *res = fakeapi__registry_find_key(t->srv->reg, key);
    if (!res)
        return 0;
    json_t *victims = json_array();
    /* Collect first: the scan's statement cannot run while we write. */
    int rc = fakeapi__store_load_all(t->srv->store, key, NULL, victims);
    size_t i;
    json_t *obj;
    json_array_foreach(victims, i, obj)
    {
        if (rc == 0)
            rc = fakeapi__txn_remove(t, res, obj);
    }
    json_decref(victims);
    fakeapi__resource_unref(res);
    if (rc == 0 && !t->dry_run)
        fakeapi__registry_remove_crd(t->srv->reg, name);
    return rc;
}

/* Add the finalizer a Foreground or Orphan policy asks for. */
static void policy_finalizer(json_t *obj, const char *policy)
{
    const char *fin = NULL;
    if (policy && !strcmp(policy, "Foreground"))
        fin = "foregroundDeletion";
    else if (policy && !strcmp(policy, "Orphan"))
        fin = "orphan";
    if (fin && !fakeapi__has_finalizer(obj, fin)) {
        json_t *meta = fakeapi__meta(obj);
        json_t *fs = json_object_get(meta, "finalizers");
        if (!json_is_array(fs))
            json_object_set_new(meta, "finalizers", fs = json_array());
        json_array_append_new(fs, json_string(fin));
    }
}

/* The pod's grace period for this delete (the pod strategy's
 * CheckGracefulDelete): the one asked for, else the pod's own, 0 for a pod
 * never bound or already ended, at least 1 when negative. */
static int64_t pod_grace(const json_t *pod, int64_t grace)
{
    const json_t *spec = json_object_get(pod, "spec");
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    int64_t period = grace;
    if (period == FAKEAPI__GRACE_UNSET) {
        const json_t *t = json_object_get(spec, "terminationGracePeriodSeconds");
        period = json_is_integer(t) ? json_integer_value(t) : 30;
    }
    if (!node || !*node || (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))))
        period = 0;
    return period < 0 ? 1 : period;
}

/*
 * Graceful deletion of a pod (rest.BeforeDelete): 0 (kept, deleting), 1
 * (removed), -1 (failed), or 2 when the ordinary delete applies (grace 0).
 */
static int pod_graceful(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj,
                        const char *policy, int64_t grace)
{
    json_t *meta = fakeapi__meta(obj);
    const char *ts = fakeapi__meta_str(obj, "deletionTimestamp");
    const json_t *dgp = json_object_get(meta, "deletionGracePeriodSeconds");
    int64_t now = fakeapi__srv_now(t->srv);
    char buf[40];
    if (ts) {
        /* Already going: a delete may only shorten the grace period. */
        int64_t cur = json_integer_value(dgp), when;
        if (!json_is_integer(dgp) || grace == FAKEAPI__GRACE_UNSET || grace >= cur ||
            fakeapi__parse_time(ts, &when) < 0)
            return 0;
        int64_t period = grace < 0 ? 0 : grace;
        json_t *prev = json_deep_copy(obj);
        if (!prev)
            return -1;
        fakeapi__fmt_time(when + (period - cur) * 1000000000LL, buf, sizeof buf);
        json_object_set_new(meta, "deletionTimestamp", json_string(buf));
        json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(period));
        int rc;
        if (period == 0 && fakeapi__finalizer_count(obj) == 0)
            rc = fakeapi__txn_remove(t, res, obj) < 0 ? -1 : 1;
        else
            rc = fakeapi__txn_put(t, res, obj, prev) < 0 ? -1 : 0;
        json_decref(prev);
        return rc;
    }
    int64_t period = pod_grace(obj, grace);
    if (period == 0)
        return 2;
    json_t *prev = json_deep_copy(obj);
    if (!prev)
        return -1;
    policy_finalizer(obj, policy);
    fakeapi__fmt_time(now + period * 1000000000LL, buf, sizeof buf);
    json_object_set_new(meta, "deletionTimestamp", json_string(buf));
    json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(period));
    json_int_t gen = json_integer_value(json_object_get(meta, "generation"));
    if (gen > 0)
        json_object_set_new(meta, "generation", json_integer(gen + 1));
    int rc = fakeapi__txn_put(t, res, obj, prev);
    json_decref(prev);
    fakeapi__txn_wake_gc(t);
    return rc < 0 ? -1 : 0;
}

int fakeapi__delete_in_txn(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj,
                           const char *policy)
{
    return fakeapi__delete_in_txn_grace(t, res, obj, policy, FAKEAPI__GRACE_UNSET);
}

int fakeapi__delete_in_txn_grace(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj,
                                 const char *policy, int64_t grace)
{
    bool is_ns = !strcmp(res->store_key, "/namespaces");
    if (!strcmp(res->store_key, "/pods")) {
        int rc = pod_graceful(t, res, obj, policy, grace);
        if (rc != 2)
            return rc;
    }
    if (fakeapi__meta_str(obj, "deletionTimestamp"))
        return 0; /* already deleting: nothing more to do */
    json_t *prev = json_deep_copy(obj);
    if (!prev)
        return -1;
    json_t *meta = fakeapi__meta(obj);
    policy_finalizer(obj, policy);
    if (fakeapi__finalizer_count(obj) == 0 && !is_ns) {
        json_decref(prev);
        if (!strcmp(res->kind, "CustomResourceDefinition") && remove_crd_objects(t, obj) < 0)
            return -1;
        return fakeapi__txn_remove(t, res, obj) < 0 ? -1 : 1;
    }
    char now[40];
    fakeapi__fmt_time(fakeapi__srv_now(t->srv), now, sizeof now);
    json_object_set_new(meta, "deletionTimestamp", json_string(now));
    json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(0));
    /* Only a kind that keeps a generation gets it bumped (upstream's BeforeDelete). */
    json_int_t gen = json_integer_value(json_object_get(meta, "generation"));
    if (gen > 0)
        json_object_set_new(meta, "generation", json_integer(gen + 1));
    if (is_ns)
        json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Terminating"));
    int rc = fakeapi__txn_put(t, res, obj, prev);
    json_decref(prev);
    fakeapi__txn_wake_gc(t);
    return rc < 0 ? -1 : 0;
}

static int check_preconditions(fakeapi__ctx *c, const delete_opts *o, const json_t *obj)
{
    const char *uid = fakeapi__meta_str(obj, "uid");
    const char *rv = fakeapi__meta_str(obj, "resourceVersion");
    char q[300];
    fakeapi__resource_qualified(c->res, q, sizeof q);
    if (o->pre_uid && (!uid || strcmp(o->pre_uid, uid))) {
        fakeapi__resp_error(c->resp, 409, "Conflict", fakeapi__details(c->res, c->rt->name),
                            "Operation cannot be fulfilled on %s \"%s\": Precondition failed: "
                            "UID in precondition: %s, UID in object meta: %s",
                            q, c->rt->name, o->pre_uid, uid ? uid : "");
        return -1;
    }
    if (o->pre_rv && (!rv || strcmp(o->pre_rv, rv))) {
        fakeapi__resp_error(c->resp, 409, "Conflict", fakeapi__details(c->res, c->rt->name),
                            "Operation cannot be fulfilled on %s \"%s\": Precondition failed: "
                            "ResourceVersion in precondition: %s, ResourceVersion in object "
                            "meta: %s",
                            q, c->rt->name, o->pre_rv, rv ? rv : "");
        return -1;
    }
    return 0;
}

/* A dry run's answer keeps the resourceVersion the object had (rv, a
 * string, borrowed), not the one the aborted write took. */
static void keep_rv(json_t *obj, json_t *rv)
{
    if (json_is_string(rv))
        json_object_set(fakeapi__meta(obj), "resourceVersion", rv);
}

/* The body of a successful immediate delete (K8S-API.md item 48). */
static json_t *deleted_status(const fakeapi__resource *res, const json_t *obj)
{
    if (!strcmp(res->kind, "Pod"))
        return json_incref((json_t *)obj);
    json_t *d = fakeapi__details(res, fakeapi__meta_str(obj, "name"));
    json_object_set_new(d, "uid", json_string(fakeapi__meta_str(obj, "uid")));
    return json_pack("{s:s, s:s, s:{}, s:s, s:o}", "kind", "Status", "apiVersion", "v1", "metadata",
                     "status", "Success", "details", d);
}

/*
 * Admission webhooks on a delete (admission.h), with the object as it is
 * now as oldObject, before the store lock is taken for the delete itself.
 * A missing object is left to the delete's own 404. -1 having answered.
 */
static int webhooks_delete(fakeapi__ctx *c)
{
    if (!fakeapi__admission_active(c->srv))
        return 0;
    json_t *old = NULL, *none = NULL;
    fakeapi__store_lock(c->srv->store);
    int rc = fakeapi__store_get(c->srv->store, c->res->store_key, c->ns, c->rt->name, &old);
    fakeapi__store_unlock(c->srv->store);
    if (rc != 0)
        return 0;
    if (fakeapi__convert_needed(c->res))
        fakeapi__convert_out(c->res, old);
    rc = fakeapi__admission_mutate(c, "DELETE", &none, old, NULL) < 0 ||
                 fakeapi__admission_validate(c, "DELETE", NULL, old) < 0
             ? -1
             : 0;
    json_decref(none);
    json_decref(old);
    return rc;
}

void fakeapi__do_delete(fakeapi__ctx *c)
{
    delete_opts o;
    if (parse_delete_opts(c, &o) < 0)
        return;
    if (webhooks_delete(c) < 0) {
        json_decref(o.body);
        return;
    }
    fakeapi__txn t;
    json_t *obj = NULL, *rv = NULL;
    char *text = NULL;
    if (fakeapi__txn_begin(&t, c->srv) < 0) {
        fakeapi__storage_error(c);
        goto out;
    }
    int rc = fakeapi__store_get(c->srv->store, c->res->store_key, c->ns, c->rt->name, &obj);
    if (rc != 0) {
        if (rc == 1)
            fakeapi__not_found(c, c->rt->name);
        else
            fakeapi__storage_error(c);
        fakeapi__txn_abort(&t);
        goto out;
    }
    if (check_preconditions(c, &o, obj) < 0) {
        fakeapi__txn_abort(&t);
        goto out;
    }
    t.dry_run = fakeapi__dry_run(c);
    rv = json_incref(json_object_get(fakeapi__meta(obj), "resourceVersion"));
    rc = fakeapi__delete_in_txn_grace(&t, c->res, obj, o.policy, o.grace);
    if (rc < 0) {
        fakeapi__txn_abort(&t);
        fakeapi__storage_error(c);
        goto out;
    }
    if (t.dry_run) {
        /* The object as the delete would leave it (deletionTimestamp set when
         * finalizers hold it), at the resourceVersion it still has: nothing
         * was written (kube-apiserver's DryRunnableStorage). */
        fakeapi__txn_abort(&t);
        keep_rv(obj, rv);
    } else {
        /* An object kept (being deleted) is answered with the text just
         * stored for it, not serialised again. */
        size_t len = 0;
        text = rc == 0 ? fakeapi__txn_text_of(&t, obj, &len) : NULL;
        if (fakeapi__txn_commit(&t) < 0) {
            fakeapi__storage_error(c);
            goto out;
        }
        if (text) {
            fakeapi__resp_take(c->resp, 200, text, len);
            text = NULL;
            goto out;
        }
    }
    fakeapi__resp_json(c->resp, 200, rc == 1 ? deleted_status(c->res, obj) : json_incref(obj));
out:
    free(text);
    json_decref(rv);
    json_decref(obj);
    json_decref(o.body);
}

void fakeapi__do_deletecollection(fakeapi__ctx *c)
{
    delete_opts o;
    fakeapi__labelsel *lsel = NULL;
    fakeapi__fieldsel *fsel = NULL;
    json_t *all = json_array(), *gone = json_array(), *rvs = json_array();
    char err[512];
    if (parse_delete_opts(c, &o) < 0)
        goto out;
    if (fakeapi__labelsel_parse(fakeapi__q(c->req, "labelSelector"), &lsel, err, sizeof err) < 0 ||
        fakeapi__fieldsel_parse(fakeapi__q(c->req, "fieldSelector"), &fsel, err, sizeof err) < 0 ||
        fakeapi__fieldsel_check_res(c->res, fsel, err, sizeof err) < 0) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "%s", err);
        goto out;
    }
    fakeapi__txn t;
    if (fakeapi__txn_begin(&t, c->srv) < 0) {
        fakeapi__storage_error(c);
        goto out;
    }
    t.dry_run = fakeapi__dry_run(c);
    const char *ns = c->ns && *c->ns ? c->ns : (c->res->namespaced ? NULL : "");
    int rc = fakeapi__store_load_all(c->srv->store, c->res->store_key, ns, all);
    size_t i;
    json_t *obj;
    json_array_foreach(all, i, obj)
    {
        if (rc < 0)
            break;
        if (!fakeapi__labelsel_match(lsel, json_object_get(fakeapi__meta(obj), "labels")) ||
            !fakeapi__fieldsel_match(fsel, obj))
            continue;
        if (json_array_append(rvs, json_object_get(fakeapi__meta(obj), "resourceVersion")) < 0) {
            rc = -1;
            break;
        }
        rc = fakeapi__delete_in_txn_grace(&t, c->res, obj, o.policy, o.grace);
        json_array_append(gone, obj);
    }
    if (rc < 0) {
        fakeapi__txn_abort(&t);
        fakeapi__storage_error(c);
        goto out;
    }
    if (t.dry_run) {
        fakeapi__txn_abort(&t); /* then each as do_delete answers it */
        json_array_foreach(gone, i, obj)
        {
            keep_rv(obj, json_array_get(rvs, i));
        }
    } else if (fakeapi__txn_commit(&t) < 0) {
        fakeapi__storage_error(c);
        goto out;
    }
    char rv[24];
    snprintf(rv, sizeof rv, "%llu", (unsigned long long)fakeapi__store_rev_locking(c->srv->store));
    fakeapi__resp_json(c->resp, 200,
                       json_pack("{s:s, s:s, s:{s:s}, s:O}", "kind", c->res->list_kind,
                                 "apiVersion", c->res->group_version, "metadata", "resourceVersion",
                                 rv, "items", gone));
out:
    fakeapi__labelsel_free(lsel);
    fakeapi__fieldsel_free(fsel);
    json_decref(all);
    json_decref(gone);
    json_decref(rvs);
    json_decref(o.body);
}
