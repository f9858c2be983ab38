/*
 * revision.c - ControllerRevisions of StatefulSets and DaemonSets
 * (revision.h). Reads come from the cache (an index on the controller
 * owner's uid, set up by the controllers with kc__wl_index); writes go to
 * the server. No state, no threads.
 */
#include "revision.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "podutil.h"
#include "workload.h"

#define MAX_COLLISIONS 8

static json_t *rev_data(const json_t *owner)
{
    const json_t *tmpl = ctrl_obj_get(owner, "spec.template");
    json_t *t = json_is_object(tmpl) ? json_deep_copy(tmpl) : json_object();
    if (!t)
        return NULL;
    json_object_set_new(t, "$patch", json_string("replace"));
    return json_pack("{s:{s:o}}", "spec", "template", t);
}

json_t *kc__rev_template(const json_t *rev)
{
    const json_t *t = ctrl_obj_get(rev, "data.spec.template");
    if (!json_is_object(t))
        return NULL;
    json_t *copy = json_deep_copy(t);
    json_object_del(copy, "$patch");
    return copy;
}

const char *kc__rev_hash(const json_t *rev)
{
    const char *h = ctrl_obj_label(rev, KC__REV_HASH_LABEL);
    return h ? h : "";
}

const json_t *kc__rev_find(const json_t *revisions, const char *name)
{
    size_t i;
    json_t *r;
    json_array_foreach(revisions, i, r)
    {
        if (name && !strcmp(ctrl_obj_name(r), name))
            return r;
    }
    return NULL;
}

static int by_revision(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    json_int_t rx = json_integer_value(json_object_get(x, "revision"));
    json_int_t ry = json_integer_value(json_object_get(y, "revision"));
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return strcmp(ctrl_obj_name(x), ctrl_obj_name(y));
}

static void sort_revisions(json_t *revs)
{
    size_t n = json_array_size(revs);
    if (n < 2)
        return;
    json_t **v = malloc(n * sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(revs, i));
    qsort(v, n, sizeof *v, by_revision);
    json_array_clear(revs);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(revs, v[i]);
    free(v);
}

/* Replace (by name) or add rev in revs, keeping the order by revision. */
static void put_revision(json_t *revs, json_t *rev)
{
    size_t i;
    json_t *r;
    json_array_foreach(revs, i, r)
    {
        if (!strcmp(ctrl_obj_name(r), ctrl_obj_name(rev))) {
            json_array_set(revs, i, rev);
            sort_revisions(revs);
            return;
        }
    }
    json_array_append(revs, rev);
    sort_revisions(revs);
}

static json_t *new_revision(const json_t *owner, const json_t *data, int64_t number,
                            int64_t collision)
{
    char hash[16], name[320];
    kc__template_hash(data, collision, hash, sizeof hash);
    snprintf(name, sizeof name, "%s-%s", ctrl_obj_name(owner), hash);
    const json_t *tl = ctrl_obj_get(owner, "spec.template.metadata.labels");
    json_t *labels = json_is_object(tl) ? json_deep_copy(tl) : json_object();
    json_object_set_new(labels, KC__REV_HASH_LABEL, json_string(hash));
    json_t *rev = json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:O, s:I}", "apiVersion", "apps/v1",
                            "kind", "ControllerRevision", "metadata", "name", name, "namespace",
                            ctrl_obj_namespace(owner), "labels", labels, "data", data, "revision",
                            (json_int_t)number);
    if (rev && ctrl_set_controller_reference(owner, rev, NULL) < 0) {
        json_decref(rev);
        return NULL;
    }
    return rev;
}

int kc__rev_sync(ctrl_ctx *ctx, const json_t *owner, int64_t *collision, json_t **revisions,
                 json_t **update)
{
    ctrl_client *c = ctrl_ctx_client(ctx);
    json_t *revs = NULL, *data = rev_data(owner), *upd = NULL;
    int rc = data ? kc__wl_owned(ctx, "apps/v1", "ControllerRevision", ctrl_obj_uid(owner), &revs)
                  : CTRL_ERR_NOMEM;
    if (rc < 0)
        goto out;
    sort_revisions(revs);
    size_t n = json_array_size(revs);
    json_int_t next =
        n ? json_integer_value(json_object_get(json_array_get(revs, n - 1), "revision")) + 1 : 1;
    /* The newest revision with this data, if any. */
    const json_t *equal = NULL;
    size_t i;
    json_t *r;
    json_array_foreach(revs, i, r)
    {
        if (json_equal(json_object_get(r, "data"), data))
            equal = r;
    }
    if (equal && equal == json_array_get(revs, n - 1)) {
        upd = json_incref((json_t *)equal);
    } else if (equal) {
        /* Back to an older template: it becomes the newest revision. */
        json_t *copy = json_deep_copy(equal);
        json_object_set_new(copy, "revision", json_integer(next));
        rc = ctrl_client_update(c, copy, NULL, &upd, NULL);
        json_decref(copy);
        if (rc < 0)
            goto out;
        put_revision(revs, upd);
    } else {
        for (int tries = 0;; tries++) {
            json_t *rev = new_revision(owner, data, next, *collision);
            if (!rev) {
                rc = CTRL_ERR_NOMEM;
                goto out;
            }
            rc = ctrl_client_create(c, rev, NULL, &upd, NULL);
            if (ctrl_err_is_already_exists(rc)) {
                json_t *have = NULL;
                rc = ctrl_client_get(ctrl_ctx_api_reader(ctx), "apps/v1", "ControllerRevision",
                                     ctrl_obj_namespace(owner), ctrl_obj_name(rev), &have, NULL);
                if (rc == 0 && json_equal(json_object_get(have, "data"), data)) {
                    upd = have; /* ours, made by an earlier sync */
                } else {
                    json_decref(have);
                    if (rc == 0) {
                        (*collision)++; /* a hash collision: another name */
                        rc = CTRL_ERR_CONFLICT;
                    }
                }
            }
            json_decref(rev);
            if (rc != CTRL_ERR_CONFLICT || tries >= MAX_COLLISIONS)
                break;
        }
        if (rc < 0)
            goto out;
        put_revision(revs, upd);
    }
    *revisions = revs;
    *update = upd;
    revs = upd = NULL;
out:
    json_decref(revs);
    json_decref(upd);
    json_decref(data);
    return rc;
}

int kc__rev_truncate(ctrl_ctx *ctx, const json_t *revisions, const json_t *live, int64_t limit)
{
    size_t dead = 0, i;
    json_t *r;
    json_array_foreach(revisions, i, r) dead += !json_object_get(live, ctrl_obj_name(r));
    int rc = 0;
    json_array_foreach(revisions, i, r)
    {
        if ((int64_t)dead <= limit)
            break;
        if (json_object_get(live, ctrl_obj_name(r)))
            continue;
        int d = ctrl_client_delete(ctrl_ctx_client(ctx), "apps/v1", "ControllerRevision",
                                   ctrl_obj_namespace(r), ctrl_obj_name(r), NULL, NULL, NULL);
        if (d < 0 && !ctrl_err_is_not_found(d) && rc == 0)
            rc = d;
        dead--;
    }
    return rc;
}
