/*
 * team.c - the Team controller, buggy and fixed (hunt.h): each Team has an
 * entry in the shared namespace "directory", the ConfigMap
 * "team-<namespace>-<name>" holding its spec.contact.
 *
 * DESIGN
 * - Threads: reconcile runs on the controller's worker; nothing else here,
 *   and no state of our own.
 * - Reads come from the cache (the client's reader): the Team. The entry
 *   lives in another namespace, where no owner reference may point back to
 *   the Team, so garbage collection never removes it: the controller must.
 * - Writes: the namespace "directory" when missing; the entry by
 *   create-or-update; status.entry and status.observedGeneration through
 *   the status subresource; the fixed variant's finalizer by update.
 * - The one difference between the variants is how a deletion is seen:
 *     buggy: removes the entry when a reconcile finds the Team gone. Only
 *            the Team's delete event brings that reconcile, so a deletion
 *            it never observes (it was down, the event was lost) leaves the
 *            entry for good: after a restart the Team is simply not there.
 *     fixed: holds the Team with the finalizer hunt.example.com/directory
 *            until its entry is gone. A Team being deleted is a state (its
 *            deletionTimestamp) that any later view shows, whatever events
 *            were missed. (It keeps the buggy variant's clean-up on
 *            NotFound, for a Team deleted before it was ever seen.)
 */
#include "hunt.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "hunt_util.h"

#define KIND "Team"
#define DIRECTORY_NS "directory"
#define FINALIZER "hunt.example.com/directory"

static const hunt_variant buggy_variant = {false, "hunt-team-buggy"};
static const hunt_variant fixed_variant = {true, "hunt-team-fixed"};

static void entry_name(const char *ns, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "team-%s-%s", ns, name);
}

static int remove_entry(ctrl_ctx *ctx, const char *ns, const char *name)
{
    char ename[320];
    entry_name(ns, name, ename, sizeof ename);
    int rc = ctrl_client_delete(ctrl_ctx_client(ctx), "v1", "ConfigMap", DIRECTORY_NS, ename, NULL,
                                NULL, NULL);
    if (rc == 0)
        ctrl_log_info(ctx, "removed directory entry", "entry", ename);
    return ctrl_err_is_not_found(rc) ? 0 : rc;
}

/* The shared namespace, made when missing (by the first Team's
 * reconcile, on a cluster that has none yet). */
static int ensure_directory(ctrl_client *c)
{
    json_t *ns = NULL;
    int rc = ctrl_client_get(c, "v1", "Namespace", NULL, DIRECTORY_NS, &ns, NULL);
    json_decref(ns);
    if (!ctrl_err_is_not_found(rc))
        return rc;
    json_t *want = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                             "metadata", "name", DIRECTORY_NS);
    rc = want ? ctrl_client_create(c, want, NULL, NULL, NULL) : CTRL_ERR_NOMEM;
    json_decref(want);
    return ctrl_err_is_already_exists(rc) ? 0 : rc;
}

/* create-or-update's mutate: the entry of Team user (borrowed). */
static int mutate_entry(json_t *cm, void *user)
{
    const json_t *t = user;
    const char *contact = ctrl_obj_get_string(t, "spec.contact");
    json_t *data = json_pack("{s:s, s:s, s:s}", "namespace", ctrl_obj_namespace(t), "name",
                             ctrl_obj_name(t), "contact", contact ? contact : "");
    if (!data || json_object_set_new(cm, "data", data) < 0)
        return CTRL_ERR_NOMEM;
    int rc = ctrl_obj_set_label(cm, HUNT_OWNER_LABEL, ctrl_obj_name(t));
    if (rc == 0)
        rc = ctrl_obj_set_label(cm, "hunt.example.com/team-namespace", ctrl_obj_namespace(t));
    return rc;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    const hunt_variant *v = user;
    ctrl_client *c = ctrl_ctx_client(ctx);
    json_t *t = NULL, *cm = NULL;
    ctrl_result res = ctrl_done();
    int rc = ctrl_client_get(c, EXAMPLE_HUNT_API_VERSION, KIND, req->ns, req->name, &t, NULL);
    if (ctrl_err_is_not_found(rc)) {
        rc = remove_entry(ctx, req->ns, req->name); /* the delete event brought us here */
        return rc < 0 ? ctrl_err(rc) : ctrl_done();
    }
    if (rc < 0)
        return ctrl_err(rc);

    if (v->fixed && ctrl_obj_deleting(t)) {
        if (ctrl_contains_finalizer(t, FINALIZER)) {
            rc = remove_entry(ctx, req->ns, req->name);
            if (rc == 0 && ctrl_remove_finalizer(t, FINALIZER))
                rc = ctrl_client_update(c, t, NULL, NULL, NULL);
            if (rc < 0 && !ctrl_err_is_not_found(rc))
                res = ctrl_err(rc);
        }
        goto out;
    }
    if (ctrl_obj_deleting(t))
        goto out; /* it goes; the delete event will bring us back */
    if (v->fixed && ctrl_add_finalizer(t, FINALIZER)) {
        json_t *updated = NULL;
        rc = ctrl_client_update(c, t, NULL, &updated, NULL);
        if (rc < 0) {
            res = ctrl_err(rc);
            goto out;
        }
        json_decref(t);
        t = updated;
    }

    rc = ensure_directory(c);
    if (rc < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    char ename[320];
    entry_name(req->ns, req->name, ename, sizeof ename);
    cm = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "ConfigMap", "metadata",
                   "name", ename, "namespace", DIRECTORY_NS);
    ctrl_op_result op;
    rc = cm ? ctrl_create_or_update(c, cm, mutate_entry, t, &op, NULL) : CTRL_ERR_NOMEM;
    if (rc < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    if (op != CTRL_OP_UNCHANGED)
        ctrl_log_info(ctx, "directory entry", "entry", ename, "op", ctrl_op_result_string(op));
    char entry[400];
    snprintf(entry, sizeof entry, DIRECTORY_NS "/%s", ename);
    rc = hunt_write_status(c, t,
                           json_pack("{s:s, s:I}", "entry", entry, "observedGeneration",
                                     (json_int_t)ctrl_obj_generation(t)));
    if (rc < 0)
        res = ctrl_err(rc);
out:
    json_decref(cm);
    json_decref(t);
    return res;
}

int example_hunt_team_buggy_setup(ctrl_manager *mgr, const json_t *config)
{
    return hunt_setup(mgr, config, KIND, &buggy_variant, NULL, reconcile);
}

int example_hunt_team_fixed_setup(ctrl_manager *mgr, const json_t *config)
{
    return hunt_setup(mgr, config, KIND, &fixed_variant, NULL, reconcile);
}
