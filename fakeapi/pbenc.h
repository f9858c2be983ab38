/*
 * pbenc.h - JSON to Kubernetes protobuf, driven by the built-in type tables.
 *
 * The inverse of protobuf.h: a built-in object's JSON (as the server stores
 * it) becomes the body a protobuf client would send or accept: "k8s\0" and
 * a runtime.Unknown {typeMeta, raw, contentEncoding "", contentType ""}
 * whose raw is the object's message. Fields are written in number order;
 * repeated numbers unpacked, as go-to-protobuf writes them; a map's entries
 * in the JSON object's order. The messages with JSON of their own are
 * written from it: a Time from RFC 3339 (whole seconds), a MicroTime with
 * its microseconds, a Duration from a Go duration string, a Quantity from
 * its string (or number), an IntOrString from a number or string, raw JSON
 * (RawExtension, FieldsV1, apiextensions JSON) as compact JSON bytes.
 *
 * JSON keys the message does not have are left out (the decoder skips
 * unknown fields too); null values are left out.
 *
 * Used by the tests (round trips of every built-in message), and by the
 * server should it answer Accept: application/vnd.kubernetes.protobuf.
 *
 * Reentrant; no global state; any thread.
 */
#ifndef FAKEAPI_PBENC_H
#define FAKEAPI_PBENC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* Encodings past this many bytes fail (a body the server would refuse anyway). */
#define FAKEAPI__PBENC_MAX (64u << 20)

/*
 * Encode obj, a JSON object with string "apiVersion" and "kind" naming a
 * built-in kind (fakeapi__pb_kind_msg), as a protobuf body. Returns 0 with a
 * new malloc'd buffer in *out (caller frees) and its size in *len; -1 with a
 * message in err (if not NULL, truncated to errlen) and *out, *len untouched
 * for: an unknown kind, a value of the wrong JSON type for its field
 * ("spec.replicas of Deployment: want an integer"), bad base64, a time or
 * duration that does not parse, an encoding over FAKEAPI__PBENC_MAX, or
 * allocation failure. obj is borrowed.
 */
int fakeapi__pb_encode(const json_t *obj, uint8_t **out, size_t *len, char *err, size_t errlen);

/*
 * Encode v, the JSON value of one message of type m, as that message's
 * bytes (no envelope). Returns and owns as fakeapi__pb_encode.
 */
int fakeapi__pb_encode_msg(const fakeapi__tmsg *m, const json_t *v, uint8_t **out, size_t *len,
                           char *err, size_t errlen);

#endif
