/*
 * test_stages.c - stage rules (cluster/stages.c): durations, valid rules
 * and what they match, the built-in rules, and each malformed case with
 * its message (naming the rule and the key), also through kc_config_new.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_int.h"
#include "ctrl/clock.h"
#include "stages.h"

static json_t *parse_json(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    cr_assert(v, "%s: %s", text, e.text);
    return v;
}

static int64_t dur(const char *text)
{
    json_t *v = parse_json(text);
    int64_t ns = -42;
    bool ok = kc__duration_parse(v, &ns);
    json_decref(v);
    return ok ? ns : -1;
}

Test(stages, durations)
{
    cr_expect_eq(dur("\"1s\""), CTRL_SECOND);
    cr_expect_eq(dur("\"250ms\""), 250 * CTRL_MILLISECOND);
    cr_expect_eq(dur("\"1m30s\""), 90 * CTRL_SECOND);
    cr_expect_eq(dur("\"1.5h\""), 90 * CTRL_MINUTE);
    cr_expect_eq(dur("\"10us\""), 10000);
    cr_expect_eq(dur("\"0\""), 0);
    cr_expect_eq(dur("3"), 3 * CTRL_SECOND);
    cr_expect_eq(dur("0.5"), CTRL_SECOND / 2);
    cr_expect_eq(dur("\"\""), -1);
    cr_expect_eq(dur("\"5\""), -1);
    cr_expect_eq(dur("\"-1s\""), -1);
    cr_expect_eq(dur("\"1x\""), -1);
    cr_expect_eq(dur("\"s\""), -1);
    cr_expect_eq(dur("-2"), -1);
    cr_expect_eq(dur("true"), -1);
    cr_expect_eq(dur("\"100000h\""), -1);
}

static kc_stages *parse_ok(const char *text)
{
    json_t *v = parse_json(text);
    kc_stages *st = NULL;
    char err[512] = "";
    int rc = kc__stages_parse(v, &st, err, sizeof err);
    json_decref(v);
    cr_assert_eq(rc, 0, "%s: %s", text, err);
    return st;
}

static const kc_stage_rule *match(const kc_stages *st, const char *pod_text)
{
    json_t *pod = parse_json(pod_text);
    const kc_stage_rule *r = kc__stages_match(st, pod);
    json_decref(pod);
    return r;
}

Test(stages, valid_rules_and_matching)
{
    kc_stages *st = parse_ok(
        "[{\"name\":\"web\",\"match\":{\"namespaces\":[\"prod\"],\"labels\":{\"matchLabels\":"
        "{\"app\":\"web\"}},\"images\":[\"nginx*\"]},\"scheduledToRunning\":\"2s\","
        "\"readyAfter\":\"500ms\",\"terminationDelay\":\"3s\"},"
        "{\"match\":{\"ownerKind\":\"StatefulSet\"},\"outcome\":\"Fail\",\"after\":10,"
        "\"exitCode\":7},"
        "{\"name\":\"batch\",\"match\":{\"labels\":{\"matchExpressions\":[{\"key\":\"tier\","
        "\"operator\":\"In\",\"values\":[\"batch\"]}]}},\"outcome\":\"Succeed\",\"after\":\"1m\"}"
        "]");
    cr_assert_eq(kc__stages_count(st), 3);
    const kc_stage_rule *web = kc__stages_rule(st, 0);
    cr_expect_str_eq(web->name, "web");
    cr_expect_eq(web->scheduled_to_running_ns, 2 * CTRL_SECOND);
    cr_expect_eq(web->ready_after_ns, 500 * CTRL_MILLISECOND);
    cr_expect_eq(web->termination_ns, 3 * CTRL_SECOND);
    cr_expect_eq(web->outcome, KC_OUTCOME_RUN);
    const kc_stage_rule *sts = kc__stages_rule(st, 1);
    cr_expect_str_eq(sts->name, "stages[1]");
    cr_expect_eq(sts->outcome, KC_OUTCOME_FAIL);
    cr_expect_eq(sts->exit_code, 7);
    cr_expect_eq(sts->after_ns, 10 * CTRL_SECOND);

    cr_expect_eq(match(st, "{\"metadata\":{\"namespace\":\"prod\",\"labels\":{\"app\":\"web\"}},"
                           "\"spec\":{\"containers\":[{\"image\":\"nginx:1.27\"}]}}"),
                 web);
    /* Another namespace, another image: not web. */
    cr_expect_neq(match(st, "{\"metadata\":{\"namespace\":\"dev\",\"labels\":{\"app\":\"web\"}},"
                            "\"spec\":{\"containers\":[{\"image\":\"nginx:1.27\"}]}}"),
                  web);
    cr_expect_neq(match(st, "{\"metadata\":{\"namespace\":\"prod\",\"labels\":{\"app\":\"web\"}},"
                            "\"spec\":{\"containers\":[{\"image\":\"redis\"}]}}"),
                  web);
    cr_expect_eq(match(st, "{\"metadata\":{\"namespace\":\"x\",\"ownerReferences\":[{\"kind\":"
                           "\"StatefulSet\",\"name\":\"db\"}]}}"),
                 sts);
    const kc_stage_rule *batch =
        match(st, "{\"metadata\":{\"namespace\":\"x\",\"labels\":{\"tier\":\"batch\"}}}");
    cr_expect_str_eq(batch->name, "batch");
    cr_expect_eq(batch->outcome, KC_OUTCOME_SUCCEED);
    cr_expect_eq(batch->after_ns, CTRL_MINUTE);

    /* The built-ins: Jobs' pods succeed after 1 s, others run. */
    const kc_stage_rule *job =
        match(st, "{\"metadata\":{\"namespace\":\"x\",\"ownerReferences\":[{\"kind\":\"Job\"}]}}");
    cr_expect_eq(job->outcome, KC_OUTCOME_SUCCEED);
    cr_expect_eq(job->after_ns, CTRL_SECOND);
    job = match(NULL, "{\"metadata\":{\"labels\":{\"job-name\":\"j\"}}}");
    cr_expect_eq(job->outcome, KC_OUTCOME_SUCCEED);
    const kc_stage_rule *plain = match(NULL, "{\"metadata\":{\"name\":\"p\"}}");
    cr_expect_eq(plain->outcome, KC_OUTCOME_RUN);
    cr_expect_eq(plain->scheduled_to_running_ns, 0);
    cr_expect_eq(plain->ready_after_ns, 0);
    kc__stages_free(st);
}

