/*
 * fuzz_protobuf.c - libFuzzer target: Kubernetes protobuf request bodies,
 * for every built-in kind.
 *
 * An input that starts with the "k8s\0" magic is decoded as a whole body.
 * Any other input of two bytes or more picks a kind from the type tables by
 * its first two bytes (every served kind and subresource body, then the
 * meta/v1 options kinds) and the rest is that kind's message: it is wrapped
 * in an envelope naming the kind and decoded, and also decoded bare as the
 * message at the same index of the message table, so every message's
 * decoder is reached without the fuzzer having to find a kind name.
 *
 * Invariants: a decode either succeeds with an object carrying string
 * apiVersion and kind (the envelope's), that serialises as JSON (so every
 * string in it is valid UTF-8), that a second decode reproduces, and that
 * re-encodes (pbenc.c) to a body decoding to the same JSON; or fails with a
 * message and *out untouched.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pbenc.h"
#include "protobuf.h"
#include "types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const options_kinds[] = {"DeleteOptions", "ListOptions",   "GetOptions",
                                            "CreateOptions", "UpdateOptions", "PatchOptions"};

static void check_value(const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text)
        abort();
    json_t *back = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!back || !json_equal(back, v))
        abort();
    json_decref(back);
    free(text);
}

static void check_body(const uint8_t *data, size_t size)
{
    json_t *out = (json_t *)&out; /* must stay untouched on error */
    json_t *const sentinel = out;
    char err[256];
    err[0] = '\0';
    if (fakeapi__pb_decode(data, size, &out, err, sizeof err) != 0) {
        if (out != sentinel || err[0] == '\0' || !memchr(err, '\0', sizeof err))
            abort();
        return;
    }
    if (!json_is_object(out) || !json_is_string(json_object_get(out, "apiVersion")) ||
        !json_is_string(json_object_get(out, "kind")))
        abort();
    check_value(out);
    json_t *again = NULL;
    if (fakeapi__pb_decode(data, size, &again, err, sizeof err) != 0 || !json_equal(again, out))
        abort();
    json_decref(again);
    /* What decoded re-encodes, and that decodes to the same JSON. */
    uint8_t *pb = NULL;
    size_t n = 0;
    if (fakeapi__pb_encode(out, &pb, &n, err, sizeof err) == 0) {
        json_t *third = NULL;
        if (fakeapi__pb_decode(pb, n, &third, err, sizeof err) != 0 || !json_equal(third, out))
            abort();
        json_decref(third);
        free(pb);
    }
    json_decref(out);
}

static void put_varint(uint8_t *buf, size_t *n, uint64_t v)
{
    do {
        buf[(*n)++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

/* "k8s\0" + Unknown{typeMeta{apiVersion, kind}, raw}. */
static void check_kind(const char *api_version, const char *kind, const uint8_t *raw, size_t len)
{
    size_t av = strlen(api_version), kd = strlen(kind), tm = 2 + av + 2 + kd, n = 0;
    uint8_t *buf = malloc(4 + 2 + tm + 11 + len);
    if (!buf)
        abort();
    memcpy(buf, "k8s", 4);
    n = 4;
    buf[n++] = 0x0a;
    put_varint(buf, &n, tm);
    buf[n++] = 0x0a;
    buf[n++] = (uint8_t)av;
    memcpy(buf + n, api_version, av);
    n += av;
    buf[n++] = 0x12;
    buf[n++] = (uint8_t)kd;
    memcpy(buf + n, kind, kd);
    n += kd;
    buf[n++] = 0x12;
    put_varint(buf, &n, len);
    memcpy(buf + n, raw, len);
    check_body(buf, n + len);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 4 && !memcmp(data, "k8s", 4)) {
        check_body(data, size);
        return 0;
    }
    if (size < 2)
        return 0;
    size_t pick = (size_t)data[0] | (size_t)data[1] << 8;
    size_t nopts = sizeof options_kinds / sizeof options_kinds[0];
    size_t i = pick % (fakeapi__ntress + nopts);
    if (i < fakeapi__ntress) {
        const fakeapi__tres *r = &fakeapi__tress[i];
        if (r->msg >= 0)
            check_kind(r->kind_group_version, r->kind, data + 2, size - 2);
    } else {
        check_kind("v1", options_kinds[i - fakeapi__ntress], data + 2, size - 2);
    }
    /* The same bytes as a bare message of each table entry in turn. */
    const fakeapi__tmsg *m = &fakeapi__tmsgs[pick % fakeapi__ntmsgs];
    json_t *v = (json_t *)&v, *const sentinel = v;
    char err[256];
    err[0] = '\0';
    if (fakeapi__pb_decode_msg(m, data + 2, size - 2, &v, err, sizeof err) != 0) {
        if (v != sentinel || err[0] == '\0')
            abort();
        return 0;
    }
    if (v)
        check_value(v);
    json_decref(v);
    return 0;
}
