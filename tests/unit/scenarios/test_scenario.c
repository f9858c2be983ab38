/*
 * test_scenario.c - scenario files: every step and condition parses into
 * scn_scenario; every error names the file, the line and the field.
 */
#include <criterion/criterion.h>
#include "scn/scenario.h"
#include "scn/shrink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static void write_file(const char *rel, const char *text)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, rel);
    f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    char path[128];

    snprintf(dir, sizeof dir, "/tmp/scn-test-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/fixtures", dir);
    cr_assert_eq(mkdir(path, 0755), 0);
    write_file("fixtures/rs.yaml", "apiVersion: apps/v1\n"
                                   "kind: ReplicaSet\n"
                                   "metadata: {name: web, namespace: default}\n"
                                   "spec: {replicas: 3}\n"
                                   "---\n"
                                   "apiVersion: v1\n"
                                   "kind: List\n"
                                   "items:\n"
                                   "- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
                                   "- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n");
    write_file("fixtures/bad.yaml", "apiVersion: v1\nkind: [\n");
    write_file("fixtures/nokind.yaml", "apiVersion: v1\nmetadata: {name: x}\n");
}

static void teardown(void)
{
    char cmd[128];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(scenario, .init = setup, .fini = teardown);

/* Parses text as DIR/test.yaml. */
static scn_scenario *parse_ok(const char *text)
{
    char file[128];
    scn_error err = {0};
    scn_scenario *s = NULL;
    char msg[1024];

    snprintf(file, sizeof file, "%s/test.yaml", dir);
    int rc = scn_scenario_parse(file, text, strlen(text), &s, &err);
    scn_error_format(&err, msg, sizeof msg);
    cr_assert_eq(rc, 0, "parse failed: %s", msg);
    cr_assert_not_null(s);
    return s;
}

/* Asserts the error's line, field and message (a prefix of it). */
static void parse_err(const char *text, int line, const char *field, const char *message)
{
    char file[128];
    scn_error err = {0};
    scn_scenario *s = (scn_scenario *)&err; /* a sentinel: must stay untouched */

    snprintf(file, sizeof file, "%s/test.yaml", dir);
    int rc = scn_scenario_parse(file, text, strlen(text), &s, &err);
    cr_assert_eq(rc, SCN_ERR_INPUT, "expected an input error for:\n%s", text);
    cr_assert_eq(s, (scn_scenario *)&err, "output changed on error");
    cr_assert_eq(err.code, SCN_ERR_INPUT);
    cr_assert_str_eq(err.file, file);
    cr_assert_eq(err.line, line, "line %d, expected %d (%s: %s)", err.line, line, err.field,
                 err.message);
    cr_assert_str_eq(err.field, field, "field \"%s\" (%s)", err.field, err.message);
    cr_assert(strncmp(err.message, message, strlen(message)) == 0,
              "message \"%s\" does not start with \"%s\"", err.message, message);
}

static const char *const full =
    "name: replicaset-converges\n"                                                    /* 1 */
    "seed: 7\n"                                                                       /* 2 */
    "controllers: [{name: replicaset, replicas: 2, config: {workers: 2}}, cronjob]\n" /* 3 */
    "fixtures: [fixtures/rs.yaml, {apiVersion: v1, kind: Namespace, metadata: {name: "
    "x}}]\n"                                                                              /* 4 */
    "maxVirtualTime: 2h\n"                                                                /* 5 */
    "steps:\n"                                                                            /* 6 */
    "  - apply: {file: fixtures/rs.yaml}\n"                                               /* 7 */
    "  - apply: {manifest: {apiVersion: v1, kind: Pod, metadata: {name: p}}}\n"           /* 8 */
    "  - apply:\n"                                                                        /* 9 */
    "      - {apiVersion: v1, kind: Pod, metadata: {generateName: p-}}\n"                 /* 10 */
    "  - patch: {apiVersion: apps/v1, kind: ReplicaSet, namespace: default, name: web,\n" /* 11 */
    "            type: merge, patch: {spec: {replicas: 5}}}\n"                            /* 12 */
    "  - patch: {apiVersion: v1, kind: Pod, namespace: default, name: p, type: json,\n"   /* 13 */
    "            patch: [{op: add, path: /metadata/labels, value: {a: b}}]}\n"            /* 14 */
    "  - delete: {apiVersion: v1, kind: Pod, namespace: default, name: web-abcde}\n"      /* 15 */
    "  - scale: {apiVersion: apps/v1, kind: ReplicaSet, namespace: default, name: web, "
    "replicas: 0}\n"                                                               /* 16 */
    "  - fault: {name: conflicts, rule: {match: {verb: update, resource: pods},\n" /* 17 */
    "            when: {probability: 0.3}, action: {error: {status: 409}}}}\n"     /* 18 */
    "  - fault: {remove: conflicts}\n"                                             /* 19 */
    "  - compact: {}\n"                                                            /* 20 */
    "  - advance: 10m\n"                                                           /* 21 */
    "  - wait: {for: {exists: {apiVersion: v1, kind: Pod, namespace: default, name: p}},\n"
    "           timeout: 90s}\n"                                                      /* 23 */
    "  - wait:\n"                                                                     /* 24 */
    "      for: {absent: {apiVersion: v1, kind: Pod, namespace: default, name: q}}\n" /* 25 */
    "  - expect: {field: {apiVersion: apps/v1, kind: ReplicaSet, namespace: default, "
    "name: web, path: .status.replicas, equals: 5}}\n"     /* 26 */
    "  - crash: {replica: 1, atWrite: 3}\n"                /* 27 */
    "  - crash: now\n"                                     /* 28 */
    "  - crash: {replica: 0}\n"                            /* 29 */
    "  - crash: {after: {verb: create, resource: pods}}\n" /* 30 */
    "  - restart: {replica: 1}\n"                          /* 31 */
    "  - partition: {replica: 0}\n"                        /* 32 */
    "  - heal: {replica: 0}\n"                             /* 33 */
    "  - restart:\n"                                       /* 34 */
    "invariants:\n"                                        /* 35 */
    "  - count: {apiVersion: v1, kind: Pod, namespace: default, selector: app=web, "
    "atMostField: {apiVersion: apps/v1, kind: ReplicaSet, namespace: default, name: web, "
    "path: .spec.replicas}}\n"                                                         /* 36 */
    "  - all:\n"                                                                       /* 37 */
    "    - field: {apiVersion: v1, kind: Pod, namespace: default, name: p,\n"          /* 38 */
    "        path: \".metadata.labels['app.kubernetes.io/name']\", matches: '^web'}\n" /* 39 */
    "    - field: {apiVersion: v1, kind: Pod, namespace: default, name: p, path: "
    "'.spec.containers[0].image', exists: true}\n" /* 40 */
    "    - field: {apiVersion: v1, kind: Pod, namespace: default, name: p, path: .x, "
    "atLeast: 1.5}\n" /* 41 */
    "    - field: {apiVersion: v1, kind: Pod, namespace: default, name: p, path: .x, "
    "atMost: 9}\n" /* 42 */
    "    - count: {apiVersion: v1, kind: Pod, selector: {app: web, tier: db}, equals: 3}\n"
    "    - count: {apiVersion: v1, kind: Node, atLeast: 1}\n" /* 44 */
    "    - field: {apiVersion: v1, kind: Pod, namespace: default, name: p, path: .a, "
    "equalsField: {apiVersion: v1, kind: Pod, namespace: default, name: q, path: .b}}\n";

Test(scenario, every_step_and_condition_parses)
{
    scn_scenario *s = parse_ok(full);
    const scn_step *st = s->steps;
    char path[256];

    cr_assert_str_eq(s->name, "replicaset-converges");
    cr_assert(s->has_seed);
    cr_assert_eq(s->seed, 7);
    cr_assert_eq(s->max_virtual_ns, 2 * 3600 * INT64_C(1000000000));
    snprintf(path, sizeof path, "%s/test.yaml", dir);
    cr_assert_str_eq(s->file, path);

    cr_assert_eq(s->n_controllers, 2);
    cr_assert_str_eq(s->controllers[0].name, "replicaset");
    cr_assert_eq(s->controllers[0].replicas, 2);
    cr_assert_eq(json_integer_value(json_object_get(s->controllers[0].config, "workers")), 2);
    cr_assert_str_eq(s->controllers[1].name, "cronjob");
    cr_assert_eq(s->controllers[1].replicas, 1);
    cr_assert_null(s->controllers[1].config);

    /* ReplicaSet + a List of two ConfigMaps, then the inline Namespace */
    cr_assert_eq(json_array_size(s->fixtures), 4);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(s->fixtures, 2), "kind")),
                     "ConfigMap");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(s->fixtures, 3), "kind")),
                     "Namespace");

    cr_assert_eq(s->n_steps, 22);
    cr_assert_eq(st[0].kind, SCN_STEP_APPLY);
    cr_assert_eq(st[0].line, 7);
    cr_assert_eq(json_array_size(st[0].manifest), 3);
    cr_assert_eq(json_array_size(st[1].manifest), 1);
    cr_assert_eq(json_array_size(st[2].manifest), 1);
    cr_assert_eq(st[2].line, 9);

    cr_assert_eq(st[3].kind, SCN_STEP_PATCH);
    cr_assert_str_eq(st[3].patch_type, "merge");
    cr_assert_str_eq(st[3].api_version, "apps/v1");
    cr_assert_str_eq(st[3].kind_name, "ReplicaSet");
    cr_assert_str_eq(st[3].ns, "default");
    cr_assert_str_eq(st[3].name, "web");
    cr_assert_eq(
        json_integer_value(json_object_get(json_object_get(st[3].manifest, "spec"), "replicas")),
        5);
    cr_assert_str_eq(st[4].patch_type, "json");
    cr_assert(json_is_array(st[4].manifest));

    cr_assert_eq(st[5].kind, SCN_STEP_DELETE);
    cr_assert_str_eq(st[5].name, "web-abcde");
    cr_assert_eq(st[6].kind, SCN_STEP_SCALE);
    cr_assert_eq(st[6].replicas, 0);

    cr_assert_eq(st[7].kind, SCN_STEP_FAULT);
    cr_assert_str_eq(st[7].fault_name, "conflicts");
    cr_assert_not(st[7].fault_remove);
    cr_assert(json_is_object(json_object_get(st[7].rule, "match")));
    cr_assert_eq(st[8].kind, SCN_STEP_FAULT);
    cr_assert(st[8].fault_remove);
    cr_assert_str_eq(st[8].fault_name, "conflicts");
    cr_assert_null(st[8].rule);

    cr_assert_eq(st[9].kind, SCN_STEP_COMPACT);
    cr_assert_eq(st[10].kind, SCN_STEP_ADVANCE);
    cr_assert_eq(st[10].duration_ns, 600 * INT64_C(1000000000));
    cr_assert_str_eq(st[10].text, "{\"advance\":\"10m\"}");

    cr_assert_eq(st[11].kind, SCN_STEP_WAIT);
    cr_assert_eq(st[11].duration_ns, 90 * INT64_C(1000000000));
    cr_assert_eq(st[11].cond->kind, SCN_COND_EXISTS);
    cr_assert_str_eq(st[11].cond->name, "p");
    cr_assert_eq(st[12].duration_ns, 300 * INT64_C(1000000000)); /* the default */
    cr_assert_eq(st[12].cond->kind, SCN_COND_ABSENT);
    cr_assert_eq(st[12].cond->line, 25);

    cr_assert_eq(st[13].kind, SCN_STEP_EXPECT);
    cr_assert_eq(st[13].cond->kind, SCN_COND_FIELD);
    cr_assert_eq(st[13].cond->cmp, SCN_CMP_EQUALS);
    cr_assert_str_eq(st[13].cond->path, ".status.replicas");
    cr_assert_eq(json_integer_value(st[13].cond->value), 5);

    cr_assert_eq(st[14].kind, SCN_STEP_CRASH);
    cr_assert_eq(st[14].replica, 1);
    cr_assert_eq(st[14].crash_at_write, 3);
    cr_assert_eq(st[15].crash_at_write, 0);
    cr_assert_null(st[15].crash_after);
    cr_assert_eq(st[16].replica, 0);
    cr_assert_str_eq(json_string_value(json_object_get(st[17].crash_after, "verb")), "create");
    cr_assert_eq(st[18].kind, SCN_STEP_RESTART);
    cr_assert_eq(st[18].replica, 1);
    cr_assert_eq(st[19].kind, SCN_STEP_PARTITION);
    cr_assert_eq(st[20].kind, SCN_STEP_HEAL);
    cr_assert_eq(st[21].kind, SCN_STEP_RESTART);
    cr_assert_eq(st[21].replica, 0);

    cr_assert_eq(s->n_invariants, 2);
    const scn_cond *c = s->invariants[0];
    cr_assert_eq(c->kind, SCN_COND_COUNT);
    cr_assert_str_eq(c->selector, "app=web");
    cr_assert_eq(c->cmp, SCN_CMP_AT_MOST);
    cr_assert_null(c->value);
    cr_assert_not_null(c->value_from);
    cr_assert_str_eq(c->value_from->path, ".spec.replicas");
    cr_assert_str_eq(c->value_from->kind_name, "ReplicaSet");
    cr_assert_eq(c->line, 36);

    c = s->invariants[1];
    cr_assert_eq(c->kind, SCN_COND_ALL);
    cr_assert_eq(c->n_all, 7);
    cr_assert_eq(c->all[0]->cmp, SCN_CMP_MATCHES);
    cr_assert_str_eq(c->all[0]->path, ".metadata.labels['app.kubernetes.io/name']");
    cr_assert_eq(c->all[0]->line, 38);
    cr_assert_eq(c->all[1]->cmp, SCN_CMP_EXISTS);
    cr_assert(json_is_true(c->all[1]->value));
    cr_assert_eq(c->all[2]->cmp, SCN_CMP_AT_LEAST);
    cr_assert_eq(c->all[3]->cmp, SCN_CMP_AT_MOST);
    cr_assert_str_eq(c->all[4]->selector, "app=web,tier=db");
    cr_assert_null(c->all[4]->ns);
    cr_assert_null(c->all[5]->selector);
    cr_assert_eq(c->all[6]->cmp, SCN_CMP_EQUALS);
    cr_assert_str_eq(c->all[6]->value_from->name, "q");
    scn_scenario_free(s);
}

