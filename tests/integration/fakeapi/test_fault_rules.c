/*
 * test_fault_rules.c - fault rules seen from the client (docs/faults.md):
 * matching (verb, subresource, group/resource, namespace, name, User-Agent,
 * bearer token), when rules fire (nth, first, after, probability), hit
 * counts through the C API and /fakeapi/v1/faults, YAML rules, removal, the
 * control endpoint spared by catch-all rules, malformed rules, the /metrics
 * text and the trace (identical for the same seed and requests, no Secret
 * data or tokens). The actions themselves are in test_faults.c.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "faults_client.h"

TestSuite(faults, .init = setup, .fini = teardown);
TestSuite(faults_trace);

/* ---- matching -------------------------------------------------------------- */

Test(faults, match_by_verb)
{
    fc_mk_cm("default", "m", "1");
    post_rule("{'match':{'verb':'update'},'action':{'error':{'status':409}}}");
    json_t *o = fc_req(200, "GET", CM("default") "/m", NULL);
    char *body = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    hres r = hdo("PUT", CM("default") "/m", body, NULL, NULL, NULL);
    cr_assert_eq(r.status, 409);
    free(r.body);
    free(body);
    cr_assert_eq(status_as(NULL, "GET", CM("default")), 200);
    cr_assert_eq(status_as(NULL, "DELETE", CM("default") "/m"), 200);
}

Test(faults, match_by_subresource)
{
    json_decref(fc_req(201, "POST", "/api/v1/namespaces/default/pods",
                       "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
                       "'spec':{'containers':[{'name':'c','image':'i'}]}}"));
    uint64_t sub =
        post_rule("{'match':{'subresource':'status'},'action':{'error':{'status':503}}}");
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/pods/p/status"), 503);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/pods/p"), 200);
    cr_assert_eq(fakeapi_fault_remove(srv, sub), 0);
    /* "" is the main resource only. */
    post_rule("{'match':{'subresource':'','resource':'pods'},'action':{'error':{'status':503}}}");
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/pods/p/status"), 200);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/pods/p"), 503);
}

Test(faults, match_by_group_and_resource)
{
    post_rule("{'match':{'group':'apps','resource':'deployments'},"
              "'action':{'error':{'status':500}}}");
    cr_assert_eq(status_as(NULL, "GET", "/apis/apps/v1/namespaces/default/deployments"), 500);
    cr_assert_eq(status_as(NULL, "GET", "/apis/apps/v1/namespaces/default/replicasets"), 200);
    cr_assert_eq(status_as(NULL, "GET", CM("default")), 200);
    post_rule("{'match':{'group':'','resource':'secrets'},'action':{'error':{'status':500}}}");
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/secrets"), 500);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/pods"), 200);
}

Test(faults, match_by_namespace_and_name)
{
    fc_mk_ns("ns1");
    fc_mk_ns("ns2");
    post_rule("{'match':{'namespace':'ns1','name':'n'},'action':{'error':{'status':500}}}");
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/ns1/configmaps/n"), 500);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/ns2/configmaps/n"), 404);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/ns1/configmaps/other"), 404);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/ns1/configmaps"), 200);
}

Test(faults, match_by_user_agent_substring)
{
    post_rule("{'match':{'client':'kubectl'},'action':{'error':{'status':503}}}");
    cr_assert_eq(status_as("kubectl/v1.32.0 (linux/amd64) kubernetes/abc", "GET", CM("default")),
                 503);
    cr_assert_eq(status_as("my-operator/0.1", "GET", CM("default")), 200);
}

/* agent: one client and its sub-clients, never a longer name. */
Test(faults, match_by_agent_identity)
{
    post_rule("{'match':{'agent':'scenario/web-1'},'action':{'error':{'status':503}}}");
    cr_assert_eq(status_as("scenario/web-1", "GET", CM("default")), 503);
    cr_assert_eq(status_as("scenario/web-1/podset", "GET", CM("default")), 503);
    cr_assert_eq(status_as("scenario/web-1 (linux/amd64)", "GET", CM("default")), 503);
    cr_assert_eq(status_as("scenario/web-10", "GET", CM("default")), 200);
    cr_assert_eq(status_as("scenario/web-11/podset", "GET", CM("default")), 200);
    cr_assert_eq(status_as("scenario/web-1.r2", "GET", CM("default")), 200);
    cr_assert_eq(status_as("x-scenario/web-1", "GET", CM("default")), 200);
}

