/*
 * fuzz_scenario.c - libFuzzer target: scenario files.
 *
 * The input is a scenario named "fuzz.yaml" (so relative fixture and
 * manifest paths resolve against the current directory and mostly fail to
 * read, which is fine: that is an input error). Invariants: a parse either
 * gives a scenario with its steps and fixtures, or SCN_ERR_INPUT/NOMEM with
 * a message, *out untouched, and an error that formats.
 */
#include <scn/scenario.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    scn_scenario *s = (scn_scenario *)&s; /* must stay untouched on error */
    scn_scenario *const sentinel = s;
    scn_error err;
    memset(&err, 0, sizeof err);
    int rc = scn_scenario_parse("fuzz.yaml", (const char *)data, size, &s, &err);
    if (rc != 0) {
        if (s != sentinel || (rc != SCN_ERR_INPUT && rc != SCN_ERR_NOMEM) ||
            err.message[0] == '\0' || !memchr(err.message, '\0', sizeof err.message) ||
            !memchr(err.field, '\0', sizeof err.field) || !memchr(err.file, '\0', sizeof err.file))
            abort();
        char buf[1024];
        if (scn_error_format(&err, buf, sizeof buf) < 0)
            abort();
        return 0;
    }
    if (!s || !s->fixtures || !json_is_array(s->fixtures) || (s->n_steps && !s->steps))
        abort();
    for (size_t i = 0; i < s->n_steps; i++)
        if (s->steps[i].kind < SCN_STEP_APPLY || s->steps[i].kind > SCN_STEP_EXPECT_WRITE)
            abort();
    scn_scenario_free(s);
    return 0;
}