Test(scenario, minimal_defaults)
{
    scn_scenario *s = parse_ok("name: x\n");

    cr_assert_not(s->has_seed);
    cr_assert_eq(s->n_controllers, 0);
    cr_assert_eq(s->n_steps, 0);
    cr_assert_eq(json_array_size(s->fixtures), 0);
    cr_assert_eq(s->max_virtual_ns, 24 * 3600 * INT64_C(1000000000));
    scn_scenario_free(s);
    scn_scenario_free(NULL);
}

Test(scenario, json_scenarios_have_lines_too)
{
    parse_err("{\n  \"name\": \"x\",\n  \"steps\": [\n    {\"advance\": \"soon\"}\n  ]\n}\n", 4,
              "steps[0].advance", "not a duration: \"soon\"");
}

Test(scenario, load_from_a_file)
{
    char path[128];
    scn_scenario *s = NULL;
    scn_error err = {0};

    write_file("s.yaml", "name: from-file\nfixtures: [fixtures/rs.yaml]\n");
    snprintf(path, sizeof path, "%s/s.yaml", dir);
    cr_assert_eq(scn_scenario_load(path, &s, &err), 0, "%s", err.message);
    cr_assert_str_eq(s->name, "from-file");
    cr_assert_eq(json_array_size(s->fixtures), 3);
    scn_scenario_free(s);

    snprintf(path, sizeof path, "%s/none.yaml", dir);
    cr_assert_eq(scn_scenario_load(path, &s, &err), SCN_ERR_IO);
    cr_assert_str_eq(err.file, path);
    cr_assert(strstr(err.message, "No such file"), "%s", err.message);
}

