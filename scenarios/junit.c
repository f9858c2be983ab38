/*
 * junit.c - JUnit XML reports (format in junit.h).
 *
 * Cases are kept as jansson values (an array of suites, each with its array
 * of cases), which copies the strings and keeps the order for free. The
 * strings are stored unchecked (_nocheck): the text of a failure may hold
 * any bytes, and the writer, not jansson, decides what to do with them.
 */
#include "junit.h"

#include "scn/scenario.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct scn_junit {
    json_t *name;
    json_t *suites; /* [{name, cases: [...]}] */
    json_t *index;  /* suite name -> position in suites */
    size_t n_cases;
};

static const char *const status_names[] = {"passed", "failed", "error", "skipped"};

scn_junit *scn__junit_new(const char *name)
{
    scn_junit *j = calloc(1, sizeof *j);

    if (!j)
        return NULL;
    j->name = json_string_nocheck(name ? name : "scenario");
    j->suites = json_array();
    j->index = json_object();
    if (!j->name || !j->suites || !j->index) {
        scn__junit_free(j);
        return NULL;
    }
    return j;
}

void scn__junit_free(scn_junit *j)
{
    if (!j)
        return;
    json_decref(j->name);
    json_decref(j->suites);
    json_decref(j->index);
    free(j);
}

static json_t *suite_cases(scn_junit *j, const char *suite)
{
    json_t *pos = json_object_get(j->index, suite), *s;

    if (pos)
        return json_object_get(json_array_get(j->suites, (size_t)json_integer_value(pos)), "cases");
    s = json_pack("{s:o, s:[]}", "name", json_string_nocheck(suite), "cases");
    if (!s)
        return NULL;
    if (json_object_set_new_nocheck(j->index, suite,
                                    json_integer((json_int_t)json_array_size(j->suites))) != 0 ||
        json_array_append_new(j->suites, s) != 0)
        return NULL;
    return json_object_get(s, "cases");
}

static int set_opt(json_t *obj, const char *key, const char *value)
{
    return value ? json_object_set_new(obj, key, json_string_nocheck(value)) : 0;
}

int scn__junit_add(scn_junit *j, const char *suite, const scn_junit_case *c)
{
    json_t *cases, *tc;
    double t;

    if (!j || !suite || !c || !c->name || (unsigned)c->status > SCN_JUNIT_SKIPPED ||
        j->n_cases >= SCN_JUNIT_MAX_CASES)
        return SCN_ERR_INPUT;
    cases = suite_cases(j, suite);
    if (!cases)
        return SCN_ERR_NOMEM;
    t = isfinite(c->time_s) && c->time_s > 0 ? c->time_s : 0;
    tc = json_pack("{s:o, s:o, s:f, s:i}", "name", json_string_nocheck(c->name), "classname",
                   json_string_nocheck(c->classname ? c->classname : suite), "time", t, "status",
                   (int)c->status);
    if (!tc || set_opt(tc, "message", c->message) != 0 || set_opt(tc, "details", c->details) != 0 ||
        set_opt(tc, "out", c->system_out) != 0 || json_array_append_new(cases, tc) != 0) {
        json_decref(tc);
        return SCN_ERR_NOMEM;
    }
    j->n_cases++;
    return 0;
}

/* ---- XML ---- */

/* The length of the valid UTF-8 sequence at s (n bytes left) that XML 1.0
 * may hold, or 0. */
static size_t utf8_char(const unsigned char *s, size_t n)
{
    uint32_t cp;
    size_t len;

    if (s[0] < 0x80)
        return s[0] >= 0x20 || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' ? 1 : 0;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        len = 2;
        cp = s[0] & 0x1F;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        len = 3;
        cp = s[0] & 0x0F;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF)
        return 0;
    return len;
}

/* s escaped for element text, or for a double-quoted attribute. */
static void put_escaped(FILE *f, const char *text, int attr)
{
    const unsigned char *s = (const unsigned char *)(text ? text : "");
    size_t n = strlen((const char *)s);

    while (n > 0) {
        size_t len = utf8_char(s, n);
        if (len == 0) {
            fputs("\xEF\xBF\xBD", f); /* U+FFFD for what XML cannot hold */
            len = 1;
        } else if (*s == '&') {
            fputs("&amp;", f);
        } else if (*s == '<') {
            fputs("&lt;", f);
        } else if (*s == '>') {
            fputs("&gt;", f);
        } else if (*s == '"' && attr) {
            fputs("&quot;", f);
        } else if (attr && (*s == '\n' || *s == '\r' || *s == '\t')) {
            fprintf(f, "&#%d;", *s); /* attribute normalisation would make them spaces */
        } else {
            fwrite(s, 1, len, f);
        }
        s += len;
        n -= len;
    }
}

