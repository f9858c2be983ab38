/*
 * test_cond.c - scn_cond_eval over an in-memory store: every kind and
 * comparison, paths with indexes and quoted keys, selectors passed to the
 * list callback, and the messages.
 */
#include <criterion/criterion.h>
#include "scn/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *store;
static int lists; /* list calls, to see the selector went there */
static char last_selector[128];

static const char *const objects =
    "["
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web\","
    "\"namespace\":\"default\",\"resourceVersion\":\"12\"},"
    "\"spec\":{\"replicas\":3},\"status\":{\"replicas\":2,\"ratio\":0.5}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":"
    "\"default\",\"labels\":{\"app\":\"web\",\"app.kubernetes.io/name\":\"web-frontend\"}},"
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx:1.25\"},{\"name\":\"side\","
    "\"image\":\"envoy\"}]},\"status\":{\"phase\":\"Running\",\"ready\":true}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-2\",\"namespace\":"
    "\"default\",\"labels\":{\"app\":\"web\"}}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-3\",\"namespace\":"
    "\"default\",\"labels\":{\"app\":\"web\",\"tier\":\"db\"}}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-4\",\"namespace\":"
    "\"default\",\"labels\":{\"app\":\"web\"}}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"api-1\",\"namespace\":"
    "\"other\",\"labels\":{\"app\":\"web\"}}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"other\"}}"
    "]";