/* ---- durations ---- */

Test(scenario, durations)
{
    static const struct {
        const char *json;
        int64_t ns; /* -1: an error */
    } cases[] = {
        {"\"500ms\"", 500000000},
        {"\"10s\"", 10000000000},
        {"\"5m\"", 300000000000},
        {"\"24h\"", 86400000000000},
        {"\"1h30m\"", 5400000000000},
        {"\"1.5s\"", 1500000000},
        {"\"250us\"", 250000},
        {"\"7ns\"", 7},
        {"\"10\"", 10000000000},
        {"\"0.25\"", 250000000},
        {"10", 10000000000},
        {"0.5", 500000000},
        {"0", 0},
        {"\"5 minutes\"", -1},
        {"\"\"", -1},
        {"\"-5s\"", -1},
        {"-1", -1},
        {"\"5\"", 5000000000},
        {"\"5x\"", -1},
        {"\"m\"", -1},
        {"\"1.s\"", 1000000000},
        {"\"99999999999h\"", -1},
        {"true", -1},
        {"null", -1},
        {"[1]", -1},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *v = json_loads(cases[i].json, JSON_DECODE_ANY, NULL);
        int64_t ns = -42;
        int rc = scn_parse_duration(v, &ns);
        if (cases[i].ns < 0) {
            cr_expect_eq(rc, SCN_ERR_INPUT, "%s should fail", cases[i].json);
            cr_expect_eq(ns, -42, "%s: output changed on error", cases[i].json);
        } else {
            cr_expect_eq(rc, 0, "%s should parse", cases[i].json);
            cr_expect_eq(ns, cases[i].ns, "%s: %lld, expected %lld", cases[i].json, (long long)ns,
                         (long long)cases[i].ns);
        }
        json_decref(v);
    }
}

