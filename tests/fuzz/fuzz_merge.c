/*
 * fuzz_merge.c - libFuzzer target: a shard's report (JSON or JUnit XML) as
 * `scenario merge` reads it, then the checks and the ordering.
 *
 * Invariants: a read either adds the report or leaves the merge as it was
 * with SCN_ERR_INPUT/NOMEM and a message naming the report; a finished
 * merge holds runs in file and seed order, one per file and seed, each with
 * a file, a valid verdict and strings (possibly empty) for the rest.
 */
#include "merge.h"
#include "scn/scenario.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    scn_merge *m = scn__merge_new();
    char err[1024] = "";
    int rc;

    if (!m)
        return 0;
    rc = scn__merge_add_text(m, "fuzz.rep", (const char *)data, size, err, sizeof err);
    if (rc != 0) {
        if ((rc != SCN_ERR_INPUT && rc != SCN_ERR_NOMEM) || strncmp(err, "fuzz.rep: ", 10) != 0 ||
            scn__merge_reports(m) != 0)
            abort();
        scn__merge_free(m);
        return 0;
    }
    rc = scn__merge_finish(m, err, sizeof err);
    if (rc != 0) {
        if (rc != SCN_ERR_INPUT && rc != SCN_ERR_NOMEM)
            abort();
        if (rc == SCN_ERR_INPUT && err[0] == '\0')
            abort();
        scn__merge_free(m);
        return 0;
    }
    for (size_t i = 0; i < scn__merge_count(m); i++) {
        const scn_merged_run *r = scn__merge_get(m, i), *p = i ? scn__merge_get(m, i - 1) : NULL;
        if (!r || !r->file || !r->scenario || !r->message || !r->replay ||
            (unsigned)r->verdict > SCN_VERDICT_ERROR)
            abort();
        if (p && !strcmp(p->file, r->file) && p->seed >= r->seed)
            abort(); /* within a file: seeds ascending, each once */
    }
    scn__merge_free(m);
    return 0;
}
