/*
 * test_predicate.c - predicates (funcs, *_changed, label selector, and/or/not,
 * reference counts) and event handlers (for object, for owner, from map).
 *
 * Evaluation is internal to libctrl (the controller calls it on informer
 * events), so this test includes the private header.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "../../../manager/controller_int.h"

static json_t *obj(const char *json)
{
    json_error_t e;
    json_t *o = json_loads(json, 0, &e);
    cr_assert_not_null(o, "bad test JSON: %s", e.text);
    return o;
}

/* ---- predicates ---- */

typedef struct calls {
    int create, update, remove;
    bool answer;
} calls;

static bool f_create(const json_t *o, void *user)
{
    calls *c = user;
    c->create++;
    cr_assert_not_null(o);
    return c->answer;
}

static bool f_update(const json_t *o, const json_t *n, void *user)
{
    calls *c = user;
    c->update++;
    cr_assert_not_null(o);
    cr_assert_not_null(n);
    return c->answer;
}

Test(predicate, funcs_call_back_and_null_means_true)
{
    calls c = {.answer = false};
    ctrl_predicate *p = ctrl_pred_funcs(
        &(ctrl_predicate_funcs){.create = f_create, .update = f_update, .user = &c});
    json_t *o = obj("{\"metadata\":{\"name\":\"a\"}}");
    cr_assert_not(ctrl__pred_create(p, o));
    cr_assert_not(ctrl__pred_update(p, o, o));
    cr_assert(ctrl__pred_delete(p, o), "no remove callback: passes");
    cr_assert_eq(c.create, 1);
    cr_assert_eq(c.update, 1);
    c.answer = true;
    cr_assert(ctrl__pred_create(p, o));
    cr_assert(ctrl__pred_create(NULL, o), "no predicate: passes");
    ctrl_predicate_free(p);
    json_decref(o);
}

Test(predicate, generation_changed)
{
    ctrl_predicate *p = ctrl_pred_generation_changed();
    json_t *g1 = obj("{\"metadata\":{\"name\":\"a\",\"generation\":1,\"resourceVersion\":\"5\"}}");
    json_t *g1b = obj("{\"metadata\":{\"name\":\"a\",\"generation\":1,\"resourceVersion\":\"6\"}}");
    json_t *g2 = obj("{\"metadata\":{\"name\":\"a\",\"generation\":2,\"resourceVersion\":\"7\"}}");
    json_t *bare = obj("{\"kind\":\"X\"}");
    cr_assert(ctrl__pred_create(p, g1));
    cr_assert(ctrl__pred_delete(p, g1));
    cr_assert_not(ctrl__pred_update(p, g1, g1b), "a status-only change keeps the generation");
    cr_assert(ctrl__pred_update(p, g1b, g2));
    cr_assert_not(ctrl__pred_update(p, bare, g2), "no metadata: dropped");
    ctrl_predicate_free(p);

    p = ctrl_pred_resource_version_changed();
    cr_assert(ctrl__pred_update(p, g1, g1b));
    cr_assert_not(ctrl__pred_update(p, g1, g1), "a resync (old == new) is filtered");
    cr_assert_not(ctrl__pred_update(p, bare, g1));
    cr_assert(ctrl__pred_create(p, g1));
    ctrl_predicate_free(p);
    json_decref(g1);
    json_decref(g1b);
    json_decref(g2);
    json_decref(bare);
}

Test(predicate, labels_and_annotations_changed)
{
    json_t *none = obj("{\"metadata\":{\"name\":\"a\"}}");
    json_t *empty = obj("{\"metadata\":{\"name\":\"a\",\"labels\":{},\"annotations\":{}}}");
    json_t *l1 = obj("{\"metadata\":{\"name\":\"a\",\"labels\":{\"app\":\"web\",\"t\":\"1\"}}}");
    json_t *l1r = obj("{\"metadata\":{\"name\":\"a\",\"labels\":{\"t\":\"1\",\"app\":\"web\"}}}");
    json_t *l2 = obj("{\"metadata\":{\"name\":\"a\",\"labels\":{\"app\":\"db\",\"t\":\"1\"}},"
                     "\"spec\":{\"x\":1}}");
    json_t *a1 = obj("{\"metadata\":{\"name\":\"a\",\"annotations\":{\"note\":\"x\"}}}");
    ctrl_predicate *lp = ctrl_pred_labels_changed();
    ctrl_predicate *ap = ctrl_pred_annotations_changed();
    cr_assert_not(ctrl__pred_update(lp, none, empty), "absent and empty maps are equal");
    cr_assert_not(ctrl__pred_update(lp, l1, l1r), "order does not matter");
    cr_assert(ctrl__pred_update(lp, l1, l2));
    cr_assert(ctrl__pred_update(lp, none, l1));
    cr_assert_not(ctrl__pred_update(lp, a1, none), "annotations are not labels");
    cr_assert(ctrl__pred_update(ap, a1, none));
    cr_assert_not(ctrl__pred_update(ap, l1, l2));
    cr_assert(ctrl__pred_create(lp, l1));
    cr_assert(ctrl__pred_delete(ap, l1));
    ctrl_predicate_free(lp);
    ctrl_predicate_free(ap);
    json_decref(none);
    json_decref(empty);
    json_decref(l1);
    json_decref(l1r);
    json_decref(l2);
    json_decref(a1);
}

