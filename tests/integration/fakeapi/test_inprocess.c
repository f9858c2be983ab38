/*
 * test_inprocess.c - the in-process API (fakeapi_apply, get, list, delete),
 * its error reporting, persistence across restarts, and start-up failures.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"

TestSuite(inprocess, .init = setup, .fini = teardown);

static int apply(const char *yaml, fakeapi_error *err)
{
    return fakeapi_apply(srv, yaml, strlen(yaml), err);
}

static const char multi_doc[] = "apiVersion: v1\n"
                                "kind: Namespace\n"
                                "metadata:\n"
                                "  name: team\n"
                                "---\n"
                                "apiVersion: v1\n"
                                "kind: ConfigMap\n"
                                "metadata:\n"
                                "  name: settings\n"
                                "  namespace: team\n"
                                "  labels: {app: web}\n"
                                "data:\n"
                                "  mode: fast\n"
                                "---\n"
                                "apiVersion: apps/v1\n"
                                "kind: Deployment\n"
                                "metadata:\n"
                                "  name: web\n"
                                "spec:\n"
                                "  replicas: 2\n"
                                "  selector: {matchLabels: {app: web}}\n"
                                "  template:\n"
                                "    metadata: {labels: {app: web}}\n"
                                "    spec:\n"
                                "      containers: [{name: a, image: nginx}]\n";

Test(inprocess, apply_multi_document_yaml)
{
    fakeapi_error err = {0};
    cr_assert_eq(apply(multi_doc, &err), 0, "%s", err.message);
    json_t *o = NULL;
    cr_assert_eq(fakeapi_get(srv, "v1", "Namespace", NULL, "team", &o, &err), 0, "%s", err.message);
    cr_assert_str_eq(jstr(o, "status.phase"), "Active");
    json_decref(o);
    cr_assert_eq(fakeapi_get(srv, "v1", "ConfigMap", "team", "settings", &o, &err), 0);
    cr_assert_str_eq(jstr(o, "data.mode"), "fast");
    cr_assert_null(jget(o, "metadata.generation"), "ConfigMaps keep no generation");
    const char *uid = jstr(o, "metadata.uid");
    char uid1[64];
    snprintf(uid1, sizeof uid1, "%s", uid);
    unsigned long long r1 = rv_of(o);
    json_decref(o);
    /* A namespaced object without a namespace goes to default. */
    cr_assert_eq(fakeapi_get(srv, "apps/v1", "Deployment", "default", "web", &o, &err), 0);
    cr_assert_eq(jint(o, "spec.replicas"), 2);
    json_decref(o);
    /* And what apply wrote is what HTTP clients see. */
    json_t *h = req(200, "GET", "/api/v1/namespaces/team/configmaps/settings", NULL);
    cr_assert_str_eq(jstr(h, "data.mode"), "fast");
    json_decref(h);

    /* A second apply updates in place. */
    cr_assert_eq(apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: "
                       "team}\ndata: {mode: slow, extra: x}\n",
                       &err),
                 0, "%s", err.message);
    cr_assert_eq(fakeapi_get(srv, "v1", "ConfigMap", "team", "settings", &o, &err), 0);
    cr_assert_str_eq(jstr(o, "data.mode"), "slow");
    cr_assert_str_eq(jstr(o, "data.extra"), "x");
    cr_assert_str_eq(jstr(o, "metadata.labels.app"), "web", "merged, not replaced");
    cr_assert_str_eq(jstr(o, "metadata.uid"), uid1, "the same object");
    cr_assert_gt(rv_of(o), r1);
    json_decref(o);

    /* Applying the same again is a no-op. */
    uint64_t before = fakeapi_revision(srv);
    cr_assert_eq(apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: "
                       "team}\ndata: {mode: slow, extra: x}\n",
                       &err),
                 0);
    cr_assert_eq(fakeapi_revision(srv), before);
}