/* ---- errors: file, line, field ---- */

Test(scenario, bad_duration)
{
    parse_err("name: x\n"
              "steps:\n"
              "  - advance: 1s\n"
              "  - wait:\n"
              "      for: {exists: {apiVersion: v1, kind: Pod, name: p}}\n"
              "      timeout: 5 minutes\n",
              6, "steps[1].wait.timeout", "not a duration: \"5 minutes\"");
    parse_err("name: x\nmaxVirtualTime: forever\n", 2, "maxVirtualTime", "not a duration");
}

Test(scenario, error_format)
{
    char file[128], msg[1024], want[1200];
    scn_error err = {0};
    scn_scenario *s = NULL;
    const char *text = "name: x\nsteps:\n  - advance: 1 hour\n";

    snprintf(file, sizeof file, "%s/test.yaml", dir);
    cr_assert_eq(scn_scenario_parse(file, text, strlen(text), &s, &err), SCN_ERR_INPUT);
    scn_error_format(&err, msg, sizeof msg);
    snprintf(want, sizeof want, "%s:3: steps[0].advance: not a duration: \"1 hour\"", file);
    cr_assert(strncmp(msg, want, strlen(want)) == 0, "%s", msg);
    cr_assert_str_eq(scn_strerror(SCN_ERR_INPUT), "malformed scenario");
}

Test(scenario, unknown_step)
{
    parse_err("name: x\nsteps:\n  - advance: 1s\n  - sleep: 1s\n", 4, "steps[1].sleep",
              "unknown step \"sleep\"; expected one of: apply, patch,");
    parse_err("name: x\nsteps:\n  - {advance: 1s, compact: {}}\n", 3, "steps[0]",
              "a step is a mapping with exactly one of");
    parse_err("name: x\nsteps:\n  - advance\n", 3, "steps[0]",
              "a step is a mapping with exactly one of");
}

Test(scenario, unknown_field)
{
    parse_err("name: x\nsede: 7\n", 2, "sede", "unknown field; expected one of: name,");
    parse_err("name: x\nsteps:\n  - wait:\n      for: {exists: {apiVersion: v1, kind: Pod, "
              "name: p}}\n      timout: 5m\n",
              5, "steps[0].wait.timout", "unknown field; expected one of: for, timeout");
    parse_err("name: x\ninvariants:\n  - field: {apiVersion: v1, kind: Pod, name: p, path: .a,\n"
              "      equal: 3}\n",
              4, "invariants[0].field.equal", "unknown field");
}