Test(faults, match_by_bearer_token)
{
    post_rule("{'match':{'client':'tok-controller-7'},'action':{'error':{'status':403}}}");
    hres r = hdo("GET", CM("default"), NULL, "same-agent/1", "tok-controller-7", NULL);
    cr_assert_eq(r.status, 403);
    free(r.body);
    r = hdo("GET", CM("default"), NULL, "same-agent/1", "tok-someone-else", NULL);
    cr_assert_eq(r.status, 200);
    free(r.body);
    r = hdo("GET", CM("default"), NULL, "same-agent/1", NULL, NULL);
    cr_assert_eq(r.status, 200);
    free(r.body);
    /* The token matches exactly, not as a substring. */
    r = hdo("GET", CM("default"), NULL, "same-agent/1", "tok-controller-70", NULL);
    cr_assert_eq(r.status, 200);
    free(r.body);
}

/* ---- when rules fire ------------------------------------------------------- */

static void expect_pattern(uint64_t id, const char *path, const char *pattern)
{
    for (const char *p = pattern; *p; p++) {
        long st = status_as(NULL, "GET", path);
        cr_assert_eq(st, *p == 'x' ? 500 : 200, "request %d of %s: got %ld", (int)(p - pattern) + 1,
                     pattern, st);
    }
    unsigned long m = 0, f = 0;
    cr_assert_eq(fakeapi_fault_hits(srv, id, &m, &f), 0);
    cr_assert_eq(m, strlen(pattern));
    size_t want = 0;
    for (const char *p = pattern; *p; p++)
        want += *p == 'x';
    cr_assert_eq(f, want);
    cr_assert_eq(fakeapi_fault_remove(srv, id), 0);
}

Test(faults, when_nth_first_after)
{
    uint64_t id = 0;
    cr_assert_eq(
        fakeapi_fault_add(
            srv,
            &(fakeapi_fault){.resource = "configmaps", .nth = 3, .action = FAKEAPI_FAULT_ERROR},
            &id, NULL),
        0);
    expect_pattern(id, CM("default"), "..x...");
    cr_assert_eq(
        fakeapi_fault_add(
            srv,
            &(fakeapi_fault){.resource = "configmaps", .first = 2, .action = FAKEAPI_FAULT_ERROR},
            &id, NULL),
        0);
    expect_pattern(id, CM("default"), "xx...");
    cr_assert_eq(
        fakeapi_fault_add(
            srv,
            &(fakeapi_fault){.resource = "configmaps", .after = 2, .action = FAKEAPI_FAULT_ERROR},
            &id, NULL),
        0);
    expect_pattern(id, CM("default"), "..xxx");
    cr_assert_eq(fakeapi_fault_add(
                     srv, &(fakeapi_fault){.resource = "configmaps", .action = FAKEAPI_FAULT_ERROR},
                     &id, NULL),
                 0);
    expect_pattern(id, CM("default"), "xxx");
    /* Requests that do not match are not counted. */
    cr_assert_eq(
        fakeapi_fault_add(
            srv,
            &(fakeapi_fault){.resource = "configmaps", .nth = 2, .action = FAKEAPI_FAULT_ERROR},
            &id, NULL),
        0);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/secrets"), 200);
    expect_pattern(id, CM("default"), ".x.");
}

Test(faults, when_probability)
{
    uint64_t id = post_rule("{'match':{'resource':'configmaps'},'when':{'probability':0.5},"
                            "'action':{'error':{'status':500}}}");
    int errors = 0;
    for (int i = 0; i < 200; i++)
        errors += status_as(NULL, "GET", CM("default")) == 500;
    unsigned long m = 0, f = 0;
    cr_assert_eq(fakeapi_fault_hits(srv, id, &m, &f), 0);
    cr_assert_eq(m, 200);
    cr_assert_eq(f, (unsigned long)errors);
    cr_assert(errors > 60 && errors < 140, "p=0.5 fired %d times in 200", errors);
    cr_assert_eq(fakeapi_fault_remove(srv, id), 0);
    id = post_rule("{'match':{'resource':'configmaps'},'when':{'probability':1},"
                   "'action':{'error':{'status':500}}}");
    for (int i = 0; i < 10; i++)
        cr_assert_eq(status_as(NULL, "GET", CM("default")), 500);
}

