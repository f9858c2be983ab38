/*
 * junit_read.h - reading back a JUnit XML report (as junit.c writes it,
 * and the common shape other tools write): the properties of its suites
 * and its test cases, one callback each.
 *
 * The reader knows the XML that reports use: elements, attributes in
 * single or double quotes, text, the five named entities and character
 * references, comments, the XML declaration, CDATA sections and a
 * DOCTYPE without an internal subset. What it does not understand is an
 * error (with the line), never a guess.
 *
 * Threads: reentrant. Ownership: the strings handed to the callbacks are
 * borrowed for the call.
 */
#ifndef SCN_JUNIT_READ_H
#define SCN_JUNIT_READ_H

#include <stddef.h>

#include "junit.h"

typedef struct scn_junit_read_cb {
    /* A <property name value/> of a suite (or of <testsuites>). */
    int (*property)(void *user, const char *name, const char *value);
    /* A <testcase>: c->details is the failure's or error's text,
     * c->system_out its <system-out>. A non-zero return stops reading and
     * is returned. */
    int (*testcase)(void *user, const scn_junit_case *c);
    void *user;
} scn_junit_read_cb;

/* Read text (len bytes, need not be NUL-terminated). 0; a callback's
 * non-zero return; SCN_ERR_INPUT for what is not a JUnit report (err says
 * why and on which line); SCN_ERR_NOMEM. */
int scn__junit_read(const char *text, size_t len, const scn_junit_read_cb *cb, char *err,
                    size_t errlen);

#endif