Test(predicate, label_selector)
{
    cr_assert_null(ctrl_pred_label_selector("app in (web"), "malformed: NULL");
    cr_assert_null(ctrl_pred_label_selector(NULL));
    ctrl_predicate *p = ctrl_pred_label_selector("app in (web,api),tier!=cache,!legacy");
    cr_assert_not_null(p);
    json_t *web = obj("{\"metadata\":{\"name\":\"a\",\"labels\":{\"app\":\"web\"}}}");
    json_t *cache =
        obj("{\"metadata\":{\"name\":\"a\",\"labels\":{\"app\":\"web\",\"tier\":\"cache\"}}}");
    json_t *legacy =
        obj("{\"metadata\":{\"name\":\"a\",\"labels\":{\"app\":\"api\",\"legacy\":\"y\"}}}");
    json_t *nolabels = obj("{\"metadata\":{\"name\":\"a\"}}");
    cr_assert(ctrl__pred_create(p, web));
    cr_assert_not(ctrl__pred_create(p, cache));
    cr_assert_not(ctrl__pred_delete(p, legacy));
    cr_assert_not(ctrl__pred_create(p, nolabels));
    cr_assert(ctrl__pred_update(p, cache, web), "updates are judged by the new object");
    cr_assert_not(ctrl__pred_update(p, web, cache));
    ctrl_predicate_free(p);
    p = ctrl_pred_label_selector("");
    cr_assert(ctrl__pred_create(p, nolabels), "the empty selector matches everything");
    ctrl_predicate_free(p);
    json_decref(web);
    json_decref(cache);
    json_decref(legacy);
    json_decref(nolabels);
}

static bool yes(const json_t *o, void *u)
{
    (void)o;
    (void)u;
    return true;
}

static bool no(const json_t *o, void *u)
{
    (void)o;
    (void)u;
    return false;
}

static ctrl_predicate *T(void)
{
    return ctrl_pred_funcs(&(ctrl_predicate_funcs){.create = yes});
}

static ctrl_predicate *F(void)
{
    return ctrl_pred_funcs(&(ctrl_predicate_funcs){.create = no});
}

