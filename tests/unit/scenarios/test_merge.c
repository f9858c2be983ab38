/*
 * test_merge.c - shard reports read (JSON and JUnit), checked against each
 * other and merged (merge.h), on crafted reports, good and bad; and the
 * JSON report writer (report.h) read back.
 */
#include <criterion/criterion.h>
#include "junit.h"
#include "merge.h"
#include "report.h"
#include "scn/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A JSON report of `explore a.yaml --seeds FIRST..LAST` shard K/N holding
 * the runs given as "seed:verdict:trace" words. */
static char *json_report(int k, int n, int first, int last, const char *runs)
{
    char *text = NULL, *copy = strdup(runs), *save = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    int count = 0;

    fprintf(f,
            "{\"report\": \"scenario\", \"version\": 1, \"command\": \"explore\", "
            "\"files\": [\"a.yaml\"], \"seeds\": {\"first\": %d, \"last\": %d}, "
            "\"shard\": {\"index\": %d, \"count\": %d}, \"results\": [",
            first, last, k, n);
    for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        int seed;
        char verdict[16], trace[32];
        cr_assert_eq(sscanf(w, "%d:%15[a-z]:%31s", &seed, verdict, trace), 3, "%s", w);
        fprintf(f,
                "%s{\"file\": \"a.yaml\", \"scenario\": \"a\", \"seed\": %d, \"verdict\": \"%s\", "
                "\"message\": \"%s\", \"trace\": %s%s%s, \"time\": 0.5, "
                "\"replay\": \"scenario replay a.yaml --seed %d --trace trace.jsonl\"}",
                count++ ? ", " : "", seed, verdict, strcmp(verdict, "pass") ? "it broke" : "",
                strcmp(trace, "null") ? "\"" : "", trace, strcmp(trace, "null") ? "\"" : "", seed);
    }
    fprintf(f, "], \"summary\": {\"runs\": %d}}\n", count);
    fclose(f);
    free(copy);
    return text;
}

static int add(scn_merge *m, const char *name, char *text, char *err, size_t errlen)
{
    int rc = scn__merge_add_text(m, name, text, strlen(text), err, errlen);
    free(text);
    return rc;
}

static void add_ok(scn_merge *m, const char *name, char *text)
{
    char err[1024] = "";
    cr_assert_eq(add(m, name, text, err, sizeof err), 0, "%s: %s", name, err);
}

static void finish_err(scn_merge *m, const char *want)
{
    char err[1024] = "";
    cr_assert_eq(scn__merge_finish(m, err, sizeof err), SCN_ERR_INPUT, "no error, wanted %s", want);
    cr_assert(strstr(err, want), "\"%s\" lacks \"%s\"", err, want);
}

static void finish_ok(scn_merge *m)
{
    char err[1024] = "";
    cr_assert_eq(scn__merge_finish(m, err, sizeof err), 0, "%s", err);
}

#define H1 "00000000000000a1"
#define H2 "00000000000000b2"
#define H3 "00000000000000c3"
#define H4 "00000000000000d4"

