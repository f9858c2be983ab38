/*
 * fuzz_patch.c - libFuzzer target: JSON patch, merge patch, strategic merge,
 * server-side apply.
 *
 * Input: a JSON document on the first line, the patch on the rest. Both must
 * parse as JSON, else the input is skipped. The patch is then applied in all
 * three ways (JSON patch only when it is an array; strategic merge with the
 * built-in merge keys), and as a server-side apply configuration over the
 * document (deduced, ConfigMap and Pod schemas), which also has its
 * managedFields read as fieldsV1. Invariants: no input is modified; a
 * success gives a document and a failure a message (an apply failure an
 * HTTP code); a merge patch is idempotent (applying it twice gives what
 * applying it once gives), and so is an apply (the second changes nothing).
 */
#include "fieldpath.h"
#include "patch.h"
#include "ssa.h"
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

/* Apply patch over doc as "fuzz" with schema t: checks the invariants above. */
static void check_apply(fakeapi__fptype t, const json_t *doc, const json_t *patch)
{
    fakeapi__ssa_opts o = {0};
    o.type = t;
    o.api_version = "v1";
    o.now = "2026-01-01T00:00:00Z";
    json_t *out = NULL, *again = NULL;
    bool changed = false;
    fakeapi__ssa_err err = {0};
    int rc = fakeapi__ssa_apply(&o, json_is_object(doc) ? doc : NULL, patch, "fuzz", false, &out,
                                &changed, &err);
    if (rc < 0) {
        if (out || err.code < 400 || !err.message[0])
            abort();
        fakeapi__ssa_err_deinit(&err);
        return;
    }
    if (!json_is_object(out))
        abort();
    fakeapi__ssa_err_deinit(&err);
    /* Idempotent once there is ownership to keep (an object left with no
     * managedFields meets before-first-apply next time, as upstream's does). */
    bool owned = json_object_get(json_object_get(out, "metadata"), "managedFields") != NULL;
    if (fakeapi__ssa_apply(&o, out, patch, "fuzz", false, &again, &changed, &err) < 0 ||
        (owned && changed))
        abort();
    fakeapi__ssa_err_deinit(&err);
    /* What an update from the result to the document records never fails. */
    json_t *next = json_deep_copy(doc);
    if (json_is_object(next) && fakeapi__ssa_update(&o, out, next, "fuzz-update") < 0)
        abort();
    json_decref(next);
    json_decref(again);
    json_decref(out);
}

/* fieldsV1 parsed and written back parses to the same set. */
static void check_fieldsv1(const json_t *v)
{
    fakeapi__fpset *s = NULL, *s2 = NULL;
    char err[256];
    if (!json_is_object(v) || fakeapi__fpset_from_json(v, &s, err, sizeof err) < 0)
        return;
    json_t *back = fakeapi__fpset_to_json(s);
    if (!back || fakeapi__fpset_from_json(back, &s2, err, sizeof err) < 0 ||
        !fakeapi__fpset_equal(s, s2))
        abort();
    json_decref(back);
    fakeapi__fpset_free(s);
    fakeapi__fpset_free(s2);
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

    if (json_is_object(patch)) {
        check_apply(fakeapi__fptype_deduced(), doc, patch);
        check_apply(fakeapi__fptype_builtin(fakeapi__type_find("k8s.io.api.core.v1.ConfigMap")),
                    doc, patch);
        check_apply(fakeapi__fptype_builtin(fakeapi__type_find("k8s.io.api.core.v1.Pod")), doc,
                    patch);
    }
    check_fieldsv1(doc);
    check_fieldsv1(patch);

    if (!json_equal(doc, doc0) || !json_equal(patch, patch0))
        abort();
    json_decref(doc0);
    json_decref(patch0);
out:
    json_decref(doc);
    json_decref(patch);
    return 0;
}