Test(scenario, missing_name)
{
    parse_err("seed: 3\nsteps: []\n", 1, "name", "required field is missing");
    parse_err("name: \"\"\n", 1, "name", "must not be empty");
    parse_err("name: 5\n", 1, "name", "expected a string, found an integer");
    parse_err("name: x\nsteps:\n  - delete: {apiVersion: v1, kind: Pod}\n", 3,
              "steps[0].delete.name", "required field is missing");
}

Test(scenario, condition_without_a_comparison)
{
    parse_err("name: x\nsteps:\n  - expect:\n      field: {apiVersion: v1, kind: Pod, name: p, "
              "path: .a}\n",
              4, "steps[0].expect.field", "no comparison: expected one of equals,");
    parse_err("name: x\ninvariants:\n  - count: {apiVersion: v1, kind: Pod}\n", 3,
              "invariants[0].count", "no comparison");
    parse_err("name: x\ninvariants:\n  - count: {apiVersion: v1, kind: Pod, equals: 1,\n"
              "             atMost: 2}\n",
              4, "invariants[0].count.atMost", "more than one comparison (equals and atMost)");
}

Test(scenario, fixture_file_missing)
{
    char want[256];

    snprintf(want, sizeof want, "cannot read manifest: %s/fixtures/none.yaml: No such file", dir);
    parse_err("name: x\nfixtures:\n  - fixtures/rs.yaml\n  - fixtures/none.yaml\n", 4,
              "fixtures[1]", want);
    snprintf(want, sizeof want, "cannot read manifest: %s/gone.yaml", dir);
    parse_err("name: x\nsteps:\n  - apply: {file: gone.yaml}\n", 3, "steps[0].apply.file", want);
}

Test(scenario, fixture_file_malformed)
{
    char want[256];

    snprintf(want, sizeof want, "%s/fixtures/bad.yaml:", dir);
    parse_err("name: x\nfixtures: [fixtures/bad.yaml]\n", 2, "fixtures[0]", want);
    snprintf(want, sizeof want, "%s/fixtures/nokind.yaml: document 1: object has no kind", dir);
    parse_err("name: x\nfixtures: [fixtures/nokind.yaml]\n", 2, "fixtures[0]", want);
    parse_err("name: x\nfixtures:\n  - {apiVersion: v1, kind: Pod, metadata: {}}\n", 3,
              "fixtures[0]", "object has no metadata.name or metadata.generateName");
}

Test(scenario, other_errors)
{
    /* the YAML itself */
    parse_err("name: x\nsteps: [\n", 3, "", "");
    parse_err("name: a\n---\nname: b\n", 1, "", "expected one YAML document, found 2");
    parse_err("- a\n- b\n", 1, "", "a scenario is a mapping");
    /* paths and patterns */
    parse_err("name: x\ninvariants:\n  - field: {apiVersion: v1, kind: Pod, name: p,\n"
              "      path: status.replicas, equals: 1}\n",
              4, "invariants[0].field.path", "not a path: \"status.replicas\"");
    parse_err("name: x\ninvariants:\n  - field:\n      apiVersion: v1\n      kind: Pod\n"
              "      name: p\n      path: .a['b]\n      equals: 1\n",
              7, "invariants[0].field.path", "not a path: \".a['b]\": unterminated quoted key");
    parse_err("name: x\ninvariants:\n  - field: {apiVersion: v1, kind: Pod, name: p, path: .a,\n"
              "      matches: '(web'}\n",
              4, "invariants[0].field.matches", "not a regular expression");
    parse_err("name: x\ninvariants:\n  - field: {apiVersion: v1, kind: Pod, name: p, path: .a,\n"
              "      atLeast: three}\n",
              4, "invariants[0].field.atLeast", "expected a number, found a string");
    parse_err("name: x\ninvariants:\n  - count: {apiVersion: v1, kind: Pod, equals: -1}\n", 3,
              "invariants[0].count.equals", "expected a count");
    parse_err("name: x\ninvariants:\n  - some: []\n", 3, "invariants[0].some",
              "unknown condition; expected one of: exists, absent, field, count, all, any, not");
    parse_err("name: x\ninvariants:\n  - any: []\n", 3, "invariants[0].any",
              "an empty list of conditions");
    parse_err("name: x\ninvariants:\n  - not: {exists: {kind: Pod, name: p}}\n", 3,
              "invariants[0].not.exists.apiVersion", "required field is missing");
    parse_err("name: x\ninvariants:\n  - all: []\n", 3, "invariants[0].all",
              "an empty list of conditions");
    parse_err("name: x\ninvariants:\n  - all:\n    - exists: {kind: Pod, name: p}\n", 4,
              "invariants[0].all[0].exists.apiVersion", "required field is missing");
    /* replicas, faults, crashes */
    parse_err("name: x\ncontrollers: [rs]\nsteps:\n  - crash: {replica: 1}\n", 4,
              "steps[0].crash.replica",
              "replica 1 does not exist: the controllers run 1 manager replica (0..0; ");
    parse_err("name: x\nsteps:\n  - fault: {remove: nope}\n", 3, "steps[0].fault.remove",
              "no fault named \"nope\" is in force here");
    parse_err("name: x\nsteps:\n  - fault: {name: a, rule: {}}\n  - fault: {name: a, rule: {}}\n",
              4, "steps[1].fault.name", "a fault named \"a\" is already in force");
    parse_err("name: x\nsteps:\n  - fault: {name: a}\n", 3, "steps[0].fault.rule",
              "required field is missing");
    parse_err("name: x\nsteps:\n  - crash: {atWrite: 2, after: {verb: create}}\n", 3,
              "steps[0].crash.after", "atWrite and after cannot both be given");
    parse_err("name: x\nsteps:\n  - crash: {atWrite: 0}\n", 3, "steps[0].crash.atWrite",
              "0 is out of range");
    parse_err("name: x\nsteps:\n  - crash: later\n", 3, "steps[0].crash", "expected now,");
    parse_err("name: x\nsteps:\n  - patch: {apiVersion: v1, kind: Pod, name: p, type: apply,\n"
              "             patch: {}}\n",
              3, "steps[0].patch.type", "unknown patch type \"apply\"");
    parse_err("name: x\nsteps:\n  - patch: {apiVersion: v1, kind: Pod, name: p, type: json, "
              "patch: {}}\n",
              3, "steps[0].patch.patch", "expected a list of JSON patch operations");
    parse_err("name: x\nsteps:\n  - scale: {apiVersion: v1, kind: Pod, name: p}\n", 3,
              "steps[0].scale.replicas", "required field is missing");
    parse_err("name: x\nsteps:\n  - compact: {now: true}\n", 3, "steps[0].compact",
              "compact takes no options");
    parse_err("name: x\nsteps:\n  - apply: 3\n", 3, "steps[0].apply", "expected {file: PATH}");
    parse_err("name: x\nsteps:\n  - apply: {file: a.yaml, manifest: {}}\n", 3, "steps[0].apply",
              "expected exactly one of file and manifest");
    parse_err("name: x\nsteps:\n  - wait: {timeout: 1m}\n", 3, "steps[0].wait.for",
              "required field is missing");
    parse_err("name: x\ncontrollers: [a, a]\n", 2, "controllers[1]", "controller \"a\" is named");
    parse_err("name: x\ncontrollers: [{name: a, replicas: 0}]\n", 2, "controllers[0].replicas",
              "0 is out of range [1, 16]");
    parse_err("name: x\nseed: -1\n", 2, "seed", "expected an integer >= 0");
}