Test(inprocess, apply_kind_list_and_json)
{
    fakeapi_error err = {0};
    cr_assert_eq(apply("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
                       "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                       "\"one\",\"labels\":{\"g\":\"x\"}}},"
                       "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                       "\"two\",\"labels\":{\"g\":\"x\"}}},"
                       "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
                       "\"three\"}}]}",
                       &err),
                 0, "%s", err.message);
    cr_assert_eq(apply("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n"
                       "  metadata: {name: four}\n",
                       &err),
                 0, "%s", err.message);
    json_t *items = NULL;
    cr_assert_eq(fakeapi_list(srv, "v1", "ConfigMap", "default", NULL, &items, &err), 0);
    cr_assert_eq(json_array_size(items), 3);
    cr_assert_str_eq(jstr(items, "0.metadata.name"), "four");
    cr_assert_str_eq(jstr(items, "1.metadata.name"), "one");
    cr_assert_str_eq(jstr(items, "2.metadata.name"), "two");
    json_decref(items);
    cr_assert_eq(fakeapi_list(srv, "v1", "ConfigMap", NULL, "g=x", &items, &err), 0);
    cr_assert_eq(json_array_size(items), 2);
    json_decref(items);
    cr_assert_eq(fakeapi_list(srv, "v1", "Secret", "default", NULL, &items, &err), 0);
    cr_assert_eq(json_array_size(items), 1);
    json_decref(items);
    /* An empty list is an empty array. */
    cr_assert_eq(fakeapi_list(srv, "apps/v1", "Deployment", NULL, NULL, &items, &err), 0);
    cr_assert(json_is_array(items));
    cr_assert_eq(json_array_size(items), 0);
    json_decref(items);
    /* Lists across namespaces are sorted by namespace, then name. */
    cr_assert_eq(apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aaa, namespace: "
                       "kube-system}\n",
                       &err),
                 0);
    cr_assert_eq(fakeapi_list(srv, "v1", "ConfigMap", NULL, NULL, &items, &err), 0);
    cr_assert_eq(json_array_size(items), 4);
    cr_assert_str_eq(jstr(items, "3.metadata.namespace"), "kube-system");
    json_decref(items);
}

Test(inprocess, apply_stops_at_first_failure)
{
    fakeapi_error err = {0};
    int rc = apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n---\n"
                   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n---\n"
                   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: third}\n",
                   &err);
    cr_assert_eq(rc, FAKEAPI_ERR_INVALID);
    cr_assert_eq(err.code, FAKEAPI_ERR_INVALID);
    cr_assert_eq(err.http_status, 422);
    cr_assert_str_eq(err.reason, "Invalid");
    cr_assert(strstr(err.message, "Bad_Name"), "%s", err.message);
    json_t *o = NULL;
    cr_assert_eq(fakeapi_get(srv, "v1", "ConfigMap", "default", "first", &o, NULL), 0,
                 "earlier documents stay applied");
    json_decref(o);
    cr_assert_eq(fakeapi_get(srv, "v1", "ConfigMap", "default", "third", &o, NULL),
                 FAKEAPI_ERR_NOT_FOUND);
}