/* ---- hit counts, listing, removal ------------------------------------------ */

Test(faults, hits_through_the_c_api_and_the_endpoint)
{
    uint64_t id = 0;
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_fault_add(srv,
                                   &(fakeapi_fault){.verb = "get",
                                                    .name = "h",
                                                    .after = 1,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 503,
                                                    .message = "try later"},
                                   &id, &err),
                 0, "%s", err.message);
    for (int i = 0; i < 4; i++)
        status_as(NULL, "GET", CM("default") "/h");
    status_as(NULL, "GET", CM("default") "/other");
    unsigned long m = 0, f = 0;
    cr_assert_eq(fakeapi_fault_hits(srv, id, &m, &f), 0);
    cr_assert_eq(m, 4);
    cr_assert_eq(f, 3);
    cr_assert_eq(fakeapi_fault_hits(srv, id + 100, &m, &f), FAKEAPI_ERR_NOT_FOUND);
    json_t *list = fc_req(200, "GET", "/fakeapi/v1/faults", NULL);
    cr_assert_eq(json_array_size(list), 1);
    json_t *r = json_array_get(list, 0);
    cr_assert_eq(json_integer_value(json_object_get(r, "id")), (json_int_t)id);
    cr_assert_eq(json_integer_value(json_object_get(r, "matched")), 4);
    cr_assert_eq(json_integer_value(json_object_get(r, "fired")), 3);
    /* The listing is the rule in its JSON form. */
    cr_assert_str_eq(jstr(r, "match.verb"), "get");
    cr_assert_str_eq(jstr(r, "match.name"), "h");
    cr_assert_eq(json_integer_value(jget(r, "when.after")), 1);
    cr_assert_eq(json_integer_value(jget(r, "action.error.status")), 503);
    cr_assert_str_eq(jstr(r, "action.error.message"), "try later");
    /* ... which can be posted back as it is. */
    char *again = json_dumps(r, JSON_COMPACT);
    json_decref(list);
    list = fc_req(201, "POST", "/fakeapi/v1/faults", again);
    free(again);
    cr_assert_eq(json_array_size(list), 2);
    cr_assert_eq(json_integer_value(jget(list, "1.matched")), 0);
    cr_assert_eq(json_integer_value(jget(list, "1.action.error.status")), 503);
    json_decref(list);
}

Test(faults, yaml_rules_through_the_endpoint)
{
    hres r = hdo("POST", "/fakeapi/v1/faults",
                 "- match: {verb: get, name: y1}\n"
                 "  action:\n"
                 "    error: {status: 503, message: from yaml}\n"
                 "- match: {verb: get, name: y2}\n"
                 "  when: {nth: 1}\n"
                 "  action: {delay: 10ms}\n",
                 NULL, NULL, "application/yaml");
    cr_assert_eq(r.status, 201, "%s", r.body);
    json_t *list = json_loads(r.body, 0, NULL);
    free(r.body);
    cr_assert_eq(json_array_size(list), 2);
    cr_assert_eq(json_integer_value(jget(list, "1.action.delay")), 10);
    json_decref(list);
    json_t *st = fc_req(503, "GET", CM("default") "/y1", NULL);
    cr_assert_str_eq(jstr(st, "message"), "from yaml");
    json_decref(st);
}