static const char *meta(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

static bool str_is(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static bool same_kind(const json_t *obj, const char *api_version, const char *kind)
{
    return str_is(json_string_value(json_object_get(obj, "apiVersion")), api_version) &&
           str_is(json_string_value(json_object_get(obj, "kind")), kind);
}

static int fake_get(void *ud, const char *api_version, const char *kind, const char *ns,
                    const char *name, json_t **out)
{
    size_t i;
    json_t *obj;

    (void)ud;
    json_array_foreach(store, i, obj)
    {
        const char *ons = meta(obj, "namespace");
        if (same_kind(obj, api_version, kind) && str_is(meta(obj, "name"), name) &&
            (ns ? str_is(ons, ns) : !ons)) {
            *out = json_incref(obj);
            return 0;
        }
    }
    return -1;
}

/* The equality part of label selectors: k=v, k!=v, comma-separated. */
static bool selected(const json_t *obj, const char *selector)
{
    char buf[128], *save = NULL;
    json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");

    if (!selector)
        return true;
    snprintf(buf, sizeof buf, "%s", selector);
    for (char *req = strtok_r(buf, ",", &save); req; req = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(req, '=');
        bool neg = eq > req && eq[-1] == '!';
        cr_assert_not_null(eq, "fake store: unsupported selector %s", selector);
        if (neg)
            eq[-1] = '\0';
        *eq = '\0';
        if (str_is(json_string_value(json_object_get(labels, req)), eq + 1) == neg)
            return false;
    }
    return true;
}

static int fake_list(void *ud, const char *api_version, const char *kind, const char *ns,
                     const char *selector, json_t **out)
{
    json_t *items = json_array(), *obj;
    size_t i;

    (void)ud;
    lists++;
    snprintf(last_selector, sizeof last_selector, "%s", selector ? selector : "(null)");
    json_array_foreach(store, i, obj)
    {
        if (same_kind(obj, api_version, kind) && (!ns || str_is(meta(obj, "namespace"), ns)) &&
            selected(obj, selector))
            json_array_append(items, obj);
    }
    *out = items;
    return 0;
}

static int failing_list(void *ud, const char *api_version, const char *kind, const char *ns,
                        const char *selector, json_t **out)
{
    (void)ud, (void)api_version, (void)kind, (void)ns, (void)selector, (void)out;
    return -1;
}

static const scn_lookup lookup = {.get = fake_get, .list = fake_list};

static void setup(void)
{
    store = json_loads(objects, 0, NULL);
    cr_assert_not_null(store);
    lists = 0;
}

static void teardown(void)
{
    json_decref(store);
}

TestSuite(cond, .init = setup, .fini = teardown);

/* Parses one condition (YAML) as a scenario's invariant and evaluates it. */
static bool eval_with(const scn_lookup *lk, const char *cond, char *msg, size_t len)
{
    char text[2048];
    scn_scenario *s = NULL;
    scn_error err = {0};
    bool ok;

    snprintf(text, sizeof text, "name: t\ninvariants:\n  - %s\n", cond);
    cr_assert_eq(scn_scenario_parse("t.yaml", text, strlen(text), &s, &err), 0,
                 "%s: line %d: %s: %s", cond, err.line, err.field, err.message);
    ok = scn_cond_eval(s->invariants[0], lk, msg, len);
    scn_scenario_free(s);
    return ok;
}

static void holds(const char *cond, const char *want_msg)
{
    char msg[512];

    cr_assert(eval_with(&lookup, cond, msg, sizeof msg), "should hold: %s\n  %s", cond, msg);
    if (want_msg)
        cr_assert_str_eq(msg, want_msg);
}

static void fails(const char *cond, const char *want_msg)
{
    char msg[512];

    cr_assert_not(eval_with(&lookup, cond, msg, sizeof msg), "should fail: %s\n  %s", cond, msg);
    cr_assert_str_eq(msg, want_msg);
}

#define RS "apiVersion: apps/v1, kind: ReplicaSet, namespace: default, name: web"
#define POD "apiVersion: v1, kind: Pod, namespace: default, name: web-1"

Test(cond, exists_and_absent)
{
    holds("{exists: {" RS "}}",
          "expected ReplicaSet default/web to exist, found it (resourceVersion 12)");
    fails("{exists: {apiVersion: v1, kind: Pod, namespace: default, name: nope}}",
          "expected Pod default/nope to exist, found none");
    holds("{absent: {apiVersion: v1, kind: Pod, namespace: default, name: nope}}", NULL);
    fails("{absent: {" POD "}}", "expected Pod default/web-1 to be absent, found it");
    holds("{exists: {apiVersion: v1, kind: Namespace, name: other}}", NULL);
    fails("{exists: {apiVersion: v1, kind: Namespace, name: gone}}",
          "expected Namespace gone to exist, found none");
}

Test(cond, field_equals)
{
    holds("{field: {" RS ", path: .spec.replicas, equals: 3}}",
          "expected .spec.replicas of ReplicaSet default/web to equal 3, found 3");
    fails("{field: {" RS ", path: .status.replicas, equals: 3}}",
          "expected .status.replicas of ReplicaSet default/web to equal 3, found 2");
    holds("{field: {" RS ", path: .spec.replicas, equals: 3.0}}", NULL); /* numerically */
    holds("{field: {" RS ", path: .status.ratio, equals: 0.5}}", NULL);
    holds("{field: {" POD ", path: .status.phase, equals: Running}}", NULL);
    fails("{field: {" POD ", path: .status.phase, equals: Pending}}",
          "expected .status.phase of Pod default/web-1 to equal \"Pending\", found \"Running\"");
    holds("{field: {" POD ", path: .status.ready, equals: true}}", NULL);
    fails("{field: {" POD ", path: .status.phase, equals: 1}}",
          "expected .status.phase of Pod default/web-1 to equal 1, found \"Running\"");
    holds("{field: {" POD ", path: '.spec.containers[0]', equals: {name: c, image: 'nginx:1.25'}}}",
          NULL);
    fails("{field: {" POD ", path: .status.missing, equals: 1}}",
          "expected .status.missing of Pod default/web-1 to equal 1, found no such field");
    fails("{field: {apiVersion: v1, kind: Pod, namespace: default, name: nope, path: .a, "
          "equals: 1}}",
          "expected .a of Pod default/nope to equal 1, found no Pod default/nope");
}

Test(cond, field_paths)
{
    holds("{field: {" POD ", path: '.spec.containers[1].image', equals: envoy}}", NULL);
    fails("{field: {" POD ", path: '.spec.containers[2].image', equals: envoy}}",
          "expected .spec.containers[2].image of Pod default/web-1 to equal \"envoy\", found no "
          "such field");
    holds("{field: {" POD ", path: \".metadata.labels['app.kubernetes.io/name']\", "
          "equals: web-frontend}}",
          NULL);
    holds("{field: {" POD ", path: '.metadata.labels[\"app\"]', equals: web}}", NULL);
    holds("{field: {" POD ", path: '.spec[\"containers\"][0].name', equals: c}}", NULL);
    /* an index into a mapping, a key into a list: no such field */
    fails("{field: {" POD ", path: '.metadata[0]', exists: true}}",
          "expected .metadata[0] of Pod default/web-1 to exist, found no such field");
    fails("{field: {" POD ", path: .spec.containers.image, exists: true}}",
          "expected .spec.containers.image of Pod default/web-1 to exist, found no such field");
}

Test(cond, field_at_least_at_most)
{
    holds("{field: {" RS ", path: .status.replicas, atLeast: 2}}",
          "expected .status.replicas of ReplicaSet default/web to be at least 2, found 2");
    fails("{field: {" RS ", path: .status.replicas, atLeast: 3}}",
          "expected .status.replicas of ReplicaSet default/web to be at least 3, found 2");
    holds("{field: {" RS ", path: .status.replicas, atLeast: 1.5}}", NULL);
    holds("{field: {" RS ", path: .status.replicas, atMost: 2}}", NULL);
    fails("{field: {" RS ", path: .status.replicas, atMost: 1}}",
          "expected .status.replicas of ReplicaSet default/web to be at most 1, found 2");
    holds("{field: {" RS ", path: .status.ratio, atMost: 1}}", NULL);
    fails("{field: {" POD ", path: .status.phase, atLeast: 1}}",
          "expected .status.phase of Pod default/web-1 to be at least 1, found \"Running\" (not "
          "a number)");
}

Test(cond, field_matches_and_exists)
{
    holds("{field: {" POD ", path: '.spec.containers[0].image', matches: '^nginx:1\\.[0-9]+$'}}",
          "expected .spec.containers[0].image of Pod default/web-1 to match "
          "\"^nginx:1\\\\.[0-9]+$\", found \"nginx:1.25\"");
    fails("{field: {" POD ", path: '.spec.containers[0].image', matches: '^envoy'}}",
          "expected .spec.containers[0].image of Pod default/web-1 to match \"^envoy\", found "
          "\"nginx:1.25\"");
    holds("{field: {" RS ", path: .spec.replicas, matches: '^[0-9]+$'}}", NULL); /* as text */
    holds("{field: {" POD ", path: .status.phase, exists: true}}",
          "expected .status.phase of Pod default/web-1 to exist, found \"Running\"");
    fails("{field: {" POD ", path: .status.phase, exists: false}}",
          "expected .status.phase of Pod default/web-1 to be absent, found \"Running\"");
    holds("{field: {" POD ", path: .status.gone, exists: false}}", NULL);
}

Test(cond, field_compared_with_another_field)
{
    fails("{field: {" RS ", path: .status.replicas, equalsField: {" RS ", path: .spec.replicas}}}",
          "expected .status.replicas of ReplicaSet default/web to equal .spec.replicas of "
          "ReplicaSet default/web (3), found 2");
    holds("{field: {" RS ", path: .status.replicas, atMostField: {" RS ", path: .spec.replicas}}}",
          NULL);
    fails("{field: {" RS ", path: .status.replicas, atLeastField: {apiVersion: apps/v1, kind: "
          "ReplicaSet, namespace: default, name: gone, path: .spec.replicas}}}",
          "expected .status.replicas of ReplicaSet default/web to be at least .spec.replicas of "
          "ReplicaSet default/gone, found no ReplicaSet default/gone");
    fails("{field: {" RS ", path: .status.replicas, equalsField: {" RS ", path: .spec.nope}}}",
          "expected .status.replicas of ReplicaSet default/web to equal .spec.nope of "
          "ReplicaSet default/web, found no such field");
}

Test(cond, count_with_selector)
{
    fails("{count: {apiVersion: v1, kind: Pod, namespace: default, selector: app=web, atMost: 3}}",
          "expected count of Pod in default with app=web to be at most 3, found 4");
    cr_assert_str_eq(last_selector, "app=web");
    holds("{count: {apiVersion: v1, kind: Pod, namespace: default, selector: app=web, equals: 4}}",
          "expected count of Pod in default with app=web to be 4, found 4");
    holds("{count: {apiVersion: v1, kind: Pod, selector: app=web, equals: 5}}",
          "expected count of Pod in all namespaces with app=web to be 5, found 5");
    holds("{count: {apiVersion: v1, kind: Pod, namespace: default, selector: {app: web, tier: db},"
          " equals: 1}}",
          "expected count of Pod in default with app=web,tier=db to be 1, found 1");
    cr_assert_str_eq(last_selector, "app=web,tier=db");
    holds("{count: {apiVersion: v1, kind: Pod, namespace: default, selector: 'app=web,tier!=db',"
          " equals: 3}}",
          NULL);
    holds("{count: {apiVersion: v1, kind: Pod, namespace: default, atLeast: 4}}",
          "expected count of Pod in default to be at least 4, found 4");
    cr_assert_str_eq(last_selector, "(null)");
    fails("{count: {apiVersion: v1, kind: Pod, namespace: nowhere, atLeast: 1}}",
          "expected count of Pod in nowhere to be at least 1, found 0");
    /* never more pods than the ReplicaSet wants */
    fails("{count: {apiVersion: v1, kind: Pod, namespace: default, selector: app=web, "
          "atMostField: {" RS ", path: .spec.replicas}}}",
          "expected count of Pod in default with app=web to be at most .spec.replicas of "
          "ReplicaSet default/web (3), found 4");
    cr_assert_gt(lists, 0);
}

Test(cond, all)
{
    holds("{all: [{exists: {" RS "}}, {field: {" RS ", path: .spec.replicas, equals: 3}}]}",
          "all 2 conditions hold");
    fails("{all: [{exists: {" RS "}}, {field: {" RS ", path: .spec.replicas, equals: 4}}, "
          "{exists: {apiVersion: v1, kind: Pod, namespace: default, name: nope}}]}",
          "expected .spec.replicas of ReplicaSet default/web to equal 4, found 3");
}

Test(cond, any_and_not)
{
    holds("{any: [{field: {" RS ", path: .spec.replicas, equals: 4}}, {exists: {" RS "}}]}",
          "expected ReplicaSet default/web to exist, found it (resourceVersion 12)");
    fails("{any: [{field: {" RS ", path: .spec.replicas, equals: 4}}, {field: {" RS
          ", path: .status.replicas, equals: 3}}]}",
          "none of 2 conditions holds (the last: expected .status.replicas of ReplicaSet "
          "default/web to equal 3, found 2)");
    holds("{not: {field: {" RS ", path: .spec.replicas, equals: 4}}}",
          "as expected, expected .spec.replicas of ReplicaSet default/web to equal 4, found 3");
    fails("{not: {exists: {" RS "}}}", "expected this not to hold: expected ReplicaSet "
                                       "default/web to exist, found it (resourceVersion 12)");
    /* "if the ReplicaSet wants 3, it has 3": an implication, broken here */
    fails("{any: [{not: {field: {" RS ", path: .spec.replicas, equals: 3}}}, {field: {" RS
          ", path: .status.replicas, equalsField: {" RS ", path: .spec.replicas}}}]}",
          "none of 2 conditions holds (the last: expected .status.replicas of ReplicaSet "
          "default/web to equal .spec.replicas of ReplicaSet default/web (3), found 2)");
}

Test(cond, failures_of_the_lookup_and_small_buffers)
{
    scn_lookup broken = {.get = fake_get, .list = failing_list};
    char msg[512], tiny[16];

    cr_assert_not(
        eval_with(&broken, "{count: {apiVersion: v1, kind: Pod, equals: 0}}", msg, sizeof msg));
    cr_assert_str_eq(msg, "expected count of Pod in all namespaces to be 0, but the list failed");
    /* the message is cut, still terminated, and the answer is the same */
    cr_assert_not(eval_with(&lookup,
                            "{count: {apiVersion: v1, kind: Pod, namespace: default, "
                            "atMost: 3}}",
                            tiny, sizeof tiny));
    cr_assert_str_eq(tiny, "expected count ");
    cr_assert(eval_with(&lookup, "{exists: {" RS "}}", NULL, 0));
    cr_assert_not(scn_cond_eval(NULL, &lookup, msg, sizeof msg));
}

#define SECRET "apiVersion: v1, kind: Secret, namespace: default, name: creds"

/* Fails, and the message shows none of the secret values (nor expected ones). */
static void fails_unrevealed(const char *cond, const char *want_msg)
{
    char msg[512];
    const char *secrets[] = {"aHVudGVyMg", "s3cr3t", "d3Jvbmc", "guess"};

    cr_assert_not(eval_with(&lookup, cond, msg, sizeof msg), "should fail: %s\n  %s", cond, msg);
    for (size_t i = 0; i < sizeof secrets / sizeof secrets[0]; i++)
        cr_assert_null(strstr(msg, secrets[i]), "%s shows %s", msg, secrets[i]);
    if (want_msg)
        cr_assert_str_eq(msg, want_msg);
}

Test(cond, secret_values_are_redacted)
{
    json_array_append_new(store, json_loads("{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
                                            "\"metadata\":{\"name\":\"creds\",\"namespace\":"
                                            "\"default\"},\"data\":{\"password\":\"aHVudGVyMg==\"},"
                                            "\"stringData\":{\"token\":\"s3cr3t\"},"
                                            "\"type\":\"Opaque\"}",
                                            0, NULL));
    fails_unrevealed("{field: {" SECRET ", path: .data.password, equals: d3Jvbmc=}}",
                     "expected .data.password of Secret default/creds to equal (redacted), found "
                     "(redacted)");
    fails_unrevealed("{field: {" SECRET ", path: '.stringData[\"token\"]', matches: '^guess'}}",
                     "expected .stringData[\"token\"] of Secret default/creds to match "
                     "(redacted), found (redacted)");
    /* A whole map keeps its keys. */
    fails_unrevealed("{field: {" SECRET ", path: .data, equals: {password: guess}}}",
                     "expected .data of Secret default/creds to equal {\"password\":"
                     "\"(redacted)\"}, found {\"password\":\"(redacted)\"}");
    fails_unrevealed("{field: {" SECRET ", path: ., equals: 1}}", NULL);
    /* Compared with a Secret's value from elsewhere. */
    fails_unrevealed("{field: {" POD ", path: .status.phase, equalsField: {" SECRET
                     ", path: .data.password}}}",
                     "expected .status.phase of Pod default/web-1 to equal .data.password of "
                     "Secret default/creds ((redacted)), found \"Running\"");
    /* What is not secret is shown: other fields, and data of other kinds. */
    fails("{field: {" SECRET ", path: .type, equals: x}}",
          "expected .type of Secret default/creds to equal \"x\", found \"Opaque\"");
    fails("{field: {" SECRET ", path: .metadata.name, equals: x}}",
          "expected .metadata.name of Secret default/creds to equal \"x\", found \"creds\"");
}

static int counts;

/* A count as the runner's: the number of objects the list would give. */
static int fake_count(void *ud, const char *api_version, const char *kind, const char *ns,
                      const char *selector, size_t *out)
{
    json_t *items = NULL;
    counts++;
    cr_assert_eq(fake_list(ud, api_version, kind, ns, selector, &items), 0);
    *out = json_array_size(items);
    json_decref(items);
    return 0;
}

static int failing_count(void *ud, const char *api_version, const char *kind, const char *ns,
                         const char *selector, size_t *out)
{
    (void)ud, (void)api_version, (void)kind, (void)ns, (void)selector, (void)out;
    return -1;
}

/* A lookup with a count: count conditions use it, not the list, and say the same. */
Test(cond, count_uses_the_lookups_count)
{
    scn_lookup with_count = {.get = fake_get, .list = failing_list, .count = fake_count};
    char msg[512];
    counts = 0;
    cr_assert_not(eval_with(&with_count,
                            "{count: {apiVersion: v1, kind: Pod, namespace: default, "
                            "selector: app=web, atMost: 3}}",
                            msg, sizeof msg));
    cr_assert_str_eq(msg, "expected count of Pod in default with app=web to be at most 3, found 4");
    cr_assert(eval_with(&with_count,
                        "{count: {apiVersion: v1, kind: Pod, selector: app=web, equals: 5}}", msg,
                        sizeof msg));
    cr_assert_str_eq(msg, "expected count of Pod in all namespaces with app=web to be 5, found 5");
    cr_assert_eq(counts, 2);
    scn_lookup broken = {.get = fake_get, .list = fake_list, .count = failing_count};
    cr_assert_not(
        eval_with(&broken, "{count: {apiVersion: v1, kind: Pod, atLeast: 0}}", msg, sizeof msg));
    cr_assert_str_eq(msg, "expected count of Pod in all namespaces to be at least 0, but the list "
                          "failed");
}