Test(merge, two_shards_in_seed_order)
{
    scn_merge *m = scn__merge_new();
    scn_report_meta meta;
    int nshards;

    /* Given in reverse, each in the order its runs ended. */
    add_ok(m, "s1.json", json_report(1, 2, 1, 4, "4:pass:" H4 " 2:fail:" H2));
    add_ok(m, "s0.json", json_report(0, 2, 1, 4, "3:pass:" H3 " 1:pass:" H1));
    finish_ok(m);
    cr_assert_eq(scn__merge_count(m), 4);
    for (size_t i = 0; i < 4; i++) {
        const scn_merged_run *r = scn__merge_get(m, i);
        cr_assert_eq(r->seed, i + 1);
        cr_assert_str_eq(r->file, "a.yaml");
        cr_assert_str_eq(r->scenario, "a");
        cr_assert(r->has_trace);
        cr_assert_eq(r->trace, 0xa1 + 0x11 * i);
        cr_assert_eq(r->verdict, i == 1 ? SCN_VERDICT_FAIL : SCN_VERDICT_PASS);
        cr_assert_str_eq(r->source, i % 2 ? "s1.json" : "s0.json");
    }
    cr_assert_str_eq(scn__merge_get(m, 1)->message, "it broke");
    cr_assert_str_eq(scn__merge_get(m, 1)->replay,
                     "scenario replay a.yaml --seed 2 --trace trace.jsonl");
    cr_assert_null(scn__merge_get(m, 4));
    scn__merge_meta(m, &meta, &nshards);
    cr_assert_eq(nshards, 2);
    cr_assert_str_eq(meta.command, "explore");
    cr_assert_eq(meta.nfiles, 1);
    cr_assert_str_eq(meta.files[0], "a.yaml");
    cr_assert(meta.seeds_given);
    cr_assert_eq(meta.seed_first, 1);
    cr_assert_eq(meta.seed_last, 4);
    cr_assert_eq(meta.shard_index, 0);
    cr_assert_eq(meta.shard_count, 1);
    cr_assert_eq(scn__merge_reports(m), 2);
    scn__merge_free(m);
    scn__merge_free(NULL);
}

Test(merge, missing_shards_are_named)
{
    scn_merge *m = scn__merge_new();

    add_ok(m, "s0.json", json_report(0, 4, 1, 8, "1:pass:" H1 " 5:pass:" H1));
    add_ok(m, "s2.json", json_report(2, 4, 1, 8, "3:pass:" H1 " 7:pass:" H1));
    finish_err(m, "2 of the 4 shards are missing (numbered from 0): 1 3;");
    scn__merge_free(m);
}

Test(merge, an_empty_shard_still_counts)
{
    scn_merge *m = scn__merge_new();

    /* Three seeds over four shards: shard 3 has nothing to run. */
    add_ok(m, "s0.json", json_report(0, 4, 1, 3, "1:pass:" H1));
    add_ok(m, "s1.json", json_report(1, 4, 1, 3, "2:pass:" H2));
    add_ok(m, "s2.json", json_report(2, 4, 1, 3, "3:pass:" H3));
    add_ok(m, "s3.json", json_report(3, 4, 1, 3, ""));
    finish_ok(m);
    cr_assert_eq(scn__merge_count(m), 3);
    scn__merge_free(m);
}

Test(merge, overlapping_shards_must_agree)
{
    scn_merge *m = scn__merge_new();

    add_ok(m, "s0.json", json_report(0, 2, 1, 2, "1:pass:" H1));
    add_ok(m, "s1.json", json_report(1, 2, 1, 2, "2:pass:" H2));
    add_ok(m, "again.json", json_report(1, 2, 1, 2, "2:fail:" H2));
    finish_err(m, "seed 2 of a.yaml: \"pass\" in s1.json but \"fail\" in again.json: the reports "
                  "disagree");
    scn__merge_free(m);

    m = scn__merge_new();
    add_ok(m, "s0.json", json_report(0, 2, 1, 2, "1:pass:" H1));
    add_ok(m, "s1.json", json_report(1, 2, 1, 2, "2:pass:" H2));
    add_ok(m, "again.json", json_report(1, 2, 1, 2, "2:pass:" H3));
    finish_err(m, "trace 00000000000000b2 in s1.json but 00000000000000c3 in again.json");
    scn__merge_free(m);

    /* The same runs twice (a rerun shard, the same report given twice): one each. */
    m = scn__merge_new();
    add_ok(m, "s0.json", json_report(0, 2, 1, 2, "1:pass:null"));
    add_ok(m, "s1.json", json_report(1, 2, 1, 2, "2:fail:" H2));
    add_ok(m, "s1-again.json", json_report(1, 2, 1, 2, "2:fail:" H2));
    add_ok(m, "s0-again.json", json_report(0, 2, 1, 2, "1:pass:" H1));
    finish_ok(m);
    cr_assert_eq(scn__merge_count(m), 2);
    cr_assert(scn__merge_get(m, 0)->has_trace, "the trace one report had was kept");
    cr_assert_eq(scn__merge_get(m, 0)->trace, 0xa1);
    scn__merge_free(m);
}