Test(inprocess, error_codes)
{
    fakeapi_error err = {0};
    json_t *o = (json_t *)0x1;
    int rc = fakeapi_get(srv, "v1", "ConfigMap", "default", "missing", &o, &err);
    cr_assert_eq(rc, FAKEAPI_ERR_NOT_FOUND);
    cr_assert_eq(o, (json_t *)0x1, "output untouched on error");
    cr_assert_eq(err.code, FAKEAPI_ERR_NOT_FOUND);
    cr_assert_eq(err.http_status, 404);
    cr_assert_str_eq(err.reason, "NotFound");
    cr_assert_str_eq(err.message, "configmaps \"missing\" not found");

    /* An unknown kind. */
    memset(&err, 0, sizeof err);
    rc = fakeapi_get(srv, "v1", "Gizmo", "default", "x", &o, &err);
    cr_assert_eq(rc, FAKEAPI_ERR_NOT_FOUND);
    cr_assert_eq(err.code, FAKEAPI_ERR_NOT_FOUND);
    cr_assert(strstr(err.message, "Gizmo"), "%s", err.message);
    cr_assert_eq(fakeapi_list(srv, "nope/v1", "Thing", NULL, NULL, &o, &err),
                 FAKEAPI_ERR_NOT_FOUND);

    /* AlreadyExists through apply is not possible (apply updates), but
     * a conflict-free apply of a namespace that is terminating is Forbidden. */
    cr_assert_eq(apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: t}\n---\n"
                       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, namespace: t, "
                       "finalizers: [x.io/hold]}\n",
                       &err),
                 0, "%s", err.message);
    cr_assert_eq(fakeapi_delete(srv, "v1", "Namespace", NULL, "t", &err), 0, "%s", err.message);
    memset(&err, 0, sizeof err);
    rc = apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new, namespace: t}\n", &err);
    cr_assert_eq(rc, FAKEAPI_ERR_FORBIDDEN);
    cr_assert_eq(err.http_status, 403);
    cr_assert_str_eq(err.reason, "Forbidden");

    /* A missing namespace. */
    rc = apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: nowhere}\n", &err);
    cr_assert_eq(rc, FAKEAPI_ERR_NOT_FOUND);
    cr_assert_str_eq(err.message, "namespaces \"nowhere\" not found");

    /* Malformed input. */
    rc = apply("a: [unclosed\n", &err);
    cr_assert_eq(rc, FAKEAPI_ERR_INVALID);
    cr_assert_eq(err.http_status, 400);
    rc = apply("metadata: {name: x}\n", &err);
    cr_assert_eq(rc, FAKEAPI_ERR_INVALID, "a document without apiVersion/kind");
    rc = apply("apiVersion: v1\nkind: Nope\nmetadata: {name: x}\n", &err);
    cr_assert_eq(rc, FAKEAPI_ERR_NOT_FOUND);
    cr_assert_eq(fakeapi_get(srv, "v1", "ConfigMap", "default", NULL, &o, &err),
                 FAKEAPI_ERR_INVALID);

    /* Deleting what is not there. */
    cr_assert_eq(fakeapi_delete(srv, "v1", "ConfigMap", "default", "ghost", &err),
                 FAKEAPI_ERR_NOT_FOUND);
    /* err may be NULL. */
    cr_assert_eq(fakeapi_delete(srv, "v1", "ConfigMap", "default", "ghost", NULL),
                 FAKEAPI_ERR_NOT_FOUND);

    /* Every code has a description. */
    for (int c = FAKEAPI_OK; c >= FAKEAPI_ERR_INTERNAL; c--)
        cr_assert(fakeapi_strerror(c) && *fakeapi_strerror(c), "strerror(%d)", c);
    cr_assert_not_null(fakeapi_strerror(-999));
}

Test(inprocess, get_list_delete)
{
    fakeapi_error err = {0};
    cr_assert_eq(apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {x: '1'}}\n"
                       "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
                       &err),
                 0);
    json_t *items = NULL;
    cr_assert_eq(fakeapi_list(srv, "v1", "ConfigMap", "default", "x=1", &items, &err), 0);
    cr_assert_eq(json_array_size(items), 1);
    cr_assert_str_eq(jstr(items, "0.metadata.name"), "a");
    json_decref(items);
    cr_assert_eq(fakeapi_list(srv, "v1", "ConfigMap", "default", "x in (", &items, &err),
                 FAKEAPI_ERR_INVALID);
    cr_assert_eq(err.http_status, 400);

    cr_assert_eq(fakeapi_delete(srv, "v1", "ConfigMap", "default", "a", &err), 0);
    json_t *o = NULL;
    cr_assert_eq(fakeapi_get(srv, "v1", "ConfigMap", "default", "a", &o, &err),
                 FAKEAPI_ERR_NOT_FOUND);
    cr_assert(gone("/api/v1/namespaces/default/configmaps/a"));
    /* Cluster-scoped: ns may be NULL or "". */
    cr_assert_eq(apply("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n", &err), 0);
    cr_assert_eq(fakeapi_get(srv, "v1", "Node", "", "n1", &o, &err), 0);
    json_decref(o);
    cr_assert_eq(fakeapi_delete(srv, "v1", "Node", NULL, "n1", &err), 0);
    cr_assert_eq(fakeapi_get(srv, "v1", "Node", NULL, "n1", &o, &err), FAKEAPI_ERR_NOT_FOUND);

    /* Delete with a finalizer only marks it. */
    cr_assert_eq(apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f, finalizers: "
                       "[x.io/f]}\n",
                       &err),
                 0);
    cr_assert_eq(fakeapi_delete(srv, "v1", "ConfigMap", "default", "f", &err), 0);
    cr_assert_eq(fakeapi_get(srv, "v1", "ConfigMap", "default", "f", &o, &err), 0);
    cr_assert_not_null(jstr(o, "metadata.deletionTimestamp"));
    json_decref(o);
}

