/*
 * test_list.c - lists over HTTP (K8S-API.md section 4): list kind, items, the
 * list resourceVersion, label and field selectors, limit/continue paging,
 * continue tokens after compaction, resourceVersion parameters, -A.
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

TestSuite(list, .init = setup, .fini = teardown);

/* Names of a list's items, comma-joined ("ns/name" when with_ns). */
static const char *names_of(const json_t *list, bool with_ns)
{
    static char out[8192];
    size_t off = 0;
    size_t i;
    json_t *it;
    out[0] = '\0';
    json_array_foreach(jget(list, "items"), i, it)
    {
        if (with_ns)
            off += (size_t)snprintf(out + off, sizeof out - off, "%s%s/%s", i ? "," : "",
                                    jstr(it, "metadata.namespace"), jstr(it, "metadata.name"));
        else
            off += (size_t)snprintf(out + off, sizeof out - off, "%s%s", i ? "," : "",
                                    jstr(it, "metadata.name"));
    }
    return out;
}

/* List configmaps in default with a label selector; the item names. */
static void expect_sel(const char *sel, const char *want)
{
    json_t *l = req(200, "GET", S("%s?labelSelector=%s", CM("default"), enc(sel)), NULL);
    cr_assert_str_eq(names_of(l, false), want, "selector '%s'", sel);
    json_decref(l);
}

Test(list, kind_api_version_and_empty_items)
{
    json_t *l = req(200, "GET", CM("default"), NULL);
    cr_assert_str_eq(jstr(l, "kind"), "ConfigMapList");
    cr_assert_str_eq(jstr(l, "apiVersion"), "v1");
    cr_assert(json_is_array(jget(l, "items")), "items is [] not null");
    cr_assert_eq(json_array_size(jget(l, "items")), 0);
    cr_assert_null(jget(l, "metadata.continue"));
    json_decref(l);

    l = req(200, "GET", "/apis/apps/v1/namespaces/default/deployments", NULL);
    cr_assert_str_eq(jstr(l, "kind"), "DeploymentList");
    cr_assert_str_eq(jstr(l, "apiVersion"), "apps/v1");
    cr_assert(json_is_array(jget(l, "items")));
    json_decref(l);

    l = req(200, "GET", "/apis/coordination.k8s.io/v1/leases", NULL);
    cr_assert_str_eq(jstr(l, "kind"), "LeaseList");
    cr_assert_str_eq(jstr(l, "apiVersion"), "coordination.k8s.io/v1");
    json_decref(l);

    /* The bootstrapped namespaces, sorted by name. */
    l = req(200, "GET", "/api/v1/namespaces", NULL);
    cr_assert_str_eq(jstr(l, "kind"), "NamespaceList");
    cr_assert_str_eq(names_of(l, false), "default,kube-node-lease,kube-public,kube-system");
    json_decref(l);
}

Test(list, resource_version_is_store_revision)
{
    json_decref(mk_cm("default", "a", NULL));
    json_decref(mk_cm("default", "b", NULL));
    /* Later writes of other kinds and namespaces raise the revision. */
    json_decref(
        req(201, "POST", "/api/v1/namespaces/default/secrets", "{'metadata':{'name':'s'}}"));
    mk_ns("elsewhere");
    json_t *l = req(200, "GET", CM("default"), NULL);
    unsigned long long max_item = 0;
    size_t i;
    json_t *it;
    json_array_foreach(jget(l, "items"), i, it)
    {
        if (rv_of(it) > max_item)
            max_item = rv_of(it);
    }
    unsigned long long lrv = rv_of(l);
    cr_assert_eq(lrv, fakeapi_revision(srv));
    cr_assert_gt(lrv, max_item, "the store's revision, not the largest item's");
    json_decref(l);

    /* An empty list carries the revision too. */
    l = req(200, "GET", "/apis/apps/v1/namespaces/default/deployments", NULL);
    cr_assert_eq(rv_of(l), fakeapi_revision(srv));
    json_decref(l);
}

