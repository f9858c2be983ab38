/*
 * junit.c - JUnit XML reports (format in junit.h).
 *
 * A report holds, per suite, its counts and its cases already written as
 * XML to an anonymous temporary file (tmpfile()): a campaign of a million
 * seeds keeps its memory flat, and writing the report copies those files
 * between the suites' opening and closing tags, whose counts are known by
 * then. Properties (name/value pairs, e.g. the shard) are few and kept in
 * memory.
 */
#include "junit.h"

#include "scn/scenario.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SUITES 4096
#define MAX_PROPERTIES 1024

typedef struct counts {
    size_t tests, failures, errors, skipped;
    double time;
} counts;

typedef struct suite {
    char *name;
    counts c;
    FILE *cases; /* the <testcase> elements, written as they come */
} suite;

struct scn_junit {
    char *name;
    suite *suites;
    size_t n_suites;
    char **props; /* name, value, name, value, ... */
    size_t n_props;
    size_t n_cases;
};

static const char *const status_names[] = {"passed", "failed", "error", "skipped"};

static void put_case(FILE *f, const char *suite_name, const scn_junit_case *c, double t);
static void put_escaped(FILE *f, const char *text, int attr);

scn_junit *scn__junit_new(const char *name)
{
    scn_junit *j = calloc(1, sizeof *j);

    if (!j)
        return NULL;
    j->name = strdup(name ? name : "scenario");
    if (!j->name) {
        free(j);
        return NULL;
    }
    return j;
}

void scn__junit_free(scn_junit *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->n_suites; i++) {
        free(j->suites[i].name);
        if (j->suites[i].cases)
            fclose(j->suites[i].cases);
    }
    for (size_t i = 0; i < j->n_props; i++)
        free(j->props[i]);
    free(j->props);
    free(j->suites);
    free(j->name);
    free(j);
}

int scn__junit_property(scn_junit *j, const char *name, const char *value)
{
    char **p, *n, *v;

    if (!j || !name || !value || j->n_props / 2 >= MAX_PROPERTIES)
        return SCN_ERR_INPUT;
    p = realloc(j->props, (j->n_props + 2) * sizeof *p);
    if (!p)
        return SCN_ERR_NOMEM;
    j->props = p;
    n = strdup(name);
    v = strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        return SCN_ERR_NOMEM;
    }
    j->props[j->n_props++] = n;
    j->props[j->n_props++] = v;
    return 0;
}

static suite *find_suite(scn_junit *j, const char *name)
{
    suite *s;

    /* Reports have one suite or a few: a linear search from the last. */
    for (size_t i = j->n_suites; i-- > 0;)
        if (strcmp(j->suites[i].name, name) == 0)
            return &j->suites[i];
    if (j->n_suites >= MAX_SUITES)
        return NULL;
    s = realloc(j->suites, (j->n_suites + 1) * sizeof *s);
    if (!s)
        return NULL;
    j->suites = s;
    s = &j->suites[j->n_suites];
    *s = (suite){.name = strdup(name), .cases = tmpfile()};
    if (!s->name || !s->cases) {
        free(s->name);
        if (s->cases)
            fclose(s->cases);
        return NULL;
    }
    j->n_suites++;
    return s;
}

int scn__junit_add(scn_junit *j, const char *suite_name, const scn_junit_case *c)
{
    suite *s;
    double t;

    if (!j || !suite_name || !c || !c->name || (unsigned)c->status > SCN_JUNIT_SKIPPED ||
        j->n_cases >= SCN_JUNIT_MAX_CASES)
        return SCN_ERR_INPUT;
    s = find_suite(j, suite_name);
    if (!s)
        return j->n_suites >= MAX_SUITES ? SCN_ERR_INPUT : SCN_ERR_NOMEM;
    t = isfinite(c->time_s) && c->time_s > 0 ? c->time_s : 0;
    put_case(s->cases, suite_name, c, t);
    if (ferror(s->cases))
        return SCN_ERR_IO;
    s->c.tests++;
    s->c.failures += c->status == SCN_JUNIT_FAILED;
    s->c.errors += c->status == SCN_JUNIT_ERROR;
    s->c.skipped += c->status == SCN_JUNIT_SKIPPED;
    /* The time as written (3 decimals), so the counts add up to the cases. */
    s->c.time += round(t * 1000) / 1000;
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

static void put_counts(FILE *f, const counts *c)
{
    fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\"",
            c->tests, c->failures, c->errors, c->skipped, c->time);
}

static void put_case(FILE *f, const char *suite_name, const scn_junit_case *c, double t)
{
    scn_junit_status st = c->status;
    const char *message = c->message, *details = c->details, *out = c->system_out;

    fputs("    <testcase name=\"", f);
    put_escaped(f, c->name, 1);
    fputs("\" classname=\"", f);
    put_escaped(f, c->classname ? c->classname : suite_name, 1);
    fprintf(f, "\" time=\"%.3f\"", t);
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

static void put_properties(FILE *f, const scn_junit *j)
{
    if (!j->n_props)
        return;
    fputs("    <properties>\n", f);
    for (size_t i = 0; i + 1 < j->n_props; i += 2) {
        fputs("      <property name=\"", f);
        put_escaped(f, j->props[i], 1);
        fputs("\" value=\"", f);
        put_escaped(f, j->props[i + 1], 1);
        fputs("\"/>\n", f);
    }
    fputs("    </properties>\n", f);
}

int scn__copy_stream(FILE *from, FILE *to)
{
    char buf[8192];
    size_t n;

    if (fflush(from) != 0 || fseek(from, 0, SEEK_SET) != 0)
        return SCN_ERR_IO;
    while ((n = fread(buf, 1, sizeof buf, from)) > 0)
        if (fwrite(buf, 1, n, to) != n)
            return SCN_ERR_IO;
    if (ferror(from) || fseek(from, 0, SEEK_END) != 0)
        return SCN_ERR_IO;
    return 0;
}

int scn__junit_write(const scn_junit *j, FILE *f)
{
    counts all = {0};

    if (!j || !f)
        return SCN_ERR_IO;
    for (size_t i = 0; i < j->n_suites; i++) {
        const counts *c = &j->suites[i].c;
        all.tests += c->tests;
        all.failures += c->failures;
        all.errors += c->errors;
        all.skipped += c->skipped;
        all.time += c->time;
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"", f);
    put_escaped(f, j->name, 1);
    fputs("\"", f);
    put_counts(f, &all);
    fputs(">\n", f);
    for (size_t i = 0; i < j->n_suites; i++) {
        fputs("  <testsuite name=\"", f);
        put_escaped(f, j->suites[i].name, 1);
        fputs("\"", f);
        put_counts(f, &j->suites[i].c);
        fputs(">\n", f);
        put_properties(f, j);
        if (scn__copy_stream(j->suites[i].cases, f) != 0)
            return SCN_ERR_IO;
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