Test(inprocess, apply_file)
{
    char dir[] = "/tmp/fakeapi-inproc-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/m.yaml", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(multi_doc, f);
    fclose(f);
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_apply_file(srv, path, &err), 0, "%s", err.message);
    json_t *o = NULL;
    cr_assert_eq(fakeapi_get(srv, "apps/v1", "Deployment", "default", "web", &o, &err), 0);
    json_decref(o);
    unlink(path);
    cr_assert_eq(fakeapi_apply_file(srv, path, &err), FAKEAPI_ERR_IO);
    cr_assert_eq(err.code, FAKEAPI_ERR_IO);
    rmdir(dir);
}

Test(inprocess, persistent_store_survives_restart)
{
    char dir[] = "/tmp/fakeapi-db-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char db[256];
    snprintf(db, sizeof db, "%s/store.db", dir);
    fakeapi_options o = {.db_path = db, .seed = 7};
    fakeapi_server *s1 = NULL;
    cr_assert_eq(fakeapi_start(&o, &s1), 0);
    fakeapi_error err = {0};
    const char *y = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep}\ndata: {k: v}\n";
    cr_assert_eq(fakeapi_apply(s1, y, strlen(y), &err), 0, "%s", err.message);
    json_t *obj = NULL;
    cr_assert_eq(fakeapi_get(s1, "v1", "ConfigMap", "default", "keep", &obj, &err), 0);
    char uid[64];
    snprintf(uid, sizeof uid, "%s", jstr(obj, "metadata.uid"));
    json_decref(obj);
    uint64_t rev = fakeapi_revision(s1);
    cr_assert_gt(rev, 0);
    fakeapi_stop(s1);

    fakeapi_server *s2 = NULL;
    cr_assert_eq(fakeapi_start(&o, &s2), 0);
    cr_assert_eq(fakeapi_revision(s2), rev, "the revision continues where it was");
    cr_assert_eq(fakeapi_get(s2, "v1", "ConfigMap", "default", "keep", &obj, &err), 0, "%s",
                 err.message);
    cr_assert_str_eq(jstr(obj, "metadata.uid"), uid);
    cr_assert_str_eq(jstr(obj, "data.k"), "v");
    json_decref(obj);
    /* The bootstrapped namespaces are not duplicated or rewritten. */
    json_t *nss = NULL;
    cr_assert_eq(fakeapi_list(s2, "v1", "Namespace", NULL, NULL, &nss, &err), 0);
    cr_assert_eq(json_array_size(nss), 4);
    json_decref(nss);
    const char *y2 = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: later}\n";
    cr_assert_eq(fakeapi_apply(s2, y2, strlen(y2), &err), 0);
    cr_assert_eq(fakeapi_get(s2, "v1", "ConfigMap", "default", "later", &obj, &err), 0);
    cr_assert_gt(rv_of(obj), rev, "new writes get higher resourceVersions");
    json_decref(obj);
    uint64_t rev2 = fakeapi_revision(s2);
    fakeapi_stop(s2);

    /* Once more, over HTTP this time. */
    fakeapi_server *s3 = NULL;
    cr_assert_eq(fakeapi_start(&o, &s3), 0);
    cr_assert_eq(fakeapi_revision(s3), rev2);
    char url[256];
    snprintf(url, sizeof url, "%s/api/v1/namespaces/default/configmaps", fakeapi_url(s3));
    long status = 0;
    json_t *l = httpc_json("GET", url, NULL, NULL, &status);
    cr_assert_eq(status, 200);
    cr_assert_eq(json_array_size(jget(l, "items")), 2);
    cr_assert_eq(rv_of(l), rev2);
    json_decref(l);
    fakeapi_stop(s3);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(inprocess, same_port_twice_fails)
{
    fakeapi_options o = {.port = fakeapi_port(srv), .seed = 1};
    fakeapi_server *second = (fakeapi_server *)0x1;
    cr_assert_eq(fakeapi_start(&o, &second), FAKEAPI_ERR_LISTEN);
    cr_assert_eq(second, (fakeapi_server *)0x1, "*out untouched on failure");
    /* The first one still serves. */
    json_decref(req(200, "GET", "/api/v1/namespaces/default", NULL));
    cr_assert(!strncmp(fakeapi_url(srv), "http://127.0.0.1:", 17), "%s", fakeapi_url(srv));
}