static void parse_bad(const char *text, const char *want)
{
    json_t *v = parse_json(text);
    kc_stages *st = (kc_stages *)0x1;
    char err[512] = "";
    int rc = kc__stages_parse(v, &st, err, sizeof err);
    json_decref(v);
    cr_expect_eq(rc, KC_ERR_INPUT, "%s parsed", text);
    cr_expect_eq(st, (kc_stages *)0x1, "output touched");
    cr_expect_str_eq(err, want, "for %s", text);
}

Test(stages, malformed_rules)
{
    parse_bad("{}", "stages: a list of rules");
    parse_bad("[3]", "stages[0]: a mapping");
    parse_bad("[{\"nmae\":\"x\"}]", "stages[0]: unknown key \"nmae\"");
    parse_bad("[{},{\"name\":\"web\",\"match\":{\"image\":\"x\"}}]",
              "stages[1] (web): unknown key \"match.image\"");
    parse_bad("[{\"name\":\"\"}]", "stages[0] (): name: a non-empty string");
    parse_bad("[{\"name\":\"w\",\"match\":[]}]",
              "stages[0] (w): match: a mapping of namespaces, labels, images, ownerKind");
    parse_bad("[{\"name\":\"w\",\"match\":{\"namespaces\":\"a\"}}]",
              "stages[0] (w): match.namespaces: a non-empty list of strings");
    parse_bad("[{\"name\":\"w\",\"match\":{\"images\":[\"a\",3]}}]",
              "stages[0] (w): match.images[1]: a non-empty string");
    parse_bad("[{\"name\":\"w\",\"match\":{\"labels\":{\"matchExpressions\":[{\"key\":\"a\","
              "\"operator\":\"Near\"}]}}}]",
              "stages[0] (w): match.labels: a label selector {matchLabels: {k: v}, "
              "matchExpressions: [{key, operator: In|NotIn|Exists|DoesNotExist, values}]}");
    parse_bad("[{\"name\":\"w\",\"match\":{\"ownerKind\":1}}]",
              "stages[0] (w): match.ownerKind: a kind such as Job");
    parse_bad("[{\"name\":\"w\",\"readyAfter\":\"soon\"}]",
              "stages[0] (w): readyAfter: a duration such as \"500ms\", \"2s\" or \"1m30s\", or "
              "a number of seconds, not \"soon\"");
    parse_bad("[{\"scheduledToRunning\":-1}]",
              "stages[0]: scheduledToRunning: a duration such as \"500ms\", \"2s\" or \"1m30s\", "
              "or a number of seconds, not -1");
    parse_bad("[{\"name\":\"w\",\"outcome\":\"Explode\"}]",
              "stages[0] (w): outcome: one of Run, Succeed, Fail, not \"Explode\"");
    parse_bad("[{\"name\":\"w\",\"after\":\"1s\"}]",
              "stages[0] (w): after: only with outcome Succeed or Fail");
    parse_bad("[{\"name\":\"w\",\"outcome\":\"Succeed\",\"exitCode\":1}]",
              "stages[0] (w): exitCode: only with outcome Fail");
    parse_bad("[{\"name\":\"w\",\"outcome\":\"Fail\",\"exitCode\":0}]",
              "stages[0] (w): exitCode: an integer from 1 to 255");
    parse_bad("[{\"name\":\"w\",\"terminationDelay\":\"1d\"}]",
              "stages[0] (w): terminationDelay: a duration such as \"500ms\", \"2s\" or "
              "\"1m30s\", or a number of seconds, not \"1d\"");
}