Test(scenario, patch_subresource)
{
    scn_scenario *s =
        parse_ok("name: x\n"
                 "steps:\n"
                 "  - patch: {apiVersion: example.com/v1, kind: PodSet, namespace: "
                 "default, name: web, subresource: status,\n"
                 "            patch: {status: {replicas: 2}}}\n"
                 "  - patch: {apiVersion: v1, kind: Pod, namespace: default, name: p,\n"
                 "            patch: {spec: {x: 1}}}\n");
    cr_assert_str_eq(s->steps[0].subresource, "status");
    cr_assert_str_eq(s->steps[0].patch_type, "merge");
    cr_assert_null(s->steps[1].subresource, "the object itself by default");
    scn_scenario_free(s);
    parse_err("name: x\nsteps:\n  - patch: {apiVersion: v1, kind: Pod, name: p, subresource: "
              "spec,\n             patch: {}}\n",
              3, "steps[0].patch.subresource",
              "unknown subresource \"spec\"; expected status or scale");
    parse_err("name: x\nsteps:\n  - patch: {apiVersion: v1, kind: Pod, name: p, subresource: 1,\n"
              "             patch: {}}\n",
              3, "steps[0].patch.subresource", "expected a string");
}

/* replica: leader, controller: NAME: the leader on NAME's Lease. */
Test(scenario, leader_of_a_controller)
{
    scn_scenario *s = parse_ok("name: x\n"
                               "controllers: [{name: a, replicas: 2}, {name: b, replicas: 3}, c]\n"
                               "steps:\n"
                               "  - crash: {replica: leader, controller: b, as: old}\n"
                               "  - partition: {replica: leader, controller: a}\n"
                               "  - restart: {replica: old}\n");
    cr_assert_str_eq(s->steps[0].replica_ref, "leader");
    cr_assert_str_eq(s->steps[0].replica_controller, "b");
    cr_assert_str_eq(s->steps[1].replica_controller, "a");
    cr_assert_null(s->steps[2].replica_controller);
    scn_scenario_free(s);
    const char *two = "name: x\ncontrollers: [{name: a, replicas: 2}, {name: b, replicas: 3}, c]\n"
                      "steps:\n";
    char text[512];
    snprintf(text, sizeof text, "%s  - crash: {replica: leader}\n", two);
    parse_err(text, 4, "steps[0].crash.replica",
              "replica: leader needs exactly one leader-elected controller (one with replicas "
              "above 1), or controller: NAME to say whose Lease; the scenario has 2");
    snprintf(text, sizeof text, "%s  - heal: {replica: leader, controller: d}\n", two);
    parse_err(text, 4, "steps[0].heal.controller", "the scenario runs no controller \"d\"");
    snprintf(text, sizeof text, "%s  - crash: {replica: leader, controller: c}\n", two);
    parse_err(text, 4, "steps[0].crash.controller",
              "controller \"c\" is not leader-elected (it runs in 1 replica; a controller with "
              "replicas above 1 elects on kube-system/c)");
    snprintf(text, sizeof text, "%s  - crash: {replica: 1, controller: a}\n", two);
    parse_err(text, 4, "steps[0].crash.controller", "controller goes with replica: leader");
}