Test(faults, remove_and_clear)
{
    uint64_t a = 0, b = 0;
    cr_assert_eq(fakeapi_fault_add(
                     srv, &(fakeapi_fault){.name = "a", .action = FAKEAPI_FAULT_ERROR}, &a, NULL),
                 0);
    cr_assert_eq(fakeapi_fault_add(
                     srv, &(fakeapi_fault){.name = "b", .action = FAKEAPI_FAULT_ERROR}, &b, NULL),
                 0);
    cr_assert_neq(a, b);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/a"), 500);
    cr_assert_eq(fakeapi_fault_remove(srv, a), 0);
    cr_assert_eq(fakeapi_fault_remove(srv, a), FAKEAPI_ERR_NOT_FOUND);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/a"), 404);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/b"), 500);
    fakeapi_fault_clear(srv);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/b"), 404);
    json_t *list = fc_req(200, "GET", "/fakeapi/v1/faults", NULL);
    cr_assert_eq(json_array_size(list), 0);
    json_decref(list);
    /* The same through the endpoint: DELETE one, then all. */
    uint64_t c = post_rule("{'match':{'name':'c'},'action':{'error':{'status':500}}}");
    post_rule("{'match':{'name':'d'},'action':{'error':{'status':500}}}");
    cr_assert_neq(c, b, "ids are never reused");
    list = fc_req(200, "DELETE", S("/fakeapi/v1/faults/%llu", (unsigned long long)c), NULL);
    cr_assert_eq(json_array_size(list), 1);
    json_decref(list);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/c"), 404);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/d"), 500);
    json_decref(fc_req(404, "DELETE", S("/fakeapi/v1/faults/%llu", (unsigned long long)c), NULL));
    json_decref(fc_req(404, "DELETE", "/fakeapi/v1/faults/nonsense", NULL));
    list = fc_req(200, "DELETE", "/fakeapi/v1/faults", NULL);
    cr_assert_eq(json_array_size(list), 0);
    json_decref(list);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/d"), 404);
}

/* A rule that matches everything spares the control endpoint and /metrics:
 * the way to remove it stays open. */
Test(faults, catch_all_rules_spare_the_control_endpoint)
{
    cr_assert_eq(fakeapi_fault_add_json(srv, "{\"action\":{\"drop\":true}}", NULL), 0);
    hres r = hdo("GET", CM("default"), NULL, NULL, NULL, NULL);
    cr_assert_eq(r.rc, CURLE_GOT_NOTHING);
    free(r.body);
    r = hdo("GET", "/api", NULL, NULL, NULL, NULL);
    cr_assert_eq(r.rc, CURLE_GOT_NOTHING, "discovery can be faulted");
    free(r.body);
    json_t *list = fc_req(200, "GET", "/fakeapi/v1/faults", NULL);
    cr_assert_eq(json_array_size(list), 1);
    json_decref(list);
    char *t = metrics_text();
    free(t);
    json_decref(fc_req(200, "DELETE", "/fakeapi/v1/faults", NULL));
    cr_assert_eq(status_as(NULL, "GET", CM("default")), 200);
}

/* ---- malformed rules ------------------------------------------------------- */