Test(merge, other_campaigns_and_wrong_owners)
{
    scn_merge *m = scn__merge_new();

    add_ok(m, "s0.json", json_report(0, 2, 1, 4, "1:pass:" H1));
    add_ok(m, "s1.json", json_report(1, 2, 1, 6, "2:pass:" H1));
    finish_err(m, "s1.json is shard 1/2 of `explore a.yaml --seeds 1..6`, but s0.json is shard "
                  "0/2 of `explore a.yaml --seeds 1..4`: not the same campaign");
    scn__merge_free(m);

    m = scn__merge_new();
    add_ok(m, "s0.json", json_report(0, 2, 1, 4, "1:pass:" H1));
    add_ok(m, "s1.json", json_report(0, 3, 1, 4, "2:pass:" H1));
    finish_err(m, "not the same campaign");
    scn__merge_free(m);

    m = scn__merge_new();
    add_ok(m, "s0.json", json_report(0, 2, 1, 4, "1:pass:" H1 " 2:pass:" H2));
    add_ok(m, "s1.json", json_report(1, 2, 1, 4, "4:pass:" H1));
    finish_err(m, "s0.json: seed 2 of a.yaml belongs to shard 1/2, not to shard 0/2");
    scn__merge_free(m);

    m = scn__merge_new();
    add_ok(m, "s0.json", json_report(0, 1, 1, 4, "9:pass:" H1));
    finish_err(m, "s0.json: seed 9 of a.yaml is outside the campaign's seeds 1..4");
    scn__merge_free(m);
}

static void bad_text(const char *text, const char *want)
{
    scn_merge *m = scn__merge_new();
    char err[1024] = "";

    cr_assert_eq(scn__merge_add_text(m, "bad.rep", text, strlen(text), err, sizeof err),
                 SCN_ERR_INPUT, "accepted: %s", text);
    cr_assert(strstr(err, "bad.rep: "), "the message does not name the file: %s", err);
    cr_assert(strstr(err, want), "\"%s\" lacks \"%s\" (for %s)", err, want, text);
    scn__merge_free(m);
}

Test(merge, bad_json_reports)
{
    bad_text("", "empty");
    bad_text("hello", "neither a JSON nor a JUnit XML report");
    bad_text("{\"report\": \"scenario\", ", "line 1: ");
    bad_text("{\"report\": \"other\", \"version\": 1}", "not a scenario report");
    bad_text("{\"report\": \"scenario\", \"version\": 2}", "reads version 1");
    bad_text("{\"report\": \"scenario\", \"version\": 1, \"files\": [], \"results\": []}",
             "needs \"command\"");
    bad_text("{\"report\": \"scenario\", \"version\": 1, \"command\": \"run\", \"files\": [], "
             "\"seeds\": null, \"shard\": {\"index\": 0, \"count\": 1}, \"results\": "
             "[{\"file\": \"a\", \"seed\": 1, \"verdict\": \"pass\"}]}",
             "its summary does not count the 1 results");
    bad_text("{\"report\": \"scenario\", \"version\": 1, \"command\": \"run\", \"files\": [], "
             "\"seeds\": null, \"shard\": {\"index\": 2, \"count\": 2}, \"results\": [], "
             "\"summary\": {\"runs\": 0}}",
             "0 <= K < N");
    bad_text("{\"report\": \"scenario\", \"version\": 1, \"command\": \"run\", \"files\": [], "
             "\"seeds\": {\"first\": 5, \"last\": 4}, \"shard\": {\"index\": 0, \"count\": 1}, "
             "\"results\": [], \"summary\": {\"runs\": 0}}",
             "N <= M");
    bad_text(
        "{\"report\": \"scenario\", \"version\": 1, \"command\": \"run\", \"files\": [], "
        "\"seeds\": null, \"shard\": {\"index\": 0, \"count\": 1}, \"results\": "
        "[{\"file\": \"a\", \"seed\": 1, \"verdict\": \"maybe\"}], \"summary\": {\"runs\": 1}}",
        "results[0]: \"verdict\"");
    bad_text(
        "{\"report\": \"scenario\", \"version\": 1, \"command\": \"run\", \"files\": [], "
        "\"seeds\": null, \"shard\": {\"index\": 0, \"count\": 1}, \"results\": "
        "[{\"file\": \"a\", \"seed\": -1, \"verdict\": \"pass\"}], \"summary\": {\"runs\": 1}}",
        "results[0]: no \"seed\"");
    bad_text("{\"report\": \"scenario\", \"version\": 1, \"command\": \"run\", \"files\": [], "
             "\"seeds\": null, \"shard\": {\"index\": 0, \"count\": 1}, \"results\": "
             "[{\"file\": \"a\", \"seed\": 1, \"verdict\": \"pass\", \"trace\": \"xyz\"}], "
             "\"summary\": {\"runs\": 1}}",
             "results[0]: \"trace\"");
}