Test(inprocess, no_http_server)
{
    fakeapi_options o = {.no_http = true, .seed = 3};
    fakeapi_server *s = NULL;
    cr_assert_eq(fakeapi_start(&o, &s), 0);
    cr_assert_str_eq(fakeapi_url(s), "");
    cr_assert_eq(fakeapi_port(s), 0);
    const char *y = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n";
    cr_assert_eq(fakeapi_apply(s, y, strlen(y), NULL), 0);
    json_t *obj = NULL;
    cr_assert_eq(fakeapi_get(s, "v1", "ConfigMap", "default", "x", &obj, NULL), 0);
    json_decref(obj);
    fakeapi_stop(s);
    fakeapi_stop(NULL);
}

Test(inprocess, seed_makes_uids_reproducible)
{
    char uids[2][64];
    for (int i = 0; i < 2; i++) {
        fakeapi_options o = {.no_http = true, .seed = 99};
        fakeapi_server *s = NULL;
        cr_assert_eq(fakeapi_start(&o, &s), 0);
        const char *y = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n";
        cr_assert_eq(fakeapi_apply(s, y, strlen(y), NULL), 0);
        json_t *obj = NULL;
        cr_assert_eq(fakeapi_get(s, "v1", "ConfigMap", "default", "x", &obj, NULL), 0);
        snprintf(uids[i], sizeof uids[i], "%s", jstr(obj, "metadata.uid"));
        json_decref(obj);
        fakeapi_stop(s);
    }
    cr_assert_str_eq(uids[0], uids[1]);
}

/* The store keeps its own JSON text of each object: escapes and UTF-8 come
 * back as they were sent, in order; a field the kind does not have is
 * dropped, as the real server's typed decoding drops it. */
Test(inprocess, stored_text_round_trips)
{
    const char *body =
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"odd\","
        "\"annotations\":{\"q\":\"say \\\"hi\\\" \\\\ back/slash\"}},"
        "\"data\":{\"ctl\":\"a\\nb\\tc\\r\\b\\f\\u0001\\u001f\\u007f\","
        "\"utf8\":\"\\u00e9\\u2028\\ud83d\\ude00\",\"z-last\":\"1\",\"a-after\":\"2\"},"
        "\"x\":{\"z\":1.5,\"a\":-9223372036854775808,\"t\":true,\"f\":false,\"n\":null,"
        "\"arr\":[[],{},0.1,1e300]}}";
    int status = 0;
    json_t *created = NULL;
    cr_assert_eq(fakeapi_request(srv, "POST", "/api/v1/namespaces/default/configmaps",
                                 "application/json", body, &status, &created),
                 0);
    cr_assert_eq(status, 201);
    json_t *sent = json_loads(body, 0, NULL), *got = NULL;
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_get(srv, "v1", "ConfigMap", "default", "odd", &got, &err), 0, "%s",
                 err.message);
    cr_assert(json_equal(json_object_get(sent, "data"), json_object_get(got, "data")));
    cr_assert_null(json_object_get(got, "x"), "ConfigMap has no field x");
    cr_assert(json_equal(jget(sent, "metadata.annotations"), jget(got, "metadata.annotations")));
    cr_assert(json_equal(created, got), "the answer to the create is what was stored");
    /* Members keep the order they were sent in. */
    static const char *const order[] = {"ctl", "utf8", "z-last", "a-after"};
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(got, "data"), k, v)
    {
        cr_assert_lt(n, 4);
        cr_assert_str_eq(k, order[n], "key %zu", n);
        n++;
    }
    cr_assert_eq(n, 4);
    json_decref(sent);
    json_decref(got);
    json_decref(created);
}