/* Replica i is the manager replica running every controller whose replicas
 * are above i: two controllers of one replica each are one replica, 0. */
Test(scenario, replica_numbering_counts_manager_replicas)
{
    parse_err("name: x\ncontrollers: [memcached, deployment-sim]\nsteps:\n"
              "  - crash: {replica: 1}\n",
              4, "steps[0].crash.replica",
              "replica 1 does not exist: the controllers run 1 manager replica (0..0; replica i "
              "runs every controller whose replicas is above i");
    parse_err("name: x\ncontrollers: [a, {name: b, replicas: 3}]\nsteps:\n"
              "  - partition: {replica: 3}\n",
              4, "steps[0].partition.replica",
              "replica 3 does not exist: the controllers run 3 manager replicas (0..2;");
    scn_scenario *s = parse_ok("name: x\n"
                               "controllers: [a, {name: b, replicas: 3}, {name: c, replicas: 2}]\n"
                               "steps:\n"
                               "  - crash: {replica: 0}\n"
                               "  - partition: {replica: 2}\n"
                               "  - heal: {replica: 2}\n"
                               "  - restart: {replica: 0}\n");
    cr_assert_eq(s->n_steps, 4);
    cr_assert_eq(s->steps[0].kind, SCN_STEP_CRASH);
    cr_assert_eq(s->steps[0].replica, 0);
    cr_assert_null(s->steps[0].replica_ref);
    cr_assert_eq(s->steps[1].replica, 2, "replica 2 runs b only, and exists");
    cr_assert_eq(s->steps[3].kind, SCN_STEP_RESTART);
    scn_scenario_free(s);
}

static int no_get(void *ud, const char *api_version, const char *kind, const char *ns,
                  const char *name, json_t **out)
{
    (void)ud, (void)api_version, (void)kind, (void)ns, (void)name, (void)out;
    return -1;
}

Test(scenario, single_leader)
{
    scn_scenario *s = parse_ok("name: x\n"
                               "invariants:\n"
                               "  - singleLeader: {namespace: kube-system, name: rs}\n"
                               "  - singleLeader: {namespace: ns, name: l, leaseDuration: 40s}\n");
    cr_assert_eq(s->n_invariants, 2);
    const scn_cond *c = s->invariants[0];
    cr_assert_eq(c->kind, SCN_COND_SINGLE_LEADER);
    cr_assert_str_eq(c->api_version, "coordination.k8s.io/v1");
    cr_assert_str_eq(c->kind_name, "Lease");
    cr_assert_str_eq(c->ns, "kube-system");
    cr_assert_str_eq(c->name, "rs");
    cr_assert_eq(c->lease_ns, 15 * 1000000000LL, "the default is controller-runtime's 15s");
    cr_assert_eq(s->invariants[1]->lease_ns, 40 * 1000000000LL);
    /* it needs the run's history: scn_cond_eval says it cannot */
    char msg[256];
    scn_lookup lk = {.get = no_get};
    cr_assert_not(scn_cond_eval(c, &lk, msg, sizeof msg));
    cr_assert_str_eq(msg, "singleLeader is checked over a run's trace, by the runner");
    scn_scenario_free(s);
}

Test(scenario, single_leader_errors)
{
    /* singleLeader reads the run's history: only a top-level invariant */
    parse_err("name: x\nsteps:\n  - expect: {singleLeader: {namespace: a, name: b}}\n", 3,
              "steps[0].expect.singleLeader", "singleLeader is checked over the run's history");
    parse_err("name: x\ninvariants:\n  - all:\n    - singleLeader: {namespace: a, name: b}\n", 4,
              "invariants[0].all[0].singleLeader", "singleLeader is checked over");
    parse_err("name: x\ninvariants:\n  - singleLeader: {name: b}\n", 3,
              "invariants[0].singleLeader.namespace", "required field is missing");
    parse_err("name: x\ninvariants:\n  - singleLeader: {namespace: a, name: b, lease: c}\n", 3,
              "invariants[0].singleLeader.lease", "unknown field");
    parse_err("name: x\ninvariants:\n  - singleLeader: {namespace: a, name: b, leaseDuration: 0}\n",
              3, "invariants[0].singleLeader.leaseDuration", "must be above 0");
    parse_err("name: x\ninvariants:\n  - singleLeader: {namespace: a, name: b, leaseDuration: x}\n",
              3, "invariants[0].singleLeader.leaseDuration", "not a duration");
}