Test(merge, bad_junit_reports)
{
    bad_text("<html><body/></html>", "not a JUnit report");
    bad_text("<testsuites><testsuite>", "ends inside <testsuite>");
    bad_text("<testsuites></testsuite>", "</testsuite> closes <testsuites>");
    bad_text("<testsuites><testcase name=\"x\" classname=\"a\"/></testsuites>",
             "testcase \"x\": no \"seed=N\"");
    bad_text("<testsuites><testcase name=\"x seed=1\"/></testsuites>", "no classname");
    bad_text("<testsuites><testcase name=\"x seed=1\" classname=\"a\" time=\"soon\"/></testsuites>",
             "line 1: <testcase> time=\"soon\"");
    bad_text("<testsuites>\n<testcase name=\"a &nbsp; seed=1\"/></testsuites>",
             "line 2: an unknown entity");
    bad_text("<testsuites name=oops></testsuites>", "attribute name is not quoted");
    bad_text("<testsuites><properties><property name=\"shard\" value=\"4/4\"/></properties>"
             "</testsuites>",
             "property shard=\"4/4\"");
    bad_text("<testsuites/><testsuites/>", "a second root element");
    bad_text("<testsuites>x</testsuites>oops", "text outside");
}

Test(merge, junit_reports)
{
    const char *xml =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<!-- written by hand -->\n"
        "<testsuites name=\"scenarios\" tests=\"3\">\n"
        "  <testsuite name='scenarios'>\n"
        "    <properties>\n"
        "      <property name=\"command\" value=\"run\"/>\n"
        "      <property name=\"shard\" value=\"1/2\"/>\n"
        "      <property name=\"file\" value=\"x.yaml\"/>\n"
        "      <property name=\"file\" value=\"y.yaml\"/>\n"
        "      <property name=\"file\" value=\"z &amp; w.yaml\"/>\n"
        "      <property name=\"owner\" value=\"someone else's\"/>\n"
        "    </properties>\n"
        "    <testcase name=\"why seed=4\" classname=\"y.yaml\" time=\"0.250\">\n"
        "      <failure message=\"found &quot;2&quot; &lt; 3&#10;and more\" "
        "type=\"failure\"><![CDATA[<details>]]></failure>\n"
        "      <system-out>scenario replay y.yaml --seed 4 --trace trace.jsonl\n"
        "second line</system-out>\n"
        "    </testcase>\n"
        "    <testcase name=\"other shard seed=1\" classname=\"x.yaml\"><skipped/></testcase>\n"
        "  </testsuite>\n"
        "</testsuites>\n";
    const char *other = "<testsuites><testsuite name=\"s\"><properties>"
                        "<property name=\"command\" value=\"run\"/>"
                        "<property name=\"shard\" value=\"0/2\"/>"
                        "<property name=\"file\" value=\"x.yaml\"/>"
                        "<property name=\"file\" value=\"y.yaml\"/>"
                        "<property name=\"file\" value=\"z &amp; w.yaml\"/></properties>"
                        "<testcase name=\"zed seed=9\" classname=\"z &amp; w.yaml\">"
                        "<error message=\"no server\"/></testcase>"
                        "<testcase name=\"ex seed=2\" classname=\"x.yaml\" time=\"1e-3\"/>"
                        "</testsuite></testsuites>";
    scn_merge *m = scn__merge_new();
    char err[512];
    const scn_merged_run *r;
    scn_report_meta meta;

    cr_assert_eq(scn__merge_add_text(m, "b.xml", xml, strlen(xml), err, sizeof err), 0, "%s", err);
    cr_assert_eq(scn__merge_add_text(m, "a.xml", other, strlen(other), err, sizeof err), 0, "%s",
                 err);
    finish_ok(m);
    cr_assert_eq(scn__merge_count(m), 3, "the skipped case is not a run");
    /* In the campaign's file order: x, y, then "z & w". */
    r = scn__merge_get(m, 0);
    cr_assert_str_eq(r->file, "x.yaml");
    cr_assert_eq(r->seed, 2);
    cr_assert_eq(r->verdict, SCN_VERDICT_PASS);
    cr_assert_float_eq(r->time_s, 0.001, 1e-9);
    cr_assert_not(r->has_trace);
    r = scn__merge_get(m, 1);
    cr_assert_str_eq(r->scenario, "why");
    cr_assert_eq(r->seed, 4);
    cr_assert_eq(r->verdict, SCN_VERDICT_FAIL);
    cr_assert_str_eq(r->message, "found \"2\" < 3\nand more");
    cr_assert_str_eq(r->replay, "scenario replay y.yaml --seed 4 --trace trace.jsonl");
    cr_assert_float_eq(r->time_s, 0.25, 1e-9);
    r = scn__merge_get(m, 2);
    cr_assert_str_eq(r->file, "z & w.yaml");
    cr_assert_eq(r->verdict, SCN_VERDICT_ERROR);
    cr_assert_str_eq(r->message, "no server");
    cr_assert_str_eq(r->replay, "");
    scn__merge_meta(m, &meta, NULL);
    cr_assert_str_eq(meta.command, "run");
    cr_assert_eq(meta.nfiles, 3);
    cr_assert_not(meta.seeds_given);
    scn__merge_free(m);
}

