/*
 * test_crd.c - CustomResourceDefinitions over HTTP: established status,
 * discovery, custom object CRUD, schema validation, defaults, pruning, the
 * status and scale subresources, and removal with the CRD.
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

TestSuite(crd, .init = setup, .fini = teardown);

#define CRDS "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
#define W(name) S("%s/%s", WIDGETS, name)

/* Is group g listed in /apis (with version v1 preferred)? */
static bool group_listed(const char *g)
{
    json_t *apis = req(200, "GET", "/apis", NULL);
    cr_assert_str_eq(jstr(apis, "kind"), "APIGroupList");
    bool found = false;
    size_t i;
    json_t *grp;
    json_array_foreach(jget(apis, "groups"), i, grp)
    {
        if (jstr(grp, "name") && !strcmp(jstr(grp, "name"), g)) {
            found = true;
            cr_assert_str_eq(jstr(grp, "versions.0.groupVersion"), S("%s/v1", g));
            cr_assert_str_eq(jstr(grp, "versions.0.version"), "v1");
            cr_assert_str_eq(jstr(grp, "preferredVersion.groupVersion"), S("%s/v1", g));
        }
    }
    json_decref(apis);
    return found;
}

/* The APIResourceList entry named name in /apis/<gv>, or NULL (new reference). */
static json_t *resource_entry(const char *gv, const char *name)
{
    json_t *l = req(0, "GET", S("/apis/%s", gv), NULL);
    json_t *found = NULL;
    size_t i;
    json_t *r;
    json_array_foreach(jget(l, "resources"), i, r)
    {
        if (jstr(r, "name") && !strcmp(jstr(r, "name"), name))
            found = json_incref(r);
    }
    json_decref(l);
    return found;
}

Test(crd, create_is_established_and_discoverable)
{
    cr_assert(!group_listed("example.com"));
    json_decref(req_fail(404, "NotFound", "GET", "/apis/example.com/v1", NULL));
    json_decref(req_fail(404, "NotFound", "GET", WIDGETS, NULL));

    json_t *c = mk_crd();
    bool established = false;
    size_t i;
    json_t *cond;
    json_array_foreach(jget(c, "status.conditions"), i, cond)
    {
        if (!strcmp(jstr(cond, "type"), "Established"))
            established = !strcmp(jstr(cond, "status"), "True");
    }
    cr_assert(established, "Established=True in status.conditions");
    cr_assert_str_eq(jstr(c, "status.acceptedNames.kind"), "Widget");
    cr_assert_str_eq(jstr(c, "status.storedVersions.0"), "v1");
    json_decref(c);

    /* Served at once, with no delay. */
    cr_assert(group_listed("example.com"));
    json_t *l = req(200, "GET", "/apis/example.com/v1", NULL);
    cr_assert_str_eq(jstr(l, "kind"), "APIResourceList");
    cr_assert_str_eq(jstr(l, "groupVersion"), "example.com/v1");
    json_decref(l);
    json_t *r = resource_entry("example.com/v1", "widgets");
    cr_assert_not_null(r);
    cr_assert_str_eq(jstr(r, "kind"), "Widget");
    cr_assert_str_eq(jstr(r, "singularName"), "widget");
    cr_assert(json_is_true(jget(r, "namespaced")));
    cr_assert_str_eq(jstr(r, "shortNames.0"), "wd");
    bool can_create = false;
    for (size_t k = 0; k < json_array_size(jget(r, "verbs")); k++)
        can_create |= !strcmp(json_string_value(json_array_get(jget(r, "verbs"), k)), "create");
    cr_assert(can_create);
    json_decref(r);
    r = resource_entry("example.com/v1", "widgets/status");
    cr_assert_not_null(r, "widgets/status advertised");
    json_decref(r);
    r = resource_entry("example.com/v1", "widgets/scale");
    cr_assert_not_null(r, "widgets/scale advertised");
    json_decref(r);

    /* The CRD itself reads back, and lists. */
    json_t *g = req(200, "GET", CRDS "/widgets.example.com", NULL);
    cr_assert_str_eq(jstr(g, "kind"), "CustomResourceDefinition");
    json_decref(g);
    l = req(200, "GET", WIDGETS, NULL);
    cr_assert_str_eq(jstr(l, "kind"), "WidgetList");
    cr_assert_str_eq(jstr(l, "apiVersion"), "example.com/v1");
    cr_assert(json_is_array(jget(l, "items")));
    json_decref(l);
}

