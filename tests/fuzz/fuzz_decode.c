/*
 * fuzz_decode.c - libFuzzer target: the decode check of request bodies
 * (decode.c), and Go's base64 as it reads []byte fields.
 *
 * The input is a body as JSON; each built-in kind the registry serves, and a
 * custom kind, checks it. Invariants: the check passes or fails the same way
 * twice; a failure names an error code and points at a value inside the
 * object, and every dialect's message is non-empty and NUL-terminated; the
 * input as a base64 string either decodes or fails at an offset within it,
 * and what decodes has a length that is a multiple of 4 once \r and \n are
 * left out; Go's %v of the object stays under its limit.
 *
 * Built-in kinds are also walked by their type tables (builtin_check.c): the
 * walk agrees with itself, a failure points inside the object and leaves it
 * unchanged, dropping the unknown fields leaves none; defaults (on a
 * decoded copy) are idempotent and validation of the result does not fail
 * to answer; the duplicate-key scanner (jsondup.c) finds none in a text
 * jansson reads with JSON_REJECT_DUPLICATES.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_check.h"
#include "builtin_default.h"
#include "builtin_valid.h"
#include "decode.h"
#include "jsondup.h"
#include "registry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Does v occur in the tree under root? */
static int inside(const json_t *root, const json_t *v)
{
    if (root == v)
        return 1;
    const char *k;
    json_t *e;
    size_t i;
    if (json_is_object(root)) {
        json_object_foreach((json_t *)root, k, e)
        {
            if (inside(e, v))
                return 1;
        }
    } else if (json_is_array(root)) {
        json_array_foreach(root, i, e)
        {
            if (inside(e, v))
                return 1;
        }
    }
    return 0;
}

static void check_one(const fakeapi__resource *r, const json_t *obj)
{
    fakeapi__decode_error e;
    int rc = fakeapi__decode_check(r, obj, &e);
    if (rc != fakeapi__decode_check(r, obj, NULL))
        abort();
    if (rc == 0)
        return;
    if (rc != -1 || e.code == FAKEAPI__DECODE_OK || !e.value || !inside(obj, e.value))
        abort();
    static const fakeapi__decode_dialect dialects[] = {
        FAKEAPI__DIALECT_JSON, FAKEAPI__DIALECT_UNSTRUCTURED, FAKEAPI__DIALECT_APPLY};
    for (size_t i = 0; i < 3; i++) {
        char msg[256];
        memset(msg, 'x', sizeof msg);
        fakeapi__decode_message(&e, dialects[i], msg, sizeof msg);
        if (!memchr(msg, '\0', sizeof msg) || msg[0] == '\0')
            abort();
    }
}

static void check_builtin(const fakeapi__resource *r, const json_t *obj)
{
    const fakeapi__tmsg *m = fakeapi__builtin_msg(r);
    if (!m)
        return;
    json_t *copy = json_deep_copy(obj);
    fakeapi__decode_error e;
    int n = fakeapi__builtin_decode(m, copy, &e, NULL, false);
    if (n != fakeapi__builtin_decode(m, copy, NULL, NULL, false))
        abort();
    if (n == -1) {
        if (e.code == FAKEAPI__DECODE_OK || !e.value || !inside(copy, e.value) ||
            !json_equal(copy, obj))
            abort();
        json_decref(copy);
        return;
    }
    json_t *paths = json_array();
    if (n < 0 || fakeapi__builtin_decode(m, copy, NULL, paths, true) != n ||
        json_array_size(paths) != (size_t)n || fakeapi__builtin_decode(m, copy, NULL, NULL, false) != 0)
        abort();
    json_decref(paths);
    if (fakeapi__builtin_default(r, copy) == 0) {
        json_t *again = json_deep_copy(copy);
        if (fakeapi__builtin_default(r, again) < 0 || !json_equal(again, copy))
            abort();
        json_decref(again);
        json_t *causes = json_array();
        int k = fakeapi__builtin_validate(r, copy, obj, causes);
        if (k < 0 || json_array_size(causes) != (size_t)k)
            abort();
        json_decref(causes);
    }
    json_decref(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fakeapi__registry *reg;
    static char group[] = "example.com", version[] = "v1", kind[] = "Widget";
    static fakeapi__resource custom = {
        .group = group, .version = version, .kind = kind, .custom = true};
    if (!reg && !(reg = fakeapi__registry_new()))
        abort();

    long off = fakeapi__base64_error((const char *)data, size);
    if (off < -1 || off > (long)size)
        abort();
    if (off == -1) {
        size_t n = 0;
        for (size_t i = 0; i < size; i++)
            n += data[i] != '\r' && data[i] != '\n';
        if (n % 4)
            abort();
    }

    json_t *dups = json_array();
    json_t *strict = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (fakeapi__json_duplicates((const char *)data, size, dups) < 0 ||
        (strict && json_array_size(dups) != 0))
        abort();
    json_decref(strict);
    json_decref(dups);

    json_t *obj = json_loadb((const char *)data, size, 0, NULL);
    if (!json_is_object(obj)) {
        json_decref(obj);
        return 0;
    }
    size_t n;
    fakeapi__resource **all = fakeapi__registry_all(reg, &n);
    for (size_t i = 0; i < n; i++) {
        check_one(all[i], obj);
        check_builtin(all[i], obj);
    }
    fakeapi__registry_release(all, n);
    check_one(&custom, obj);

    char *shown = fakeapi__decode_gofmt(obj, 512);
    if (!shown || strlen(shown) > 512)
        abort();
    free(shown);
    json_decref(obj);
    return 0;
}