Test(merge, a_run_owned_by_file_index)
{
    const char *xml = "<testsuites><testsuite name=\"s\"><properties>"
                      "<property name=\"command\" value=\"run\"/>"
                      "<property name=\"shard\" value=\"0/1\"/>"
                      "<property name=\"file\" value=\"x.yaml\"/>"
                      "<property name=\"file\" value=\"y.yaml\"/></properties>"
                      "<testcase name=\"why seed=1\" classname=\"y.yaml\"/>"
                      "<testcase name=\"new seed=1\" classname=\"new.yaml\"/>"
                      "</testsuite></testsuites>";
    scn_merge *m = scn__merge_new();
    char err[512];

    cr_assert_eq(scn__merge_add_text(m, "a.xml", xml, strlen(xml), err, sizeof err), 0, "%s", err);
    finish_err(m, "a.xml: a run of new.yaml, which is not among the campaign's files");
    scn__merge_free(m);

    /* `run x.yaml y.yaml --shard 0/2` runs x.yaml only. */
    const char *s0 = "<testsuites><testsuite name=\"s\"><properties>"
                     "<property name=\"command\" value=\"run\"/>"
                     "<property name=\"shard\" value=\"0/2\"/>"
                     "<property name=\"file\" value=\"x.yaml\"/>"
                     "<property name=\"file\" value=\"y.yaml\"/></properties>"
                     "<testcase name=\"why seed=1\" classname=\"y.yaml\"/>"
                     "</testsuite></testsuites>";
    const char *s1 = "<testsuites><testsuite name=\"s\"><properties>"
                     "<property name=\"command\" value=\"run\"/>"
                     "<property name=\"shard\" value=\"1/2\"/>"
                     "<property name=\"file\" value=\"x.yaml\"/>"
                     "<property name=\"file\" value=\"y.yaml\"/></properties>"
                     "</testsuite></testsuites>";
    m = scn__merge_new();
    cr_assert_eq(scn__merge_add_text(m, "s0.xml", s0, strlen(s0), err, sizeof err), 0, "%s", err);
    cr_assert_eq(scn__merge_add_text(m, "s1.xml", s1, strlen(s1), err, sizeof err), 0, "%s", err);
    finish_err(m, "s0.xml: seed 1 of y.yaml belongs to shard 1/2, not to shard 0/2");
    scn__merge_free(m);
}

