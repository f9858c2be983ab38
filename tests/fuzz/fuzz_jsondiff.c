/*
 * fuzz_jsondiff.c - libFuzzer target: the JSON patch a defaulting webhook
 * answers with (ctrl_json_patch_diff, manager/webhook_patch.c).
 *
 * Input: a JSON document on the first line, another on the rest; both must
 * parse (any JSON value), else the input is skipped. Invariants: the diff
 * is an array of add/remove/replace operations; applied to the first
 * document by fakeapi's RFC 6902 implementation, it gives a document equal
 * to the second; the diff of a document with itself is empty; neither input
 * is modified.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/webhook.h"
#include "patch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nl = memchr(text, '\n', size);
    if (!nl)
        return 0;
    json_t *a = json_loadb(text, (size_t)(nl - text), JSON_DECODE_ANY, NULL);
    json_t *b = json_loadb(nl + 1, size - (size_t)(nl - text) - 1, JSON_DECODE_ANY, NULL);
    if (!a || !b)
        goto out;
    json_t *a0 = json_deep_copy(a), *b0 = json_deep_copy(b);
    json_t *patch = NULL, *got = NULL, *self = NULL;
    if (ctrl_json_patch_diff(a, b, &patch) != 0 || !json_is_array(patch))
        abort();
    size_t i;
    json_t *op;
    json_array_foreach(patch, i, op)
    {
        const char *o = json_string_value(json_object_get(op, "op"));
        if (!o || (strcmp(o, "add") && strcmp(o, "remove") && strcmp(o, "replace")))
            abort();
    }
    char err[512];
    if (fakeapi__json_patch(a, patch, &got, err, sizeof err) != 0 || !json_equal(got, b))
        abort();
    if (ctrl_json_patch_diff(a, a, &self) != 0 || json_array_size(self) != 0)
        abort();
    if (!json_equal(a, a0) || !json_equal(b, b0))
        abort();
    json_decref(a0);
    json_decref(b0);
    json_decref(patch);
    json_decref(got);
    json_decref(self);
out:
    json_decref(a);
    json_decref(b);
    return 0;
}