typedef struct counts {
    size_t tests, failures, errors, skipped;
    double time;
} counts;

static void count_cases(const json_t *cases, counts *c)
{
    size_t i;
    json_t *tc;

    json_array_foreach(cases, i, tc)
    {
        json_int_t st = json_integer_value(json_object_get(tc, "status"));
        c->tests++;
        c->failures += st == SCN_JUNIT_FAILED;
        c->errors += st == SCN_JUNIT_ERROR;
        c->skipped += st == SCN_JUNIT_SKIPPED;
        c->time += json_real_value(json_object_get(tc, "time"));
    }
}

static void put_counts(FILE *f, const counts *c)
{
    fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\"",
            c->tests, c->failures, c->errors, c->skipped, c->time);
}

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static void put_case(FILE *f, const json_t *tc)
{
    json_int_t st = json_integer_value(json_object_get(tc, "status"));
    const char *message = str(tc, "message"), *details = str(tc, "details");
    const char *out = str(tc, "out");

    fputs("    <testcase name=\"", f);
    put_escaped(f, str(tc, "name"), 1);
    fputs("\" classname=\"", f);
    put_escaped(f, str(tc, "classname"), 1);
    fprintf(f, "\" time=\"%.3f\"", json_real_value(json_object_get(tc, "time")));
    if (st == SCN_JUNIT_PASSED && !out) {
        fputs("/>\n", f);
        return;
    }
    fputs(">\n", f);
    if (st == SCN_JUNIT_SKIPPED) {
        fputs("      <skipped", f);
        if (message) {
            fputs(" message=\"", f);
            put_escaped(f, message, 1);
            fputs("\"", f);
        }
        fputs("/>\n", f);
    } else if (st != SCN_JUNIT_PASSED) {
        const char *elem = st == SCN_JUNIT_FAILED ? "failure" : "error";
        fprintf(f, "      <%s message=\"", elem);
        put_escaped(f, message ? message : status_names[st], 1);
        fprintf(f, "\" type=\"%s\">", elem);
        put_escaped(f, details ? details : message, 0);
        fprintf(f, "</%s>\n", elem);
    }
    if (out) {
        fputs("      <system-out>", f);
        put_escaped(f, out, 0);
        fputs("</system-out>\n", f);
    }
    fputs("    </testcase>\n", f);
}

int scn__junit_write(const scn_junit *j, FILE *f)
{
    counts all = {0};
    size_t i, k;
    json_t *s, *tc;

    if (!j || !f)
        return SCN_ERR_IO;
    json_array_foreach(j->suites, i, s)
    {
        count_cases(json_object_get(s, "cases"), &all);
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"", f);
    put_escaped(f, json_string_value(j->name), 1);
    fputs("\"", f);
    put_counts(f, &all);
    fputs(">\n", f);
    json_array_foreach(j->suites, i, s)
    {
        counts c = {0};
        count_cases(json_object_get(s, "cases"), &c);
        fputs("  <testsuite name=\"", f);
        put_escaped(f, str(s, "name"), 1);
        fputs("\"", f);
        put_counts(f, &c);
        fputs(">\n", f);
        json_array_foreach(json_object_get(s, "cases"), k, tc)
        {
            put_case(f, tc);
        }
        fputs("  </testsuite>\n", f);
    }
    fputs("</testsuites>\n", f);
    return fflush(f) == 0 && !ferror(f) ? 0 : SCN_ERR_IO;
}

int scn__junit_save(const scn_junit *j, const char *path)
{
    char *tmp = NULL;
    FILE *f = NULL;
    int fd, rc = SCN_ERR_IO;

    if (!j || !path || asprintf(&tmp, "%s.XXXXXX", path) < 0)
        return SCN_ERR_IO;
    fd = mkstemp(tmp);
    if (fd < 0)
        goto out;
    f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        goto out;
    }
    rc = scn__junit_write(j, f);
    if (fclose(f) != 0)
        rc = SCN_ERR_IO;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = SCN_ERR_IO;
    if (rc != 0)
        unlink(tmp);
out:
    free(tmp);
    return rc;
}
