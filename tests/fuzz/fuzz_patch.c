/*
 * fuzz_patch.c - libFuzzer target: JSON patch, merge patch, strategic merge.
 *
 * Input: a JSON document on the first line, the patch on the rest. Both must
 * parse as JSON, else the input is skipped. The patch is then applied in all
 * three ways (JSON patch only when it is an array; strategic merge with the
 * built-in merge keys). Invariants: no input is modified; a success gives a
 * document and a failure a message; a merge patch is idempotent
 * (applying it twice gives what applying it once gives).
 */
#include "patch.h"
#include "types.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_err(int rc, json_t *out, const char *err)
{
    if (rc == 0) {
        if (!out)
            abort();
    } else if (err[0] == '\0') {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    if (!nl)
        return 0;
    size_t doc_len = (size_t)(nl - data);
    json_t *doc = json_loadb((const char *)data, doc_len, JSON_DECODE_ANY, NULL);
    json_t *patch = json_loadb((const char *)nl + 1, size - doc_len - 1, JSON_DECODE_ANY, NULL);
    if (!doc || !patch)
        goto out;
    json_t *doc0 = json_deep_copy(doc), *patch0 = json_deep_copy(patch);
    if (!doc0 || !patch0)
        abort();

    char err[256];
    json_t *res = NULL;
    int rc;
    if (json_is_array(patch)) {
        err[0] = '\0';
        rc = fakeapi__json_patch(doc, patch, &res, err, sizeof err);
        check_err(rc, res, err);
        json_decref(res);
        res = NULL;
    }

    rc = fakeapi__merge_patch(doc, patch, &res);
    if (rc == 0) {
        json_t *twice = NULL;
        if (fakeapi__merge_patch(res, patch, &twice) == 0) {
            if (!json_equal(res, twice))
                abort();
            json_decref(twice);
        }
        json_decref(res);
        res = NULL;
    }

    err[0] = '\0';
    /* Merge keys of a Deployment, from the type tables. */
    fakeapi__smp_types types = {.root = fakeapi__type_of_kind("apps/v1", "Deployment")};
    rc = fakeapi__smp_patch(doc, patch, fakeapi__smp_type_key, &types, &res, err, sizeof err);
    check_err(rc, res, err);
    json_decref(res);
    res = NULL;
    err[0] = '\0';
    rc = fakeapi__smp_patch(doc, patch, NULL, NULL, &res, err, sizeof err);
    check_err(rc, res, err);
    json_decref(res);

    if (!json_equal(doc, doc0) || !json_equal(patch, patch0))
        abort();
    json_decref(doc0);
    json_decref(patch0);
out:
    json_decref(doc);
    json_decref(patch);
    return 0;
}