Test(stages, through_the_cluster_document)
{
    json_t *doc =
        parse_json("{\"nodes\":1,\"stages\":[{\"name\":\"w\",\"outcome\":\"Sometimes\"}]}");
    kc_config *cfg = (kc_config *)0x1;
    char err[512] = "";
    cr_expect_eq(kc_config_new(doc, NULL, &cfg, err, sizeof err), KC_ERR_INPUT);
    cr_expect_eq(cfg, (kc_config *)0x1);
    cr_expect_str_eq(err, "stages[0] (w): outcome: one of Run, Succeed, Fail, not \"Sometimes\"");
    json_decref(doc);
    doc = parse_json("{\"nodes\":1,\"stages\":[{\"name\":\"w\",\"outcome\":\"Succeed\"}]}");
    cr_assert_eq(kc_config_new(doc, NULL, &cfg, err, sizeof err), 0, "%s", err);
    cr_expect_eq(kc__stages_count(cfg->st), 1);
    kc_config_free(cfg);
    json_decref(doc);
}

Test(stages, from_a_file)
{
    char dir[] = "/tmp/kc-stages-XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/stages.yaml", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("stages:\n"
          "  - name: web\n"
          "    match: {images: [\"nginx*\"]}\n"
          "    readyAfter: 2s\n"
          "  - name: bad\n"
          "    outcome: Succeed\n"
          "    after: 1m\n",
          f);
    fclose(f);
    json_t *doc = json_pack("{s:s}", "stages", "stages.yaml");
    kc_config *cfg = NULL;
    char err[512] = "";
    cr_assert_eq(kc_config_new(doc, dir, &cfg, err, sizeof err), 0, "%s", err);
    cr_assert_eq(kc__stages_count(cfg->st), 2);
    cr_expect_str_eq(kc__stages_rule(cfg->st, 0)->name, "web");
    cr_expect_eq(kc__stages_rule(cfg->st, 0)->ready_after_ns, 2 * CTRL_SECOND);
    cr_expect_eq(kc__stages_rule(cfg->st, 1)->after_ns, CTRL_MINUTE);
    kc_config_free(cfg);
    /* A malformed rule in a file names the rule too. */
    f = fopen(path, "w");
    cr_assert(f);
    fputs("- name: web\n  readyAfter: later\n", f);
    fclose(f);
    cfg = NULL;
    cr_expect_eq(kc_config_new(doc, dir, &cfg, err, sizeof err), KC_ERR_INPUT);
    cr_expect_null(cfg);
    cr_expect_str_eq(err, "stages[0] (web): readyAfter: a duration such as \"500ms\", \"2s\" or "
                          "\"1m30s\", or a number of seconds, not \"later\"");
    json_decref(doc);
    remove(path);
    rmdir(dir);
}
