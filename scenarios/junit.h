/*
 * junit.h - JUnit XML reports, the format CI systems read (Jenkins, GitLab,
 * GitHub Actions reporters, Bazel's test.xml).
 *
 * A report collects test cases (one per scenario run: a file and a seed)
 * into suites (one per scenario file, by default), then writes
 *   <testsuites name tests failures errors skipped time>
 *     <testsuite name tests failures errors skipped time>
 *       <properties><property name value/>...</properties>   (if any)
 *       <testcase name classname time>
 *         <failure message type="failure">details</failure>   (or <error>, <skipped>)
 *         <system-out>the replay command</system-out>
 * Suites and cases keep the order they were added in; counts and times are
 * summed. Text is escaped for XML 1.0: markup characters become entities,
 * characters XML cannot hold (control characters, invalid UTF-8) become
 * U+FFFD, and line breaks inside attributes are kept as &#10;.
 *
 * Memory stays flat however many cases are added: each case is written as
 * XML at once to a temporary file (tmpfile()) of its suite, which
 * scn__junit_write copies out.
 *
 * Ownership: scn__junit_add and scn__junit_property copy what they are
 * given. Threads: a report is not thread-safe; add from one thread (the
 * runner's).
 */
#ifndef SCN_JUNIT_H
#define SCN_JUNIT_H

#include <stdio.h>

#define SCN_JUNIT_MAX_CASES 10000000

typedef struct scn_junit scn_junit;

typedef enum scn_junit_status {
    SCN_JUNIT_PASSED = 0,
    SCN_JUNIT_FAILED,  /* a check failed (<failure>) */
    SCN_JUNIT_ERROR,   /* it could not run: bad input, setup (<error>) */
    SCN_JUNIT_SKIPPED, /* <skipped> */
} scn_junit_status;

typedef struct scn_junit_case {
    const char *name;      /* "replicaset-converges seed=7" */
    const char *classname; /* the scenario file, "scenarios/examples/rs.yaml" */
    double time_s;         /* wall-clock seconds; < 0 or NaN is written as 0 */
    scn_junit_status status;
    const char *message;    /* FAILED, ERROR, SKIPPED: the one-line reason (may be NULL) */
    const char *details;    /* FAILED, ERROR: the element's text (NULL: the message) */
    const char *system_out; /* the command that replays it, and more (may be NULL) */
} scn_junit_case;

/* A new empty report named name (the <testsuites> name; NULL: "scenario"),
 * or NULL without memory. */
scn_junit *scn__junit_new(const char *name);
void scn__junit_free(scn_junit *j);

/* Adds a copy of c to the suite named suite (created at its first case).
 * 0, SCN_ERR_NOMEM, SCN_ERR_IO (the temporary file could not be written),
 * or SCN_ERR_INPUT (no name, SCN_JUNIT_MAX_CASES, or 4096 suites). */
int scn__junit_add(scn_junit *j, const char *suite, const scn_junit_case *c);

/* Adds a property written in every suite's <properties> (in the order
 * added; a name may repeat), such as "shard" = "1/4". 0, SCN_ERR_NOMEM, or
 * SCN_ERR_INPUT (NULL, or more than 1024 properties). */
int scn__junit_property(scn_junit *j, const char *name, const char *value);

/* Writes the report; 0 or SCN_ERR_IO. */
int scn__junit_write(const scn_junit *j, FILE *f);

/* Writes the report to path through a temporary file in the same directory
 * renamed over it, so a reader never sees half a report; 0 or SCN_ERR_IO. */
int scn__junit_save(const scn_junit *j, const char *path);

/* Copies the whole of the temporary file from (read from its start) to the
 * end of to, leaving from positioned at its end for further writes (the
 * streamed reports, junit.c and report.c); 0 or SCN_ERR_IO. */
int scn__copy_stream(FILE *from, FILE *to);

#endif