Test(merge, reports_that_do_not_say_their_shard)
{
    /* Another tool's JUnit: no properties; merged by file name and seed. */
    const char *a = "<testsuite name=\"t\"><testcase name=\"b seed=3\" classname=\"b.yaml\"/>"
                    "<testcase name=\"a seed=2\" classname=\"a.yaml\"/></testsuite>";
    const char *b = "<testsuite name=\"t\"><testcase name=\"a seed=1\" classname=\"a.yaml\">"
                    "<failure message=\"m\"/></testcase></testsuite>";
    scn_merge *m = scn__merge_new();
    char err[512];
    scn_report_meta meta;
    int nshards = -1;

    cr_assert_eq(scn__merge_add_text(m, "a.xml", a, strlen(a), err, sizeof err), 0, "%s", err);
    cr_assert_eq(scn__merge_add_text(m, "b.xml", b, strlen(b), err, sizeof err), 0, "%s", err);
    finish_ok(m);
    cr_assert_eq(scn__merge_count(m), 3);
    cr_assert_str_eq(scn__merge_get(m, 0)->file, "a.yaml");
    cr_assert_eq(scn__merge_get(m, 0)->seed, 1);
    cr_assert_eq(scn__merge_get(m, 1)->seed, 2);
    cr_assert_str_eq(scn__merge_get(m, 2)->file, "b.yaml");
    scn__merge_meta(m, &meta, &nshards);
    cr_assert_eq(nshards, 0);
    cr_assert_eq(meta.nfiles, 2);
    cr_assert_str_eq(meta.files[0], "a.yaml");
    cr_assert_str_eq(meta.files[1], "b.yaml");
    scn__merge_free(m);
}

Test(merge, a_bad_report_changes_nothing)
{
    scn_merge *m = scn__merge_new();
    char err[512];
    char *broken = json_report(1, 2, 1, 2, "2:pass:" H2);

    add_ok(m, "s0.json", json_report(0, 2, 1, 2, "1:pass:" H1));
    strstr(broken, "\"summary\"")[0] = '\0'; /* cut short */
    cr_assert_eq(add(m, "s1.json", broken, err, sizeof err), SCN_ERR_INPUT);
    cr_assert_eq(scn__merge_reports(m), 1);
    add_ok(m, "s1.json", json_report(1, 2, 1, 2, "2:pass:" H2));
    finish_ok(m);
    cr_assert_eq(scn__merge_count(m), 2);
    cr_assert_eq(scn__merge_add_text(m, "late.json", "{}", 2, err, sizeof err), SCN_ERR_INPUT,
                 "nothing is added once finished");
    scn__merge_free(m);

    m = scn__merge_new();
    cr_assert_eq(scn__merge_add_file(m, "/nonexistent/report.json", err, sizeof err), SCN_ERR_IO);
    cr_assert(strstr(err, "/nonexistent/report.json: cannot read it"), "%s", err);
    finish_err(m, "no reports to merge");
    scn__merge_free(m);
}