Test(list, items_carry_kind_and_sorted_by_name)
{
    json_decref(mk_cm("default", "zeta", NULL));
    json_decref(mk_cm("default", "alpha", NULL));
    json_decref(mk_cm("default", "mid", NULL));
    json_t *l = req(200, "GET", CM("default"), NULL);
    cr_assert_str_eq(names_of(l, false), "alpha,mid,zeta");
    json_t *first = jget(l, "items.0");
    cr_assert_not_null(jstr(first, "metadata.uid"));
    cr_assert_str_eq(jstr(first, "data.k"), "v");
    json_decref(l);
}

static void label_fixture(void)
{
    json_decref(mk_cm("default", "a", "{'env':'prod','tier':'web'}"));
    json_decref(mk_cm("default", "b", "{'env':'dev','tier':'db'}"));
    json_decref(mk_cm("default", "c", "{'env':'prod'}"));
    json_decref(mk_cm("default", "d", NULL));
    json_decref(mk_cm("default", "e", "{'n':'5'}"));
}

Test(list, label_selector_operators)
{
    label_fixture();
    expect_sel("env=prod", "a,c");
    expect_sel("env==prod", "a,c");
    expect_sel("env!=prod", "b,d,e");
    expect_sel("env in (prod,dev)", "a,b,c");
    expect_sel("env in (prod)", "a,c");
    expect_sel("env notin (prod)", "b,d,e");
    expect_sel("env notin (prod,dev)", "d,e");
    expect_sel("tier", "a,b");
    expect_sel("!tier", "c,d,e");
    expect_sel("env=prod,tier=web", "a");
    expect_sel("env=prod,!tier", "c");
    expect_sel("env=prod,tier!=web", "c");
    expect_sel("n>4", "e");
    expect_sel("n<6", "e");
    expect_sel("n<5", "");
    expect_sel("n>5", "");
    expect_sel("env=staging", "");
    expect_sel("", "a,b,c,d,e");
    expect_sel(" env = prod ", "a,c");
}

Test(list, malformed_label_selector)
{
    label_fixture();
    static const char *const bad[] = {"env in (prod", "=prod",      "a b",       "env in prod",
                                      "n>x",          "env=prod,,", "!env=prod", "Bad Key=1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *st = req(400, "GET", S("%s?labelSelector=%s", CM("default"), enc(bad[i])), NULL);
        assert_failure(st, 400, "BadRequest");
        json_decref(st);
    }
}

Test(list, field_selectors)
{
    mk_ns("ns1");
    json_decref(mk_cm("default", "a", NULL));
    json_decref(mk_cm("default", "b", NULL));
    json_decref(mk_cm("ns1", "a", NULL));
    json_t *l =
        req(200, "GET", S("%s?fieldSelector=%s", CM("default"), enc("metadata.name=a")), NULL);
    cr_assert_str_eq(names_of(l, false), "a");
    json_decref(l);
    l = req(200, "GET", S("%s?fieldSelector=%s", CM("default"), enc("metadata.name==b")), NULL);
    cr_assert_str_eq(names_of(l, false), "b");
    json_decref(l);
    l = req(200, "GET", S("%s?fieldSelector=%s", CM("default"), enc("metadata.name!=a")), NULL);
    cr_assert_str_eq(names_of(l, false), "b");
    json_decref(l);
    l = req(200, "GET", S("/api/v1/configmaps?fieldSelector=%s", enc("metadata.namespace=ns1")),
            NULL);
    cr_assert_str_eq(names_of(l, true), "ns1/a");
    json_decref(l);
    l = req(
        200, "GET",
        S("/api/v1/configmaps?fieldSelector=%s", enc("metadata.name=a,metadata.namespace!=ns1")),
        NULL);
    cr_assert_str_eq(names_of(l, true), "default/a");
    json_decref(l);
    /* Field and label selectors together. */
    json_decref(req_ct(200, "PATCH", "/api/v1/namespaces/default/configmaps/b",
                       "application/merge-patch+json", "{'metadata':{'labels':{'x':'y'}}}"));
    l = req(200, "GET",
            S("%s?fieldSelector=%s&labelSelector=x", CM("default"), enc("metadata.name!=a")), NULL);
    cr_assert_str_eq(names_of(l, false), "b");
    json_decref(l);
    l = req(200, "GET",
            S("%s?fieldSelector=%s&labelSelector=x", CM("default"), enc("metadata.name=a")), NULL);
    cr_assert_str_eq(names_of(l, false), "");
    json_decref(l);
}

