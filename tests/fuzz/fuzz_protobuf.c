/*
 * fuzz_protobuf.c - libFuzzer target: Kubernetes protobuf request bodies.
 *
 * Invariants: a decode either succeeds with an object carrying string
 * apiVersion and kind, that serialises as JSON (so every string in it is
 * valid UTF-8), and that a second decode reproduces; or fails with a
 * message and *out untouched.
 */
#include "protobuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *out = (json_t *)&out; /* must stay untouched on error */
    json_t *const sentinel = out;
    char err[256];
    err[0] = '\0';
    if (fakeapi__pb_decode(data, size, &out, err, sizeof err) != 0) {
        if (out != sentinel || err[0] == '\0' || !memchr(err, '\0', sizeof err))
            abort();
        return 0;
    }
    if (!json_is_object(out) || !json_is_string(json_object_get(out, "apiVersion")) ||
        !json_is_string(json_object_get(out, "kind")))
        abort();
    char *text = json_dumps(out, JSON_COMPACT);
    if (!text)
        abort();
    json_t *back = json_loads(text, 0, NULL);
    if (!back || !json_equal(back, out))
        abort();
    json_decref(back);
    free(text);
    json_t *again = NULL;
    if (fakeapi__pb_decode(data, size, &again, err, sizeof err) != 0 || !json_equal(again, out))
        abort();
    json_decref(again);
    json_decref(out);
    return 0;
}