/* The writer's report (report.h) read back by the merge, all fields. */
Test(merge, written_reports_read_back)
{
    char dir[] = "/tmp/scn-merge-XXXXXX", path[80];
    const char *files[] = {"a b.yaml"};
    scn_report_meta meta = {.command = "explore",
                            .files = files,
                            .nfiles = 1,
                            .seeds_given = true,
                            .seed_first = 10,
                            .seed_last = 11,
                            .shard_index = 0,
                            .shard_count = 1};
    scn_jreport *r;
    int rc;
    char err[512];
    scn_merge *m = scn__merge_new();
    const scn_merged_run *x;

    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/r.json", dir);
    r = scn__jreport_open(path, &meta, &rc);
    cr_assert_not_null(r, "%d", rc);
    cr_assert_eq(access(path, F_OK), -1, "the report appears only when complete");
    cr_assert_eq(scn__jreport_add(r, &(scn_report_entry){.file = "a b.yaml",
                                                         .scenario = "ab",
                                                         .seed = 11,
                                                         .verdict = SCN_VERDICT_FAIL,
                                                         .message = "said \"no\"\n\xff",
                                                         .has_trace = true,
                                                         .trace = 0x0123456789abcdefULL,
                                                         .time_s = 0.125,
                                                         .replay = "scenario replay 'a b.yaml'"}),
                 0);
    cr_assert_eq(
        scn__jreport_add(
            r, &(scn_report_entry){.file = "a b.yaml", .seed = 10, .verdict = SCN_VERDICT_ERROR}),
        0);
    cr_assert_eq(scn__jreport_add(r, &(scn_report_entry){.seed = 1}), SCN_ERR_INPUT);
    cr_assert_eq(scn__jreport_close(r), 0);
    cr_assert_eq(scn__merge_add_file(m, path, err, sizeof err), 0, "%s", err);
    finish_ok(m);
    cr_assert_eq(scn__merge_count(m), 2);
    x = scn__merge_get(m, 0);
    cr_assert_eq(x->seed, 10);
    cr_assert_eq(x->verdict, SCN_VERDICT_ERROR);
    cr_assert_str_eq(x->scenario, "a b.yaml", "no name: the file");
    cr_assert_not(x->has_trace);
    x = scn__merge_get(m, 1);
    cr_assert_eq(x->verdict, SCN_VERDICT_FAIL);
    cr_assert_str_eq(x->message, "said \"no\"\n?", "a stray byte becomes '?'");
    cr_assert(x->has_trace);
    cr_assert_eq(x->trace, 0x0123456789abcdefULL);
    cr_assert_float_eq(x->time_s, 0.125, 1e-9);
    cr_assert_str_eq(x->replay, "scenario replay 'a b.yaml'");
    scn__merge_free(m);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(rmdir(dir), 0, "a temporary file was left behind");

    snprintf(path, sizeof path, "%s/missing/r.json", dir);
    cr_assert_null(scn__jreport_open(path, &meta, &rc));
    cr_assert_eq(rc, SCN_ERR_IO);
}

/* JUnit properties are written in each suite, and read back by the merge. */
Test(merge, junit_properties_round_trip)
{
    scn_junit *j = scn__junit_new(NULL);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    scn_merge *m = scn__merge_new();
    char err[512];
    scn_report_meta meta;
    int nshards;

    cr_assert_eq(scn__junit_property(j, "command", "explore"), 0);
    cr_assert_eq(scn__junit_property(j, "shard", "0/1"), 0);
    cr_assert_eq(scn__junit_property(j, "seeds", "5..6"), 0);
    cr_assert_eq(scn__junit_property(j, "file", "q\"<.yaml"), 0);
    cr_assert_eq(scn__junit_property(j, NULL, "x"), SCN_ERR_INPUT);
    for (int s = 6; s >= 5; s--) {
        char name[32];
        snprintf(name, sizeof name, "q seed=%d", s);
        cr_assert_eq(scn__junit_add(j, "scenarios",
                                    &(scn_junit_case){.name = name, .classname = "q\"<.yaml"}),
                     0);
    }
    cr_assert_eq(scn__junit_write(j, f), 0);
    fclose(f);
    cr_assert(strstr(text, "<property name=\"file\" value=\"q&quot;&lt;.yaml\"/>"), "%s", text);
    cr_assert_eq(scn__merge_add_text(m, "q.xml", text, size, err, sizeof err), 0, "%s", err);
    finish_ok(m);
    scn__merge_meta(m, &meta, &nshards);
    cr_assert_eq(nshards, 1);
    cr_assert(meta.seeds_given);
    cr_assert_eq(meta.seed_first, 5);
    cr_assert_str_eq(meta.files[0], "q\"<.yaml");
    cr_assert_eq(scn__merge_get(m, 0)->seed, 5);
    free(text);
    scn__merge_free(m);
    scn__junit_free(j);
}