static void mk_pod(const char *name, const char *node, const char *phase)
{
    json_t *p = req(201, "POST", "/api/v1/namespaces/default/pods",
                    S("{'metadata':{'name':'%s'},'spec':{%s%s%s'containers':[{'name':'c',"
                      "'image':'i'}]}}",
                      name, node ? "'nodeName':'" : "", node ? node : "", node ? "'," : ""));
    json_decref(p);
    if (phase) {
        p = req_ct(200, "PATCH", S("/api/v1/namespaces/default/pods/%s/status", name),
                   "application/merge-patch+json", S("{'status':{'phase':'%s'}}", phase));
        cr_assert_str_eq(jstr(p, "status.phase"), phase);
        json_decref(p);
    }
}

Test(list, pod_field_selectors)
{
    mk_pod("p1", "node1", "Running");
    mk_pod("p2", "node2", "Pending");
    mk_pod("p3", NULL, "Pending");
    mk_pod("p4", "node1", "Succeeded");
    struct {
        const char *sel, *want;
    } cases[] = {
        {"spec.nodeName=node1", "p1,p4"},   {"spec.nodeName!=node1", "p2,p3"},
        {"spec.nodeName=", "p3"},           {"status.phase=Pending", "p2,p3"},
        {"status.phase!=Pending", "p1,p4"}, {"spec.nodeName=node1,status.phase=Running", "p1"},
        {"status.phase=Failed", ""},        {"metadata.name=p2,status.phase=Pending", "p2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *l =
            req(200, "GET",
                S("/api/v1/namespaces/default/pods?fieldSelector=%s", enc(cases[i].sel)), NULL);
        cr_assert_str_eq(names_of(l, false), cases[i].want, "%s", cases[i].sel);
        json_decref(l);
    }
    /* Across namespaces too. */
    json_t *l =
        req(200, "GET", S("/api/v1/pods?fieldSelector=%s", enc("status.phase=Running")), NULL);
    cr_assert_str_eq(names_of(l, true), "default/p1");
    json_decref(l);
}

Test(list, unsupported_field_selector)
{
    static const char *const bad[] = {"spec.nodeName=x", "data.k=v", "metadata.labels=x",
                                      "status.phase=Running"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *st = req(400, "GET", S("%s?fieldSelector=%s", CM("default"), enc(bad[i])), NULL);
        assert_failure(st, 400, "BadRequest");
        json_decref(st);
    }
    json_decref(req_fail(400, "BadRequest", "GET",
                         S("/api/v1/namespaces/default/pods?fieldSelector=%s", enc("spec.foo=1")),
                         NULL));
    json_decref(req_fail(400, "BadRequest", "GET",
                         S("/api/v1/namespaces/default/pods?fieldSelector=%s", enc("nonsense")),
                         NULL));
}

static void mk_many(int n)
{
    for (int i = 0; i < n; i++)
        json_decref(mk_cm("default", S("cm-%02d", i), NULL));
}

Test(list, limit_and_continue)
{
    mk_many(25);
    unsigned long long rev = fakeapi_revision(srv);
    bool seen[25] = {false};
    int pages = 0, total = 0;
    char cont[2048] = "";
    do {
        json_t *l = req(200, "GET",
                        cont[0] ? S("%s?limit=10&continue=%s", CM("default"), enc(cont))
                                : S("%s?limit=10", CM("default")),
                        NULL);
        pages++;
        size_t n = json_array_size(jget(l, "items"));
        cr_assert_eq(n, pages < 3 ? 10u : 5u, "page %d has %zu items", pages, n);
        cr_assert_eq(rv_of(l), rev, "same resourceVersion on every page");
        size_t i;
        json_t *it;
        json_array_foreach(jget(l, "items"), i, it)
        {
            int k = atoi(jstr(it, "metadata.name") + 3);
            cr_assert(k >= 0 && k < 25);
            cr_assert(!seen[k], "%s seen twice", jstr(it, "metadata.name"));
            seen[k] = true;
            total++;
        }
        const char *c = jstr(l, "metadata.continue");
        if (pages < 3)
            cr_assert(c && *c, "page %d needs a continue token", pages);
        else
            cr_assert(!c || !*c, "the last page has no continue");
        snprintf(cont, sizeof cont, "%s", c ? c : "");
        json_decref(l);
        /* A write between pages does not change the pages' resourceVersion. */
        json_decref(req(201, "POST", "/api/v1/namespaces/default/secrets",
                        S("{'metadata':{'name':'s%d'}}", pages)));
        cr_assert_lt(pages, 10, "pager loops");
    } while (cont[0]);
    cr_assert_eq(pages, 3);
    cr_assert_eq(total, 25);

    /* limit exactly the count: no continue. */
    json_t *l = req(200, "GET", S("%s?limit=25", CM("default")), NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 25);
    cr_assert(!jstr(l, "metadata.continue") || !*jstr(l, "metadata.continue"));
    json_decref(l);
}

Test(list, limit_with_selector_and_across_namespaces)
{
    mk_ns("a-ns");
    mk_ns("z-ns");
    for (int i = 0; i < 6; i++) {
        json_decref(mk_cm("a-ns", S("c%d", i), i % 2 ? "{'odd':'1'}" : NULL));
        json_decref(mk_cm("z-ns", S("c%d", i), i % 2 ? "{'odd':'1'}" : NULL));
    }
    char cont[2048] = "";
    char all[2048] = "";
    int pages = 0;
    do {
        json_t *l =
            req(200, "GET",
                cont[0] ? S("/api/v1/configmaps?labelSelector=odd&limit=2&continue=%s", enc(cont))
                        : "/api/v1/configmaps?labelSelector=odd&limit=2",
                NULL);
        cr_assert_leq(json_array_size(jget(l, "items")), 2);
        strcat(all, names_of(l, true));
        strcat(all, ";");
        const char *c = jstr(l, "metadata.continue");
        snprintf(cont, sizeof cont, "%s", c ? c : "");
        json_decref(l);
        cr_assert_lt(++pages, 10);
    } while (cont[0]);
    cr_assert_str_eq(all, "a-ns/c1,a-ns/c3;a-ns/c5,z-ns/c1;z-ns/c3,z-ns/c5;");
}

Test(list, continue_errors)
{
    mk_many(5);
    json_t *l = req(200, "GET", S("%s?limit=2", CM("default")), NULL);
    char cont[2048];
    snprintf(cont, sizeof cont, "%s", jstr(l, "metadata.continue"));
    unsigned long long rv = rv_of(l);
    json_decref(l);

    /* continue with a resourceVersion. */
    json_decref(req_fail(
        400, "BadRequest", "GET",
        S("%s?limit=2&continue=%s&resourceVersion=%llu", CM("default"), enc(cont), rv), NULL));
    /* "0" (any) is allowed with continue. */
    l = req(200, "GET", S("%s?limit=2&continue=%s&resourceVersion=0", CM("default"), enc(cont)),
            NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 2);
    json_decref(l);
    /* Garbage tokens. */
    static const char *const garbage[] = {"garbage", "zz", "abc", "0a0b", "6869"};
    for (size_t i = 0; i < sizeof garbage / sizeof *garbage; i++)
        json_decref(req_fail(400, "BadRequest", "GET",
                             S("%s?limit=2&continue=%s", CM("default"), garbage[i]), NULL));
}

Test(list, continue_after_compaction_is_gone)
{
    mk_many(5);
    json_t *l = req(200, "GET", S("%s?limit=2", CM("default")), NULL);
    char cont[2048];
    snprintf(cont, sizeof cont, "%s", jstr(l, "metadata.continue"));
    json_decref(l);
    /* More writes, then compact up to now. */
    json_decref(mk_cm("default", "later", NULL));
    json_t *c = req_ct(200, "POST", "/fakeapi/v1/compact", "application/json", NULL);
    cr_assert_eq((unsigned long long)jint(c, "compacted"), fakeapi_revision(srv));
    json_decref(c);
    json_t *st = req_fail(410, "Expired", "GET",
                          S("%s?limit=2&continue=%s", CM("default"), enc(cont)), NULL);
    json_decref(st);
    /* A fresh list still works. */
    l = req(200, "GET", S("%s?limit=2", CM("default")), NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 2);
    json_decref(l);
}

Test(list, resource_version_parameter)
{
    json_decref(mk_cm("default", "a", NULL));
    unsigned long long now = fakeapi_revision(srv);
    /* Unset, "0", and N <= now all answer the current state. */
    json_t *l = req(200, "GET", S("%s?resourceVersion=0", CM("default")), NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 1);
    json_decref(l);
    l = req(200, "GET", S("%s?resourceVersion=%llu", CM("default"), now), NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 1);
    cr_assert_geq(rv_of(l), now);
    json_decref(l);
    l = req(200, "GET", S("%s?resourceVersion=1", CM("default")), NULL);
    cr_assert_eq(rv_of(l), now);
    json_decref(l);
    /* Newer than the store: 504 Too large resource version. */
    json_t *st = req_fail(504, "Timeout", "GET",
                          S("%s?resourceVersion=%llu", CM("default"), now + 100), NULL);
    cr_assert(strstr(jstr(st, "message"), "Too large resource version"), "%s", jstr(st, "message"));
    json_decref(st);
    /* Not a number. */
    json_decref(
        req_fail(400, "BadRequest", "GET", S("%s?resourceVersion=abc", CM("default")), NULL));
    json_decref(req_fail(400, "BadRequest", "GET", S("%s?limit=abc", CM("default")), NULL));
}

Test(list, all_namespaces)
{
    mk_ns("b-ns");
    mk_ns("a-ns");
    json_decref(mk_cm("b-ns", "x", NULL));
    json_decref(mk_cm("a-ns", "y", NULL));
    json_decref(mk_cm("default", "z", NULL));
    json_decref(mk_cm("a-ns", "a", NULL));
    json_t *l = req(200, "GET", "/api/v1/configmaps", NULL);
    cr_assert_str_eq(jstr(l, "kind"), "ConfigMapList");
    cr_assert_str_eq(names_of(l, true), "a-ns/a,a-ns/y,b-ns/x,default/z");
    cr_assert_eq(rv_of(l), fakeapi_revision(srv));
    json_decref(l);
    /* One namespace only sees its own. */
    l = req(200, "GET", CM("a-ns"), NULL);
    cr_assert_str_eq(names_of(l, true), "a-ns/a,a-ns/y");
    json_decref(l);
    /* Cluster-scoped kinds list without a namespace. */
    json_decref(req(201, "POST", "/api/v1/nodes", "{'metadata':{'name':'n1'}}"));
    l = req(200, "GET", "/api/v1/nodes", NULL);
    cr_assert_str_eq(names_of(l, false), "n1");
    json_decref(l);
}

Test(list, selector_on_deleted_and_updated_objects)
{
    json_decref(mk_cm("default", "a", "{'app':'x'}"));
    json_decref(mk_cm("default", "b", "{'app':'x'}"));
    expect_sel("app=x", "a,b");
    json_decref(req_ct(200, "PATCH", "/api/v1/namespaces/default/configmaps/a",
                       "application/merge-patch+json", "{'metadata':{'labels':{'app':'y'}}}"));
    expect_sel("app=x", "b");
    expect_sel("app=y", "a");
    json_decref(req(200, "DELETE", "/api/v1/namespaces/default/configmaps/b", NULL));
    expect_sel("app=x", "");
    /* Labels removed entirely. */
    json_decref(req_ct(200, "PATCH", "/api/v1/namespaces/default/configmaps/a",
                       "application/merge-patch+json", "{'metadata':{'labels':null}}"));
    expect_sel("app", "");
    expect_sel("!app", "a");
}