Test(crd, invalid_crd)
{
    json_t *st = req_fail(422, "Invalid", "POST", CRDS,
                          "{'metadata':{'name':'wrong.example.com'},'spec':{'group':'example.com',"
                          "'scope':'Namespaced','names':{'plural':'things','kind':'Thing'},"
                          "'versions':[{'name':'v1','served':true,'storage':true}]}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "metadata.name");
    json_decref(st);
    json_decref(req_fail(422, "Invalid", "POST", CRDS,
                         "{'metadata':{'name':'things.example.com'},'spec':{'group':'example.com',"
                         "'names':{'plural':'things','kind':'Thing'},'versions':[]}}"));
    cr_assert(!group_listed("example.com"), "a refused CRD serves nothing");
}

Test(crd, custom_object_crud)
{
    json_decref(mk_crd());
    json_t *w = req(201, "POST", WIDGETS,
                    "{'apiVersion':'example.com/v1','kind':'Widget','metadata':{'name':'w',"
                    "'labels':{'a':'b'}},'spec':{'color':'red','size':5}}");
    cr_assert_str_eq(jstr(w, "kind"), "Widget");
    cr_assert_str_eq(jstr(w, "apiVersion"), "example.com/v1");
    cr_assert_eq(jint(w, "metadata.generation"), 1);
    cr_assert_eq(jint(w, "spec.size"), 5);
    cr_assert_not_null(jstr(w, "metadata.uid"));
    json_t *g = req(200, "GET", W("w"), NULL);
    cr_assert(json_equal(g, w));
    json_decref(g);

    json_t *l = req(200, "GET", S("%s?labelSelector=a%%3Db", WIDGETS), NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 1);
    cr_assert_str_eq(jstr(l, "items.0.kind"), "Widget");
    cr_assert_eq(rv_of(l), fakeapi_revision(srv));
    json_decref(l);
    l = req(200, "GET", "/apis/example.com/v1/widgets", NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 1);
    json_decref(l);

    json_t *u = req(200, "PUT", W("w"),
                    S("{'apiVersion':'example.com/v1','kind':'Widget','metadata':{'name':'w',"
                      "'resourceVersion':'%s'},'spec':{'color':'blue','size':6}}",
                      jstr(w, "metadata.resourceVersion")));
    cr_assert_str_eq(jstr(u, "spec.color"), "blue");
    cr_assert_eq(jint(u, "metadata.generation"), 2);
    json_decref(u);
    json_t *st = req_fail(409, "Conflict", "PUT", W("w"),
                          S("{'metadata':{'name':'w','resourceVersion':'%s'},'spec':"
                            "{'color':'red'}}",
                            jstr(w, "metadata.resourceVersion")));
    cr_assert_str_eq(jstr(st, "message"),
                     "Operation cannot be fulfilled on widgets.example.com \"w\": the object has "
                     "been modified; please apply your changes to the latest version and try "
                     "again");
    json_decref(st);
    st = req_fail(409, "AlreadyExists", "POST", WIDGETS,
                  "{'metadata':{'name':'w'},'spec':{'color':'red'}}");
    cr_assert_str_eq(jstr(st, "message"), "widgets.example.com \"w\" already exists");
    json_decref(st);
    json_decref(req_fail(400, "BadRequest", "POST", WIDGETS,
                         "{'apiVersion':'example.com/v2','kind':'Widget','metadata':{'name':'v'},"
                         "'spec':{'color':'red'}}"));

    st = req(200, "DELETE", W("w"), NULL);
    cr_assert_str_eq(jstr(st, "status"), "Success");
    cr_assert_str_eq(jstr(st, "details.group"), "example.com");
    cr_assert_str_eq(jstr(st, "details.kind"), "widgets");
    json_decref(st);
    st = req_fail(404, "NotFound", "GET", W("w"), NULL);
    cr_assert_str_eq(jstr(st, "message"), "widgets.example.com \"w\" not found");
    json_decref(st);
    json_decref(w);
}

Test(crd, schema_validation)
{
    json_decref(mk_crd());
    json_t *st = req_fail(422, "Invalid", "POST", WIDGETS, "{'metadata':{'name':'w'},'spec':{}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "spec.color");
    cr_assert_str_eq(jstr(st, "details.causes.0.reason"), "FieldValueRequired");
    cr_assert_str_eq(jstr(st, "details.kind"), "Widget");
    cr_assert_str_eq(jstr(st, "details.group"), "example.com");
    cr_assert(!strncmp(jstr(st, "message"), "Widget.example.com \"w\" is invalid: spec.color: ",
                       strlen("Widget.example.com \"w\" is invalid: spec.color: ")),
              "%s", jstr(st, "message"));
    json_decref(st);

    st = req_fail(422, "Invalid", "POST", WIDGETS,
                  "{'metadata':{'name':'w'},'spec':{'color':'green'}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "spec.color");
    cr_assert_str_eq(jstr(st, "details.causes.0.reason"), "FieldValueNotSupported");
    json_decref(st);

    /* Two causes at once: both reported, the message wraps them in [...]. */
    st = req_fail(422, "Invalid", "POST", WIDGETS,
                  "{'metadata':{'name':'w'},'spec':{'color':'green','size':0}}");
    cr_assert_eq(json_array_size(jget(st, "details.causes")), 2);
    const char *m = jstr(st, "message");
    cr_assert(strstr(m, "is invalid: [") && m[strlen(m) - 1] == ']', "%s", m);
    json_decref(st);

    st = req_fail(422, "Invalid", "POST", WIDGETS,
                  "{'metadata':{'name':'w'},'spec':{'color':'red','size':'big'}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "spec.size");
    json_decref(st);
    json_decref(req_fail(422, "Invalid", "POST", WIDGETS,
                         "{'metadata':{'name':'w'},'spec':{'color':'red','tags':[1]}}"));
    cr_assert(gone(W("w")));

    /* Updates are validated too. */
    json_decref(req(201, "POST", WIDGETS, "{'metadata':{'name':'w'},'spec':{'color':'red'}}"));
    json_decref(req_fail_ct(422, "Invalid", "PATCH", W("w"), "application/merge-patch+json",
                            "{'spec':{'color':null}}"));
    json_decref(req_fail_ct(422, "Invalid", "PATCH", W("w"), "application/merge-patch+json",
                            "{'spec':{'size':-1}}"));
    json_t *g = req(200, "GET", W("w"), NULL);
    cr_assert_str_eq(jstr(g, "spec.color"), "red");
    json_decref(g);
}

Test(crd, defaults_and_pruning)
{
    json_decref(mk_crd());
    json_t *w = req(201, "POST", WIDGETS,
                    "{'metadata':{'name':'w'},'spec':{'color':'red','unknown':'x'},"
                    "'extra':{'a':1}}");
    cr_assert_eq(jint(w, "spec.size"), 3, "default applied");
    cr_assert_null(jget(w, "spec.unknown"), "unknown field pruned");
    cr_assert_null(jget(w, "extra"), "unknown top-level field pruned");
    cr_assert_str_eq(jstr(w, "metadata.name"), "w", "metadata is not pruned");
    json_t *g = req(200, "GET", W("w"), NULL);
    cr_assert(json_equal(g, w), "what was stored is what was answered");
    json_decref(g);
    json_decref(w);
    /* Defaults also apply on update when the field is dropped. */
    w = req(200, "PUT", W("w"), "{'metadata':{'name':'w'},'spec':{'color':'blue','bogus':1}}");
    cr_assert_eq(jint(w, "spec.size"), 3);
    cr_assert_null(jget(w, "spec.bogus"));
    json_decref(w);
}

Test(crd, status_subresource_separation)
{
    json_decref(mk_crd());
    json_t *w = req(201, "POST", WIDGETS,
                    "{'metadata':{'name':'w'},'spec':{'color':'red'},'status':{'ready':true}}");
    cr_assert_null(jget(w, "status"), "status dropped on create");
    json_decref(w);

    json_t *s = req_ct(200, "PATCH", S("%s/status", W("w")), "application/merge-patch+json",
                       "{'spec':{'color':'blue'},'status':{'ready':true,'replicas':2}}");
    cr_assert(json_is_true(jget(s, "status.ready")));
    cr_assert_str_eq(jstr(s, "spec.color"), "red", "a status write leaves spec alone");
    cr_assert_eq(jint(s, "metadata.generation"), 1);
    json_decref(s);

    json_t *u = req(200, "PUT", W("w"),
                    "{'metadata':{'name':'w'},'spec':{'color':'blue'},'status':{'ready':false}}");
    cr_assert(json_is_true(jget(u, "status.ready")), "a main write leaves status alone");
    cr_assert_str_eq(jstr(u, "spec.color"), "blue");
    cr_assert_eq(jint(u, "metadata.generation"), 2);
    json_decref(u);

    /* PUT on /status with a stale resourceVersion conflicts. */
    json_t *st = req_fail(409, "Conflict", "PUT", S("%s/status", W("w")),
                          "{'metadata':{'name':'w','resourceVersion':'1'},'spec':{'color':'red'},"
                          "'status':{'ready':false}}");
    json_decref(st);
    /* Status is validated against the schema. */
    json_decref(req_fail_ct(422, "Invalid", "PATCH", S("%s/status", W("w")),
                            "application/merge-patch+json", "{'status':{'ready':'yes'}}"));
    json_t *g = req(200, "GET", S("%s/status", W("w")), NULL);
    cr_assert(json_is_true(jget(g, "status.ready")));
    json_decref(g);
}

Test(crd, scale_subresource)
{
    json_decref(mk_crd());
    json_decref(
        req(201, "POST", WIDGETS, "{'metadata':{'name':'w'},'spec':{'color':'red','replicas':2}}"));
    json_decref(req_ct(200, "PATCH", S("%s/status", W("w")), "application/merge-patch+json",
                       "{'status':{'replicas':1,'selector':'app=w'}}"));
    json_t *sc = req(200, "GET", S("%s/scale", W("w")), NULL);
    cr_assert_str_eq(jstr(sc, "kind"), "Scale");
    cr_assert_str_eq(jstr(sc, "apiVersion"), "autoscaling/v1");
    cr_assert_str_eq(jstr(sc, "metadata.name"), "w");
    cr_assert_eq(jint(sc, "spec.replicas"), 2);
    cr_assert_eq(jint(sc, "status.replicas"), 1);
    cr_assert_str_eq(jstr(sc, "status.selector"), "app=w");
    json_decref(sc);

    sc = req(200, "PUT", S("%s/scale", W("w")),
             "{'apiVersion':'autoscaling/v1','kind':'Scale','metadata':{'name':'w'},"
             "'spec':{'replicas':7}}");
    cr_assert_str_eq(jstr(sc, "kind"), "Scale");
    cr_assert_eq(jint(sc, "spec.replicas"), 7);
    json_decref(sc);
    json_t *g = req(200, "GET", W("w"), NULL);
    cr_assert_eq(jint(g, "spec.replicas"), 7);
    cr_assert_eq(jint(g, "status.replicas"), 1);
    json_decref(g);

    sc = req_ct(200, "PATCH", S("%s/scale", W("w")), "application/merge-patch+json",
                "{'spec':{'replicas':0}}");
    cr_assert_eq(jint(sc, "spec.replicas"), 0);
    json_decref(sc);

    /* A CRD without a scale subresource has no /scale. */
    json_decref(req(201, "POST", CRDS,
                    "{'metadata':{'name':'gadgets.example.org'},'spec':{'group':'example.org',"
                    "'scope':'Namespaced','names':{'plural':'gadgets','singular':'gadget',"
                    "'kind':'Gadget'},'versions':[{'name':'v1','served':true,'storage':true,"
                    "'schema':{'openAPIV3Schema':{'type':'object',"
                    "'x-kubernetes-preserve-unknown-fields':true}}}]}}"));
    json_decref(req(201, "POST", "/apis/example.org/v1/namespaces/default/gadgets",
                    "{'metadata':{'name':'g'},'spec':{'anything':{'goes':1}}}"));
    json_t *gg = req(200, "GET", "/apis/example.org/v1/namespaces/default/gadgets/g", NULL);
    cr_assert_eq(jint(gg, "spec.anything.goes"), 1, "preserve-unknown-fields keeps it");
    json_decref(gg);
    json_decref(req_fail(404, "NotFound", "GET",
                         "/apis/example.org/v1/namespaces/default/gadgets/g/scale", NULL));
    json_decref(req_fail(404, "NotFound", "GET",
                         "/apis/example.org/v1/namespaces/default/gadgets/g/status", NULL));
}

Test(crd, cluster_scoped_crd)
{
    json_decref(req(201, "POST", CRDS,
                    "{'metadata':{'name':'realms.example.net'},'spec':{'group':'example.net',"
                    "'scope':'Cluster','names':{'plural':'realms','singular':'realm',"
                    "'kind':'Realm'},'versions':[{'name':'v1','served':true,'storage':true,"
                    "'schema':{'openAPIV3Schema':{'type':'object',"
                    "'x-kubernetes-preserve-unknown-fields':true}}}]}}"));
    json_t *r = req(201, "POST", "/apis/example.net/v1/realms", "{'metadata':{'name':'r1'}}");
    cr_assert_null(jget(r, "metadata.namespace"));
    json_decref(r);
    json_decref(req(200, "GET", "/apis/example.net/v1/realms/r1", NULL));
    json_decref(req_fail(404, "NotFound", "GET",
                         "/apis/example.net/v1/namespaces/default/realms/r1", NULL));
    json_t *e = resource_entry("example.net/v1", "realms");
    cr_assert(json_is_false(jget(e, "namespaced")));
    json_decref(e);
}

Test(crd, deleting_the_crd_removes_objects_and_discovery)
{
    json_decref(mk_crd());
    mk_ns("other");
    json_decref(req(201, "POST", WIDGETS, "{'metadata':{'name':'a'},'spec':{'color':'red'}}"));
    json_decref(req(201, "POST", "/apis/example.com/v1/namespaces/other/widgets",
                    "{'metadata':{'name':'b'},'spec':{'color':'blue'}}"));
    json_t *st = req(200, "DELETE", CRDS "/widgets.example.com", NULL);
    cr_assert_str_eq(jstr(st, "status"), "Success");
    json_decref(st);
    cr_assert(wait_gone(CRDS "/widgets.example.com", 2000));
    json_decref(req_fail(404, "NotFound", "GET", W("a"), NULL));
    json_decref(req_fail(404, "NotFound", "GET", "/apis/example.com/v1/widgets", NULL));
    json_decref(req_fail(404, "NotFound", "GET", "/apis/example.com/v1", NULL));
    cr_assert(!group_listed("example.com"));

    /* Recreating the CRD finds no old objects. */
    json_decref(mk_crd());
    json_t *l = req(200, "GET", "/apis/example.com/v1/widgets", NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 0, "objects went with the CRD");
    json_decref(l);
}