Test(predicate, and_or_not)
{
    json_t *o = obj("{\"metadata\":{\"name\":\"a\"}}");
    struct {
        ctrl_predicate *p;
        bool want;
    } cases[] = {
        {ctrl_pred_and(T(), T()), true},
        {ctrl_pred_and(T(), F()), false},
        {ctrl_pred_or(F(), T()), true},
        {ctrl_pred_or(F(), F()), false},
        {ctrl_pred_not(F()), true},
        {ctrl_pred_not(ctrl_pred_or(T(), F())), false},
        {ctrl_pred_and(ctrl_pred_or(F(), T()), ctrl_pred_not(F())), true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_not_null(cases[i].p);
        cr_assert_eq(ctrl__pred_create(cases[i].p, o), cases[i].want, "case %zu", i);
        ctrl_predicate_free(cases[i].p);
    }
    /* A NULL operand (a malformed selector) makes the whole NULL; the other
     * operand is released (ASan would report a leak). */
    cr_assert_null(ctrl_pred_and(T(), ctrl_pred_label_selector("=")));
    cr_assert_null(ctrl_pred_or(NULL, T()));
    cr_assert_null(ctrl_pred_not(NULL));
    json_decref(o);
}

Test(predicate, shared_references)
{
    json_t *o = obj("{\"metadata\":{\"name\":\"a\"}}");
    ctrl_predicate *shared = F();
    ctrl_predicate *a = ctrl_pred_not(ctrl_predicate_ref(shared));
    ctrl_predicate *b = ctrl_pred_or(ctrl_predicate_ref(shared), T());
    ctrl_predicate_free(shared); /* a and b keep it alive */
    cr_assert(ctrl__pred_create(a, o));
    cr_assert(ctrl__pred_create(b, o));
    ctrl_predicate_free(a);
    cr_assert(ctrl__pred_create(b, o));
    ctrl_predicate_free(b);
    ctrl_predicate_free(NULL);
    /* a long chain frees without deep recursion */
    ctrl_predicate *chain = T();
    for (int i = 0; i < 100000; i++)
        chain = ctrl_pred_and(chain, T());
    ctrl_predicate_free(chain);
    json_decref(o);
}

/* ---- handlers ---- */

typedef struct reqs {
    char got[16][128];
    int n;
} reqs;

static void collect(void *ud, const char *ns, const char *name)
{
    reqs *r = ud;
    cr_assert_lt(r->n, 16);
    snprintf(r->got[r->n++], sizeof(r->got[0]), "%s/%s", ns, name);
}

Test(handler, for_object)
{
    ctrl_handler *h = ctrl_handler_for_object();
    json_t *o = obj("{\"metadata\":{\"namespace\":\"ns\",\"name\":\"a\"}}");
    json_t *cs = obj("{\"metadata\":{\"name\":\"node1\"}}");
    json_t *noname = obj("{\"metadata\":{}}");
    reqs r = {0};
    ctrl__handler_create(h, o, collect, &r);
    ctrl__handler_update(h, o, o, collect, &r);
    ctrl__handler_delete(h, cs, collect, &r);
    ctrl__handler_create(h, noname, collect, &r);
    cr_assert_eq(r.n, 3, "one request per event (the update maps the new object only)");
    cr_assert_str_eq(r.got[0], "ns/a");
    cr_assert_str_eq(r.got[1], "ns/a");
    cr_assert_str_eq(r.got[2], "/node1");
    ctrl_handler_free(h);
    json_decref(o);
    json_decref(cs);
    json_decref(noname);
}

static const char *owned_json =
    "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"pod-1\",\"ownerReferences\":["
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"rs-ctrl\",\"controller\":true},"
    "{\"apiVersion\":\"apps/v1beta2\",\"kind\":\"ReplicaSet\",\"name\":\"rs-other\"},"
    "{\"apiVersion\":\"v1\",\"kind\":\"ReplicaSet\",\"name\":\"core-group\"},"
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"dep\"}]}}";

Test(handler, for_owner_controller_only)
{
    ctrl_handler *h = ctrl_handler_for_owner("apps/v1", "ReplicaSet", true);
    json_t *o = obj(owned_json);
    reqs r = {0};
    ctrl__handler_create(h, o, collect, &r);
    cr_assert_eq(r.n, 1);
    cr_assert_str_eq(r.got[0], "ns/rs-ctrl");
    ctrl_handler_free(h);
    json_decref(o);
}

Test(handler, for_owner_every_owner_of_the_group_and_kind)
{
    ctrl_handler *h = ctrl_handler_for_owner("apps/v1", "ReplicaSet", false);
    json_t *o = obj(owned_json);
    reqs r = {0};
    ctrl__handler_delete(h, o, collect, &r);
    cr_assert_eq(r.n, 2, "versions may differ, groups and kinds may not");
    cr_assert_str_eq(r.got[0], "ns/rs-ctrl");
    cr_assert_str_eq(r.got[1], "ns/rs-other");
    ctrl__handler_set_owner_cluster_scoped(h, true);
    r.n = 0;
    ctrl__handler_create(h, o, collect, &r);
    cr_assert_str_eq(r.got[0], "/rs-ctrl", "a cluster-scoped owner has no namespace");
    ctrl_handler_free(h);
    json_decref(o);
    cr_assert_null(ctrl_handler_for_owner(NULL, "X", true));
}

Test(handler, for_owner_update_maps_old_and_new_owners)
{
    ctrl_handler *h = ctrl_handler_for_owner("v1", "ConfigMap", true);
    json_t *before = obj("{\"metadata\":{\"namespace\":\"ns\",\"name\":\"x\",\"ownerReferences\":["
                         "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"old\","
                         "\"controller\":true}]}}");
    json_t *after = obj("{\"metadata\":{\"namespace\":\"ns\",\"name\":\"x\",\"ownerReferences\":["
                        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"new\","
                        "\"controller\":true}]}}");
    reqs r = {0};
    ctrl__handler_update(h, before, after, collect, &r);
    cr_assert_eq(r.n, 2);
    cr_assert_str_eq(r.got[0], "ns/old");
    cr_assert_str_eq(r.got[1], "ns/new");
    ctrl_handler_free(h);
    json_decref(before);
    json_decref(after);
}

static json_t *map_to_two(const json_t *o, void *user)
{
    int *ncalls = user;
    (*ncalls)++;
    const char *name = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
    return json_pack("[{s:s,s:s},{s:s},{s:s},{}]", "namespace", "team", "name", name, "name",
                     "cluster-wide", "namespace", "no-name");
}

Test(handler, from_map)
{
    int ncalls = 0;
    ctrl_handler *h = ctrl_handler_from_map(map_to_two, &ncalls);
    json_t *o = obj("{\"metadata\":{\"name\":\"src\"}}");
    reqs r = {0};
    ctrl__handler_create(h, o, collect, &r);
    cr_assert_eq(ncalls, 1);
    cr_assert_eq(r.n, 2, "entries without a name are skipped");
    cr_assert_str_eq(r.got[0], "team/src");
    cr_assert_str_eq(r.got[1], "/cluster-wide");
    r.n = 0;
    ctrl__handler_update(h, o, o, collect, &r);
    cr_assert_eq(ncalls, 3, "an update maps the old and the new object");
    cr_assert_eq(r.n, 4);
    ctrl_handler_free(h);
    json_decref(o);
    cr_assert_null(ctrl_handler_from_map(NULL, NULL));
}
