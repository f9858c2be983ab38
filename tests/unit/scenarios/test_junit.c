/*
 * test_junit.c - the JUnit XML writer: structure, counts, escaping, saving.
 */
#include <criterion/criterion.h>
#include "junit.h"
#include "scn/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *render(const scn_junit *j)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);

    cr_assert_not_null(f);
    cr_assert_eq(scn__junit_write(j, f), 0);
    fclose(f);
    return text;
}

Test(junit, report_structure_and_counts)
{
    scn_junit *j = scn__junit_new(NULL);
    char *xml;

    cr_assert_not_null(j);
    cr_assert_eq(
        scn__junit_add(j, "rs.yaml",
                       &(scn_junit_case){.name = "converges seed=1",
                                         .classname = "rs.yaml",
                                         .time_s = 0.25,
                                         .system_out = "scenario replay rs.yaml --seed 1"}),
        0);
    cr_assert_eq(
        scn__junit_add(j, "rs.yaml",
                       &(scn_junit_case){
                           .name = "converges seed=2",
                           .classname = "rs.yaml",
                           .time_s = 0.5,
                           .status = SCN_JUNIT_FAILED,
                           .message = "expected count of Pod in default with app=web to "
                                      "be at most 3, found 4",
                           .details = "step 4 (wait) at rs.yaml:12",
                           .system_out = "scenario replay rs.yaml --seed 2 --trace t.jsonl",
                       }),
        0);
    cr_assert_eq(scn__junit_add(j, "bad.yaml",
                                &(scn_junit_case){.name = "bad",
                                                  .status = SCN_JUNIT_ERROR,
                                                  .message = "bad.yaml:3: steps[0]: unknown step"}),
                 0);
    cr_assert_eq(scn__junit_add(j, "rs.yaml",
                                &(scn_junit_case){.name = "other shard",
                                                  .time_s = -1,
                                                  .status = SCN_JUNIT_SKIPPED,
                                                  .message = "shard 1/2"}),
                 0);
    xml = render(j);
    cr_assert_str_eq(
        xml,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<testsuites name=\"scenario\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\" "
        "time=\"0.750\">\n"
        "  <testsuite name=\"rs.yaml\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\" "
        "time=\"0.750\">\n"
        "    <testcase name=\"converges seed=1\" classname=\"rs.yaml\" time=\"0.250\">\n"
        "      <system-out>scenario replay rs.yaml --seed 1</system-out>\n"
        "    </testcase>\n"
        "    <testcase name=\"converges seed=2\" classname=\"rs.yaml\" time=\"0.500\">\n"
        "      <failure message=\"expected count of Pod in default with app=web to be at most 3, "
        "found 4\" type=\"failure\">step 4 (wait) at rs.yaml:12</failure>\n"
        "      <system-out>scenario replay rs.yaml --seed 2 --trace t.jsonl</system-out>\n"
        "    </testcase>\n"
        "    <testcase name=\"other shard\" classname=\"rs.yaml\" time=\"0.000\">\n"
        "      <skipped message=\"shard 1/2\"/>\n"
        "    </testcase>\n"
        "  </testsuite>\n"
        "  <testsuite name=\"bad.yaml\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" "
        "time=\"0.000\">\n"
        "    <testcase name=\"bad\" classname=\"bad.yaml\" time=\"0.000\">\n"
        "      <error message=\"bad.yaml:3: steps[0]: unknown step\" type=\"error\">bad.yaml:3: "
        "steps[0]: unknown step</error>\n"
        "    </testcase>\n"
        "  </testsuite>\n"
        "</testsuites>\n");
    free(xml);
    scn__junit_free(j);
    scn__junit_free(NULL);
}

Test(junit, escaping)
{
    scn_junit *j = scn__junit_new("a&b");
    char *xml;

    cr_assert_eq(scn__junit_add(j, "s<1>",
                                &(scn_junit_case){.name = "\"q\" 'a' <b> & c",
                                                  .status = SCN_JUNIT_FAILED,
                                                  .message = "line1\nline2\t<x>",
                                                  .details = "found \"Running\" & <more>\n",
                                                  .system_out = "bad\x01"
                                                                "byte \xff and caf\xc3\xa9"}),
                 0);
    xml = render(j);
    cr_assert(strstr(xml, "<testsuites name=\"a&amp;b\""), "%s", xml);
    cr_assert(strstr(xml, "<testsuite name=\"s&lt;1&gt;\""), "%s", xml);
    cr_assert(strstr(xml, "<testcase name=\"&quot;q&quot; 'a' &lt;b&gt; &amp; c\" "
                          "classname=\"s&lt;1&gt;\""),
              "%s", xml);
    cr_assert(strstr(xml, "message=\"line1&#10;line2&#9;&lt;x&gt;\""), "%s", xml);
    cr_assert(strstr(xml, ">found \"Running\" &amp; &lt;more&gt;\n</failure>"), "%s", xml);
    /* a control character and a stray byte become U+FFFD; valid UTF-8 stays */
    cr_assert(strstr(xml, "<system-out>bad\xEF\xBF\xBD"
                          "byte \xEF\xBF\xBD and caf\xc3\xa9</system-out>"),
              "%s", xml);
    free(xml);
    scn__junit_free(j);
}

Test(junit, invalid_utf8_sequences)
{
    static const char *const bad[] = {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82",
                                      "\xef\xbf\xbe"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        scn_junit *j = scn__junit_new(NULL);
        char *xml;
        cr_assert_eq(scn__junit_add(j, "s", &(scn_junit_case){.name = bad[i]}), 0);
        xml = render(j);
        cr_assert(strstr(xml, "name=\"\xEF\xBF\xBD"), "case %zu: %s", i, xml);
        cr_assert_null(strstr(xml, bad[i]), "case %zu kept invalid bytes", i);
        free(xml);
        scn__junit_free(j);
    }
}

Test(junit, rejects_bad_cases)
{
    scn_junit *j = scn__junit_new(NULL);

    cr_assert_eq(scn__junit_add(j, "s", &(scn_junit_case){.name = NULL}), SCN_ERR_INPUT);
    cr_assert_eq(scn__junit_add(j, NULL, &(scn_junit_case){.name = "x"}), SCN_ERR_INPUT);
    cr_assert_eq(scn__junit_add(j, "s", &(scn_junit_case){.name = "x", .status = 9}),
                 SCN_ERR_INPUT);
    scn__junit_free(j);
}

Test(junit, save_replaces_the_file)
{
    char dir[] = "/tmp/scn-junit-XXXXXX", path[64], buf[4096];
    scn_junit *j = scn__junit_new(NULL);
    FILE *f;
    size_t n;

    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/report.xml", dir);
    f = fopen(path, "w");
    fputs("old contents that are longer than the report will be ...........", f);
    fclose(f);
    cr_assert_eq(scn__junit_add(j, "s", &(scn_junit_case){.name = "x", .time_s = 1}), 0);
    cr_assert_eq(scn__junit_save(j, path), 0);
    f = fopen(path, "r");
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    cr_assert(strncmp(buf, "<?xml", 5) == 0, "%s", buf);
    cr_assert(strstr(buf, "<testcase name=\"x\" classname=\"s\" time=\"1.000\"/>"), "%s", buf);
    cr_assert_null(strstr(buf, "old contents"));
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(rmdir(dir), 0, "a temporary file was left behind");
    snprintf(path, sizeof path, "%s/missing/report.xml", dir);
    cr_assert_eq(scn__junit_save(j, path), SCN_ERR_IO);
    scn__junit_free(j);
}