Test(faults, malformed_rules_are_400_naming_the_field)
{
    static const struct {
        const char *body, *field;
    } cases[] = {
        {"{'match':{'verb':'frobnicate'},'action':{'drop':true}}", "match.verb"},
        {"{'match':{'colour':'red'},'action':{'drop':true}}", "match.colour"},
        {"{'match':{'name':7},'action':{'drop':true}}", "match.name"},
        {"{'match':[],'action':{'drop':true}}", "match"},
        {"{'when':{'probability':2},'action':{'drop':true}}", "when.probability"},
        {"{'when':{'probability':'often'},'action':{'drop':true}}", "when.probability"},
        {"{'when':{'nth':0},'action':{'drop':true}}", "when.nth"},
        {"{'when':{'first':-3},'action':{'drop':true}}", "when.first"},
        {"{'when':{'after':'x'},'action':{'drop':true}}", "when.after"},
        {"{'when':{'sometimes':true},'action':{'drop':true}}", "when.sometimes"},
        {"{'when':{'nth':1,'first':2},'action':{'drop':true}}", "when"},
        {"{'match':{'verb':'get'}}", "action"},
        {"{'action':{'explode':true}}", "action.explode"},
        {"{'action':{'drop':true,'truncate':true}}", "action"},
        {"{'action':{'drop':false}}", "action.drop"},
        {"{'action':{'error':{'status':200}}}", "action.error.status"},
        {"{'action':{'error':{'status':'teapot'}}}", "action.error.status"},
        {"{'action':{'error':{'status':429,'retryAfterSeconds':-1}}}",
         "action.error.retryAfterSeconds"},
        {"{'action':{'error':503}}", "action.error"},
        {"{'action':{'delay':'soon'}}", "action.delay"},
        {"{'action':{'delay':0}}", "action.delay"},
        {"{'action':{'delayEvents':'-2s'}}", "action.delayEvents"},
        {"{'action':{'stale':{}}}", "action.stale"},
        {"{'action':{'stale':{'lag':'two'}}}", "action.stale"},
        {"{'action':{'closeWatchAfter':0}}", "action.closeWatchAfter"},
        {"{'action':{'drop':true},'colour':'red'}", "colour"},
        {"[{'action':{'drop':true}},{'action':{'bogus':true}}]",
         "rule 1: fault rule: action.bogus"},
        {"42", "rule"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hres r = hdo("POST", "/fakeapi/v1/faults", cases[i].body, NULL, NULL, NULL);
        cr_assert_eq(r.status, 400, "%s: want 400, got %ld: %s", cases[i].body, r.status, r.body);
        json_t *st = json_loads(r.body, 0, NULL);
        cr_assert_str_eq(jstr(st, "kind"), "Status", "%s", r.body);
        cr_assert_str_eq(jstr(st, "reason"), "BadRequest");
        const char *msg = jstr(st, "message");
        cr_assert_not_null(msg);
        cr_assert(strstr(msg, cases[i].field), "%s: the message \"%s\" does not name %s",
                  cases[i].body, msg, cases[i].field);
        json_decref(st);
        free(r.body);
    }
    hres r = hdo("POST", "/fakeapi/v1/faults", "{not json: [", NULL, NULL, NULL);
    cr_assert_eq(r.status, 400, "%s", r.body);
    free(r.body);
    /* Nothing was added, not even the good half of the array. */
    json_t *list = fc_req(200, "GET", "/fakeapi/v1/faults", NULL);
    cr_assert_eq(json_array_size(list), 0);
    json_decref(list);
}

Test(faults, malformed_rules_through_the_c_api)
{
    static const struct {
        fakeapi_fault rule;
        const char *field;
    } cases[] = {
        {{.action = 0}, "action"},
        {{.action = 99}, "action"},
        {{.verb = "frobnicate", .action = FAKEAPI_FAULT_DROP}, "match.verb"},
        {{.probability = 1.5, .action = FAKEAPI_FAULT_DROP}, "when.probability"},
        {{.probability = -0.1, .action = FAKEAPI_FAULT_DROP}, "when.probability"},
        {{.nth = 1, .after = 1, .action = FAKEAPI_FAULT_DROP}, "when"},
        {{.action = FAKEAPI_FAULT_ERROR, .status = 302}, "action.error.status"},
        {{.action = FAKEAPI_FAULT_DELAY}, "action.delay"},
        {{.action = FAKEAPI_FAULT_WATCH_CLOSE}, "action.closeWatchAfter"},
        {{.action = FAKEAPI_FAULT_STALE}, "action.stale"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fakeapi_error err = {0};
        uint64_t id = 777;
        cr_assert_eq(fakeapi_fault_add(srv, &cases[i].rule, &id, &err), FAKEAPI_ERR_INVALID,
                     "case %zu", i);
        cr_assert_eq(id, 777, "case %zu: *id untouched on error", i);
        cr_assert_eq(err.code, FAKEAPI_ERR_INVALID);
        cr_assert_eq(err.http_status, 400);
        cr_assert(strstr(err.message, cases[i].field), "case %zu: \"%s\" does not name %s", i,
                  err.message, cases[i].field);
    }
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_fault_add_json(srv, "{\"action\":{\"delay\":\"soon\"}}", &err),
                 FAKEAPI_ERR_INVALID);
    cr_assert(strstr(err.message, "action.delay"), "%s", err.message);
    cr_assert_eq(fakeapi_fault_add_json(srv, "{oops", &err), FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_fault_add_json(srv, "[{\"action\":{\"drop\":true}}]", &err), 0);
    json_t *list = fc_req(200, "GET", "/fakeapi/v1/faults", NULL);
    cr_assert_eq(json_array_size(list), 1, "only the good rule");
    json_decref(list);
}

/* ---- metrics --------------------------------------------------------------- */

Test(faults, metrics_count_requests_watches_and_faults)
{
    fc_mk_cm("default", "m1", "1");
    uint64_t id = post_rule("{'match':{'name':'boom'},'action':{'error':{'status':503}}}");
    for (int i = 0; i < 3; i++)
        status_as(NULL, "GET", CM("default") "/m1");
    status_as(NULL, "GET", CM("default") "/boom");
    status_as(NULL, "GET", CM("default") "/boom");
    status_as(NULL, "GET", CM("default") "/missing");
    status_as(NULL, "GET", "/apis/apps/v1/namespaces/default/deployments");
    wstream *w1 = ws_open(CM("default") "?watch=true", NULL);
    wstream *w2 = ws_open(CM("default") "?watch=true", NULL);
    char *t = metrics_text();
    cr_assert(strstr(t, "# TYPE fakeapi_requests_total counter"), "%s", t);
    cr_assert_eq(metric(t, "fakeapi_requests_total{verb=\"get\",group=\"\",resource=\"configmaps\","
                           "code=\"200\"}"),
                 3, "%s", t);
    cr_assert_eq(metric(t, "fakeapi_requests_total{verb=\"get\",group=\"\",resource=\"configmaps\","
                           "code=\"503\"}"),
                 2, "%s", t);
    cr_assert_eq(metric(t, "fakeapi_requests_total{verb=\"get\",group=\"\",resource=\"configmaps\","
                           "code=\"404\"}"),
                 1, "%s", t);
    cr_assert_eq(metric(t, "fakeapi_requests_total{verb=\"create\",group=\"\",resource="
                           "\"configmaps\",code=\"201\"}"),
                 1, "%s", t);
    cr_assert_eq(metric(t, "fakeapi_requests_total{verb=\"list\",group=\"apps\",resource="
                           "\"deployments\",code=\"200\"}"),
                 1, "%s", t);
    cr_assert(strstr(t, "# TYPE fakeapi_open_watches gauge"), "%s", t);
    cr_assert_eq(metric(t, "fakeapi_open_watches"), 2, "%s", t);
    cr_assert_eq(metric(t, "fakeapi_slow_watchers_closed_total"), 0, "%s", t);
    cr_assert(strstr(t, "# TYPE fakeapi_faults_fired_total counter"), "%s", t);
    cr_assert_eq(metric(t, S("fakeapi_faults_fired_total{rule=\"%llu\"}", (unsigned long long)id)),
                 2, "%s", t);
    free(t);
    ws_close(w1);
    ws_close(w2);
    for (int i = 0; i < 100; i++) {
        t = metrics_text();
        double open = metric(t, "fakeapi_open_watches");
        free(t);
        if (open == 0)
            break;
        sleep_ms(20);
    }
    t = metrics_text();
    cr_assert_eq(metric(t, "fakeapi_open_watches"), 0, "closed watches leave the gauge: %s", t);
    /* Watches are counted as watch requests. */
    cr_assert_eq(metric(t, "fakeapi_requests_total{verb=\"watch\",group=\"\",resource="
                           "\"configmaps\",code=\"200\"}"),
                 2, "%s", t);
    free(t);
}

/* ---- the trace ------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return b;
}

/*
 * One run of a fixed plan: a server with seed on a virtual clock, two rules
 * firing with probability 0.5, the same requests one after another from this
 * thread. The client-visible statuses go to pattern (one letter a request).
 */
static void run_plan(uint64_t seed, const char *trace, char *pattern, size_t cap)
{
    start_vclock(seed);
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_trace_open(srv, trace, &err), 0, "%s", err.message);
    add_json("[{'match':{'verb':'create','resource':'configmaps'},'when':{'probability':0.5},"
             "'action':{'error':{'status':503,'message':'flaky create'}}},"
             "{'match':{'verb':'get'},'when':{'probability':0.5},"
             "'action':{'error':{'status':409}}},"
             "{'match':{'verb':'patch'},'when':{'nth':3},'action':{'error':{'status':500}}}]");
    size_t k = 0;
    for (int i = 0; i < 30; i++) {
        advance(SEC);
        const char *name = S("cm-%d", i);
        hres r = hdo("POST", CM("default"),
                     S("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'%s'}}", name),
                     "planner/1", NULL, NULL);
        pattern[k++] = r.status == 201 ? 'c' : r.status == 503 ? 'E' : '?';
        free(r.body);
        advance(SEC / 2);
        r = hdo("GET", S(CM("default") "/%s", name), NULL, "planner/1", NULL, NULL);
        pattern[k++] = r.status == 200 ? 'g' : r.status == 409 ? 'X' : r.status == 404 ? 'n' : '?';
        free(r.body);
        if (i % 5 == 0) {
            r = hdo("PATCH", S(CM("default") "/%s", name), "{'data':{'k':'v'}}", "planner/1", NULL,
                    "application/merge-patch+json");
            pattern[k++] = r.status == 200 ? 'p' : r.status == 500 ? 'P' : 'q';
            free(r.body);
        }
        cr_assert_lt(k, cap - 3);
    }
    pattern[k] = '\0';
    teardown();
}