Test(inprocess, patch_every_type_and_subresource)
{
    fakeapi_error err = {0};
    cr_assert_eq(apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\ndata: {a: '1', "
                       "b: '2'}\n",
                       &err),
                 0);
    json_t *o = NULL;
    /* merge: a key set, a key removed */
    cr_assert_eq(fakeapi_patch(srv, "v1", "ConfigMap", "default", "p", FAKEAPI_PATCH_MERGE,
                               "{\"data\": {\"a\": \"x\", \"b\": null}}", NULL, &o, &err),
                 0, "%s", err.message);
    cr_assert_str_eq(jstr(o, "data.a"), "x");
    cr_assert_null(jstr(o, "data.b"));
    json_decref(o);
    /* json patch; a failed test operation changes nothing */
    cr_assert_eq(fakeapi_patch(srv, "v1", "ConfigMap", "default", "p", FAKEAPI_PATCH_JSON,
                               "[{\"op\": \"test\", \"path\": \"/data/a\", \"value\": \"no\"}, "
                               "{\"op\": \"add\", \"path\": \"/data/c\", \"value\": \"3\"}]",
                               NULL, NULL, &err),
                 FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_get(srv, "v1", "ConfigMap", "default", "p", &o, &err), 0);
    cr_assert_null(jstr(o, "data.c"));
    json_decref(o);
    /* server-side apply needs a field manager, then owns its fields */
    cr_assert_eq(fakeapi_patch(srv, "v1", "ConfigMap", "default", "p", FAKEAPI_PATCH_APPLY,
                               "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": "
                               "{\"name\": \"p\"}, \"data\": {\"d\": \"4\"}}",
                               NULL, NULL, &err),
                 FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_patch(srv, "v1", "ConfigMap", "default", "p", FAKEAPI_PATCH_APPLY,
                               "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": "
                               "{\"name\": \"p\"}, \"data\": {\"d\": \"4\"}}",
                               &(fakeapi_patch_options){.field_manager = "ops"}, &o, &err),
                 0, "%s", err.message);
    cr_assert_str_eq(jstr(o, "data.d"), "4");
    char *mf = json_dumps(json_object_get(json_object_get(o, "metadata"), "managedFields"),
                          JSON_COMPACT);
    cr_assert(mf && strstr(mf, "\"manager\":\"ops\""), "%s", mf ? mf : "(none)");
    free(mf);
    json_decref(o);
    /* a status subresource: spec changes there are ignored, status kept */
    cr_assert_eq(apply("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: "
                       "{replicas: 1, selector: {matchLabels: {a: b}}, template: {metadata: "
                       "{labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}}\n",
                       &err),
                 0, "%s", err.message);
    cr_assert_eq(fakeapi_patch(srv, "apps/v1", "Deployment", "default", "d", FAKEAPI_PATCH_MERGE,
                               "{\"spec\": {\"replicas\": 5}, \"status\": {\"replicas\": 1}}",
                               &(fakeapi_patch_options){.subresource = "status"}, &o, &err),
                 0, "%s", err.message);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(o, "status"), "replicas")), 1);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(o, "spec"), "replicas")), 1);
    json_decref(o);
    /* errors: no such object, a bad subresource, no patch */
    cr_assert_eq(fakeapi_patch(srv, "v1", "ConfigMap", "default", "nope", FAKEAPI_PATCH_MERGE,
                               "{}", NULL, NULL, &err),
                 FAKEAPI_ERR_NOT_FOUND);
    cr_assert_eq(err.http_status, 404);
    cr_assert_eq(fakeapi_patch(srv, "v1", "ConfigMap", "default", "p", FAKEAPI_PATCH_MERGE, "{}",
                               &(fakeapi_patch_options){.subresource = "log"}, NULL, &err),
                 FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_patch(srv, "v1", "ConfigMap", "default", "p", FAKEAPI_PATCH_MERGE, NULL,
                               NULL, NULL, &err),
                 FAKEAPI_ERR_INVALID);
}