Test(scenario, steps_addressed_to_the_leader_or_a_name)
{
    scn_scenario *s = parse_ok("name: x\n"
                               "controllers: [{name: rs, replicas: 3}, cronjob]\n"
                               "steps:\n"
                               "  - crash: {replica: leader, as: first}\n"
                               "  - restart: {replica: first}\n"
                               "  - partition: {replica: leader, as: second}\n"
                               "  - heal: {replica: second}\n"
                               "  - crash: {replica: 2, as: first, atWrite: 2}\n");
    const scn_step *st = s->steps;
    cr_assert_str_eq(st[0].replica_ref, "leader");
    cr_assert_str_eq(st[0].replica_as, "first");
    cr_assert_eq(st[1].kind, SCN_STEP_RESTART);
    cr_assert_str_eq(st[1].replica_ref, "first");
    cr_assert_null(st[1].replica_as);
    cr_assert_str_eq(st[2].replica_ref, "leader");
    cr_assert_str_eq(st[3].replica_ref, "second");
    cr_assert_null(st[4].replica_ref);
    cr_assert_eq(st[4].replica, 2);
    cr_assert_str_eq(st[4].replica_as, "first");
    cr_assert_eq(st[4].crash_at_write, 2);
    scn_scenario_free(s);
}

Test(scenario, steps_addressed_to_the_leader_or_a_name_errors)
{
    /* leader needs exactly one leader-elected controller */
    parse_err("name: x\ncontrollers: [rs]\nsteps:\n  - crash: {replica: leader}\n", 4,
              "steps[0].crash.replica", "replica: leader needs exactly one leader-elected");
    parse_err("name: x\ncontrollers: [{name: a, replicas: 2}, {name: b, replicas: 2}]\n"
              "steps:\n  - partition: {replica: leader}\n",
              4, "steps[0].partition.replica", "replica: leader needs exactly one");
    /* a name must be given before it is used */
    parse_err("name: x\ncontrollers: [{name: a, replicas: 2}]\nsteps:\n"
              "  - heal: {replica: old}\n  - partition: {replica: leader, as: old}\n",
              4, "steps[0].heal.replica", "no replica is named \"old\"");
    parse_err("name: x\ncontrollers: [{name: a, replicas: 2}]\nsteps:\n"
              "  - crash: {replica: 1, as: leader}\n",
              4, "steps[0].crash.as", "a replica's name cannot be empty or \"leader\"");
    parse_err("name: x\ncontrollers: [{name: a, replicas: 2}]\nsteps:\n"
              "  - restart: {replica: 0, as: 3}\n",
              4, "steps[0].restart.as", "expected a string");
}

/* atStart: fault and crash steps before the managers run; crash.restart. */
Test(scenario, at_start_and_crash_restart)
{
    scn_scenario *s = parse_ok("name: s\n"
                               "controllers: [c]\n"
                               "atStart:\n"
                               "  - crash: {replica: 0, atWrite: 3, restart: true}\n"
                               "  - fault: {name: f, rule: {action: {drop: true}}}\n"
                               "steps:\n"
                               "  - fault: {remove: f}\n"
                               "  - crash: {replica: 0, after: {verb: create}, restart: false}\n");
    cr_assert_eq(s->n_start_steps, 2);
    cr_assert_eq(s->start_steps[0].kind, SCN_STEP_CRASH);
    cr_assert_eq(s->start_steps[0].crash_at_write, 3);
    cr_assert(s->start_steps[0].crash_restart);
    cr_assert_eq(s->start_steps[1].kind, SCN_STEP_FAULT);
    cr_assert_str_eq(s->start_steps[1].fault_name, "f");
    cr_assert_not(s->steps[1].crash_restart);
    /* the document written back keeps them */
    char *yaml = scn_scenario_to_yaml(s);
    cr_assert_not_null(strstr(yaml, "atStart"));
    cr_assert_not_null(strstr(yaml, "restart: true"));
    free(yaml);
    scn_scenario_free(s);
    /* and a cluster section */
    s = parse_ok("name: s\ncontrollers: [c]\ncluster: {nodes: 2}\n");
    yaml = scn_scenario_to_yaml(s);
    scn_scenario_free(s);
    s = parse_ok(yaml);
    free(yaml);
    cr_assert_not_null(s->cluster, "the cluster section survives the round trip");
    cr_assert_eq(json_integer_value(json_object_get(s->cluster, "nodes")), 2);
    scn_scenario_free(s);
    parse_err("name: s\ncontrollers: [c]\natStart:\n  - advance: 1s\n", 4, "atStart[0]",
              "atStart takes fault and crash steps only");
    parse_err("name: s\ncontrollers: [c]\natStart:\n  - crash: {replica: 1}\n", 4,
              "atStart[0].crash.replica", "replica 1 does not exist");
    parse_err("name: s\ncontrollers: [c]\nsteps:\n  - crash: {replica: 0, restart: true}\n", 4,
              "steps[0].crash.restart", "restart: true needs atWrite or after");
    parse_err("name: s\ncontrollers: [c]\nsteps:\n  - crash: {atWrite: 1, restart: 1}\n", 4,
              "steps[0].crash.restart", "expected true or false");
}