Test(faults_trace, same_seed_same_trace_other_seed_other_faults)
{
    char dir[] = "/tmp/faults-trace-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char t1[256], t2[256], t3[256];
    snprintf(t1, sizeof t1, "%s/one.jsonl", dir);
    snprintf(t2, sizeof t2, "%s/two.jsonl", dir);
    snprintf(t3, sizeof t3, "%s/three.jsonl", dir);
    char p1[256], p2[256], p3[256];
    run_plan(1234, t1, p1, sizeof p1);
    run_plan(1234, t2, p2, sizeof p2);
    run_plan(98765, t3, p3, sizeof p3);
    size_t n1, n2, n3;
    char *a = slurp(t1, &n1), *b = slurp(t2, &n2), *c = slurp(t3, &n3);
    cr_assert_str_eq(p1, p2, "the same seed fired differently");
    cr_assert(strchr(p1, 'E') && strchr(p1, 'c') && strchr(p1, 'X') && strchr(p1, 'g') &&
                  strchr(p1, 'P'),
              "both outcomes of each rule: %s", p1);
    cr_assert_eq(n1, n2);
    cr_assert(!memcmp(a, b, n1), "the traces of the same seed differ:\n%s\n---\n%s", a, b);
    cr_assert_str_neq(p1, p3, "another seed fired the same faults: %s", p1);
    cr_assert(n1 != n3 || memcmp(a, c, n1), "another seed gave the same trace");

    /* Every line is JSON with the virtual time; requests, then their faults. */
    size_t requests = 0, faults = 0;
    long long last_t = 0;
    char *save = NULL;
    for (char *line = strtok_r(a, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *j = json_loads(line, 0, NULL);
        cr_assert_not_null(j, "not JSON: %s", line);
        long long t = json_integer_value(json_object_get(j, "t"));
        cr_assert_geq(t, 1700000000LL * SEC, "not the virtual clock: %s", line);
        cr_assert_lt(t, 1700000000LL * SEC + 100 * SEC, "not the virtual clock: %s", line);
        cr_assert_geq(t, last_t, "time goes back: %s", line);
        last_t = t;
        const char *kind = jstr(j, "kind");
        if (!strcmp(kind, "request")) {
            requests++;
            cr_assert_str_eq(jstr(j, "client"), "planner/1");
            cr_assert_not_null(jstr(j, "verb"));
            cr_assert_not_null(jstr(j, "path"));
            cr_assert(json_is_integer(json_object_get(j, "code")));
            cr_assert_not_null(jstr(j, "rv"));
        } else {
            cr_assert_str_eq(kind, "fault", "%s", line);
            faults++;
            cr_assert(json_integer_value(json_object_get(j, "rule")) >= 1);
            cr_assert_str_eq(jstr(j, "action"), "fired");
        }
        json_decref(j);
    }
    cr_assert_eq(requests, strlen(p1));
    size_t want_faults = 0;
    for (const char *p = p1; *p; p++)
        want_faults += *p == 'E' || *p == 'X' || *p == 'P';
    cr_assert_eq(faults, want_faults);
    free(a);
    free(b);
    free(c);
    unlink(t1);
    unlink(t2);
    unlink(t3);
    rmdir(dir);
}

/* The trace names requests and events, never Secret data or tokens. */
Test(faults, trace_has_no_secret_values_or_tokens)
{
    char path[] = "/tmp/faults-secret-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(fakeapi_trace_open(srv, path, NULL), 0);
    post_rule("{'match':{'verb':'get','name':'nope'},'action':{'error':{'status':500}}}");
    wstream *w =
        ws_open(S("/api/v1/namespaces/default/secrets?watch=true&resourceVersion=%llu", rev()),
                "watcher/1");
    hres r = hdo("POST", "/api/v1/namespaces/default/secrets",
                 "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'creds'},"
                 "'type':'Opaque','data':{'password':'aHVudGVyMi10b3BzZWNyZXQ='},"
                 "'stringData':{'token':'plain-hunter3-words'}}",
                 "writer/1", "tok-very-private-123", NULL);
    cr_assert_eq(r.status, 201, "%s", r.body);
    free(r.body);
    expect_ev(w, "ADDED", "creds");
    r = hdo("GET", "/api/v1/namespaces/default/secrets/creds", NULL, "reader/1",
            "tok-very-private-123", NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "aHVudGVyMi10b3BzZWNyZXQ="), "the client does get the data");
    free(r.body);
    status_as(NULL, "GET", "/api/v1/namespaces/default/secrets/nope");
    ws_close(w);
    cr_assert_eq(fakeapi_trace_open(srv, NULL, NULL), 0); /* stop: the file is complete */
    char *t = slurp(path, NULL);
    cr_assert_null(strstr(t, "aHVudGVy"), "Secret data in the trace:\n%s", t);
    cr_assert_null(strstr(t, "hunter2"), "Secret data in the trace:\n%s", t);
    cr_assert_null(strstr(t, "hunter3"), "Secret stringData in the trace:\n%s", t);
    cr_assert_null(strstr(t, "tok-very-private"), "a token in the trace:\n%s", t);
    /* ... but it has the requests, the fault and the event. */
    cr_assert(strstr(t, "\"kind\":\"request\""), "%s", t);
    cr_assert(strstr(t, "\"path\":\"/api/v1/namespaces/default/secrets\""), "%s", t);
    cr_assert(strstr(t, "\"client\":\"writer/1\""), "%s", t);
    cr_assert(strstr(t, "\"kind\":\"fault\""), "%s", t);
    cr_assert(strstr(t, "\"kind\":\"event\""), "%s", t);
    cr_assert(strstr(t, "\"client\":\"watcher/1\""), "%s", t);
    cr_assert(strstr(t, "\"type\":\"ADDED\""), "%s", t);
    free(t);
    unlink(path);
}

