/*
 * fuzz_stages.c - libFuzzer target: stage rules (cluster/stages.c).
 *
 * The input is parsed as JSON (any value); whatever parses is handed to
 * kc__stages_parse, and rules that parse are matched against fixed pods.
 * Invariants: a parse either succeeds or fails with KC_ERR_INPUT (or
 * KC_ERR_NOMEM), a NUL-terminated message and *out untouched; every pod
 * gets a rule, with non-negative delays and an exit code that agrees with
 * its outcome.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_int.h"
#include "stages.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_rule(const kc_stage_rule *r)
{
    if (!r || !r->name || r->scheduled_to_running_ns < 0 || r->ready_after_ns < 0 ||
        r->after_ns < 0 || r->termination_ns < 0)
        abort();
    if ((r->outcome == KC_OUTCOME_FAIL) != (r->exit_code != 0) || r->exit_code < 0 ||
        r->exit_code > 255)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *rules = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (!rules)
        return 0;
    kc_stages *st = (kc_stages *)&st, *const sentinel = st;
    char err[512];
    err[0] = '\0';
    int rc = kc__stages_parse(rules, &st, err, sizeof err);
    json_decref(rules);
    if (rc != 0) {
        if ((rc != KC_ERR_INPUT && rc != KC_ERR_NOMEM) || st != sentinel ||
            (rc == KC_ERR_INPUT && err[0] == '\0') || !memchr(err, '\0', sizeof err))
            abort();
        return 0;
    }
    static const char *const pods[] = {
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"prod\",\"labels\":{\"app\":\"web\"}},"
        "\"spec\":{\"containers\":[{\"image\":\"nginx:1.27\"}]}}",
        "{\"metadata\":{\"name\":\"j\",\"namespace\":\"x\",\"ownerReferences\":[{\"kind\":"
        "\"Job\"}]},\"spec\":{\"initContainers\":[{\"image\":\"busybox\"}]}}",
        "{}",
    };
    for (size_t i = 0; i < sizeof pods / sizeof pods[0]; i++) {
        json_t *pod = json_loads(pods[i], 0, NULL);
        check_rule(kc__stages_match(st, pod));
        json_decref(pod);
    }
    for (size_t i = 0; i < kc__stages_count(st); i++)
        check_rule(kc__stages_rule(st, i));
    kc__stages_free(st);
    return 0;
}
