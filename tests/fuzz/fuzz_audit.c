/*
 * fuzz_audit.c - libFuzzer target: audit logs (JSON lines, EventLists) as
 * `scenario import audit` and `audit-to-trace` read them.
 *
 * Invariants: a read either gives events that each carry the fields a
 * replay needs (auditID, stage, verb, requestURI, a time; objectRef for a
 * write) with one event per auditID, or SCN_ERR_INPUT/NOMEM with a
 * message, the file named, and an error that formats.
 */
#include "audit_event.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    scn__audit_log log = {0};
    scn_error err;
    memset(&err, 0, sizeof err);
    int rc = scn__audit_read_buf(&log, "fuzz.jsonl", (const char *)data, size, &err);
    if (rc != 0) {
        char buf[1200];
        if ((rc != SCN_ERR_INPUT && rc != SCN_ERR_NOMEM) ||
            (rc == SCN_ERR_INPUT && (err.message[0] == '\0' || strcmp(err.file, "fuzz.jsonl"))) ||
            scn_error_format(&err, buf, sizeof buf) < 0)
            abort();
        scn__audit_log_free(&log);
        return 0;
    }
    scn__audit_sort(&log);
    if (json_object_size(log.ids) != log.n || log.raw < log.n)
        abort();
    for (size_t i = 0; i < log.n; i++) {
        const scn__audit_event *e = &log.ev[i];
        if (!e->ev || !e->audit_id || !e->stage || !e->verb || !e->uri || e->received_ns < 0 ||
            (scn__audit_is_write(e->verb) && !e->resource) ||
            (i > 0 && log.ev[i - 1].received_ns > e->received_ns))
            abort();
    }
    scn__audit_log_free(&log);
    return 0;
}