Test(inprocess, request_queries_are_percent_decoded)
{
    fakeapi_error err = {0};
    cr_assert_eq(apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: q, labels: "
                       "{example.com/tier: front}}\n",
                       &err),
                 0);
    int status = 0;
    json_t *out = NULL;
    cr_assert_eq(fakeapi_request(srv, "GET",
                                 "/api/v1/namespaces/default/configmaps?labelSelector=example.com%"
                                 "2Ftier%3Dfront",
                                 NULL, NULL, &status, &out),
                 0);
    cr_assert_eq(status, 200, "%d", status);
    cr_assert_eq(json_array_size(json_object_get(out, "items")), 1);
    json_decref(out);
}

/* fakeapi_read_list gives what fakeapi_list gives: the same code, error and
 * objects (equal JSON, same order); fakeapi_read_count their number. Returns
 * the number of objects, or -1. */
static long same_as_list(const char *av, const char *kind, const char *ns, const char *sel)
{
    fakeapi_error e1 = {0}, e2 = {0};
    json_t *a = NULL, *b = NULL;
    fakeapi_error e3 = {0};
    size_t count = 12345;
    int r1 = fakeapi_list(srv, av, kind, ns, sel, &a, &e1);
    int r2 = fakeapi_read_list(srv, av, kind, ns, sel, &b, &e2);
    int r3 = fakeapi_read_count(srv, av, kind, ns, sel, &count, &e3);
    cr_assert_eq(r2, r1, "%s %s ns=%s sel=%s: %d vs %d", av, kind, ns ? ns : "(null)",
                 sel ? sel : "(null)", r2, r1);
    cr_assert_eq(r3, r1);
    if (r1 < 0) {
        cr_assert_eq(e2.http_status, e1.http_status);
        cr_assert_str_eq(e2.reason, e1.reason);
        cr_assert_str_eq(e2.message, e1.message);
        cr_assert_eq(e3.http_status, e1.http_status);
        cr_assert_str_eq(e3.message, e1.message);
        return -1;
    }
    cr_assert_eq(count, json_array_size(a), "count %zu, list %zu", count, json_array_size(a));
    char *ta = json_dumps(a, JSON_COMPACT), *tb = json_dumps(b, JSON_COMPACT);
    cr_assert_str_eq(tb, ta, "%s %s ns=%s sel=%s", av, kind, ns ? ns : "(null)",
                     sel ? sel : "(null)");
    long n = (long)json_array_size(a);
    free(ta);
    free(tb);
    json_decref(a);
    json_decref(b);
    return n;
}