/* A withheld event is in the trace as what the fault did, to which client. */
Test(faults, trace_records_withheld_events)
{
    char path[] = "/tmp/faults-withheld-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(fakeapi_trace_open(srv, path, NULL), 0);
    uint64_t id = post_rule("{'match':{'verb':'watch','client':'blind','name':'x'},"
                            "'action':{'withhold':true}}");
    wstream *w = ws_open(S(CM("default") "?watch=true&resourceVersion=%llu", rev()), "blind/1");
    fc_mk_cm("default", "x", "1");
    fc_mk_cm("default", "y", "1");
    expect_ev(w, "ADDED", "y");
    ws_close(w);
    cr_assert_eq(fakeapi_trace_open(srv, NULL, NULL), 0);
    char *t = slurp(path, NULL);
    bool withheld = false, delivered_y = false, delivered_x = false;
    char *save = NULL;
    for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *j = json_loads(line, 0, NULL);
        cr_assert_not_null(j, "%s", line);
        const char *kind = jstr(j, "kind");
        if (!strcmp(kind, "fault") && !strcmp(jstr(j, "action"), "withheld")) {
            withheld = true;
            cr_assert_eq(json_integer_value(json_object_get(j, "rule")), (json_int_t)id);
            cr_assert_str_eq(jstr(j, "name"), "x");
            cr_assert_str_eq(jstr(j, "client"), "blind/1");
        }
        if (!strcmp(kind, "event")) {
            delivered_x |= !strcmp(jstr(j, "name"), "x");
            delivered_y |= !strcmp(jstr(j, "name"), "y");
        }
        json_decref(j);
    }
    cr_assert(withheld, "no withheld line");
    cr_assert(delivered_y && !delivered_x);
    free(t);
    unlink(path);
}