Test(inprocess, read_list_equals_list)
{
    fakeapi_error err = {0};
    cr_assert_eq(apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: b-team}\n---\n"
                       "apiVersion: v1\nkind: Namespace\nmetadata: {name: a-team}\n---\n"
                       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: z, namespace: b-team, "
                       "labels: {app: web, tier: x}}\ndata: {k: v}\n---\n"
                       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y, namespace: a-team, "
                       "labels: {app: web}}\n---\n"
                       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: a-team}\n"
                       "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n---\n"
                       "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {zone: a}}\n---\n"
                       "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"
                       "metadata: {name: h}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, "
                       "kind: Deployment, name: web}\n  minReplicas: 1\n  maxReplicas: 3\n"
                       "  metrics: [{type: Resource, resource: {name: cpu, target: "
                       "{type: Utilization, averageUtilization: 50}}}]\n",
                       &err),
                 0, "%s", err.message);
    /* Every namespace, sorted by namespace then name; one namespace; selectors. */
    long all = same_as_list("v1", "ConfigMap", NULL, NULL);
    cr_assert_geq(all, 3);
    cr_assert_eq(same_as_list("v1", "ConfigMap", "", NULL), all);
    cr_assert_eq(same_as_list("v1", "ConfigMap", "a-team", NULL), 2);
    cr_assert_eq(same_as_list("v1", "ConfigMap", NULL, "app=web"), 2);
    cr_assert_eq(same_as_list("v1", "ConfigMap", NULL, "app=web,tier!=x"), 1);
    cr_assert_eq(same_as_list("v1", "ConfigMap", NULL, "app"), 2);
    cr_assert_eq(same_as_list("v1", "ConfigMap", "", ""), all);
    cr_assert_eq(same_as_list("v1", "ConfigMap", "nowhere", NULL), 0);
    /* Cluster-scoped kinds: a namespace is ignored as fakeapi_list ignores it. */
    cr_assert_eq(same_as_list("v1", "Node", NULL, NULL), 2);
    cr_assert_eq(same_as_list("v1", "Node", "a-team", "zone=a"), 1);
    cr_assert_geq(same_as_list("v1", "Namespace", NULL, NULL), 3);
    /* The version asked for, converted from the one stored. */
    cr_assert_eq(same_as_list("autoscaling/v1", "HorizontalPodAutoscaler", "default", NULL), 1);
    cr_assert_eq(same_as_list("autoscaling/v2", "HorizontalPodAutoscaler", "default", NULL), 1);
    /* Errors are fakeapi_list's own. */
    cr_assert_eq(same_as_list("v1", "ConfigMap", NULL, "x in ("), -1);
    cr_assert_eq(same_as_list("v1", "NoSuchKind", NULL, NULL), -1);
    cr_assert_eq(same_as_list("v9", "ConfigMap", NULL, NULL), -1);
    cr_assert_eq(same_as_list("v1", "ConfigMap", "Bad/Namespace", NULL), -1);

    /* A custom kind in its storage version and in another served version. */
    cr_assert_eq(apply("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                       "metadata: {name: gadgets.example.com}\nspec:\n  group: example.com\n"
                       "  scope: Namespaced\n  names: {plural: gadgets, singular: gadget, "
                       "kind: Gadget, listKind: GadgetList}\n  versions:\n"
                       "  - name: v1\n    served: true\n    storage: true\n"
                       "    schema: {openAPIV3Schema: {type: object, "
                       "x-kubernetes-preserve-unknown-fields: true}}\n"
                       "  - name: v2\n    served: true\n    storage: false\n"
                       "    schema: {openAPIV3Schema: {type: object, "
                       "x-kubernetes-preserve-unknown-fields: true}}\n",
                       &err),
                 0, "%s", err.message);
    int rc = -1;
    for (int i = 0; i < 200 && rc != 0; i++) {
        rc = apply("apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1, labels: "
                   "{k: v}}\nspec: {size: 2, ratio: 0.5}\n",
                   &err);
        if (rc != 0)
            usleep(10000);
    }
    cr_assert_eq(rc, 0, "%s", err.message);
    cr_assert_eq(same_as_list("example.com/v1", "Gadget", NULL, NULL), 1);
    cr_assert_eq(same_as_list("example.com/v2", "Gadget", "default", "k=v"), 1);
    json_t *items = NULL;
    cr_assert_eq(fakeapi_read_list(srv, "example.com/v2", "Gadget", NULL, NULL, &items, &err), 0);
    cr_assert_str_eq(jstr(items, "0.apiVersion"), "example.com/v2");
    cr_assert_eq(jint(items, "0.spec.size"), 2);
    json_decref(items);
}
