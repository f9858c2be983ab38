/*
 * protobuf.h - Kubernetes protobuf request bodies, decoded to JSON.
 *
 * kubectl's typed-client commands (create deployment/job/role/...,
 * drain, delete) send application/vnd.kubernetes.protobuf. Such a body is
 * the 4 bytes "k8s\0" followed by a runtime.Unknown message {typeMeta=1
 * {apiVersion=1, kind=2}, raw=2, contentEncoding=3, contentType=4} whose raw
 * field holds the object's own message. This module turns the body into the
 * JSON object the same request would have carried as JSON, so the rest of
 * the server only ever sees JSON.
 *
 * Every built-in kind is known, from the type tables (types.h): the kinds
 * the served group-versions serve, the meta/v1 options kinds registered in
 * every group-version (DeleteOptions, ListOptions, ...), and the bodies of
 * subresources and reviews (Scale, Eviction, TokenRequest, ...). Custom
 * resources have no protobuf form; the caller refuses those before decoding.
 *
 * Reentrant; no global state.
 */
#ifndef FAKEAPI_PROTOBUF_H
#define FAKEAPI_PROTOBUF_H

#include <stddef.h>
#include <jansson.h>

/*
 * Decode a protobuf request body of len bytes (borrowed; need not be
 * NUL-terminated) into a JSON object: "apiVersion" and "kind" from the
 * envelope's typeMeta, then the object's fields under their JSON names.
 *
 * Mapping to JSON, as Go's encoding/json would write the decoded object:
 *  - fields absent from the body are absent from the JSON; inline (embedded)
 *    messages' fields sit in their parent; json:"-" fields and unknown
 *    fields are skipped, unknown wire types (groups included) as protobuf
 *    skips them;
 *  - a zero scalar ("", 0, false) is dropped when the field is omitempty and
 *    not a Go pointer (the Go encoder writes plain values always), and kept
 *    otherwise; a nested message that is present becomes an object, even if
 *    empty ("spec": {});
 *  - repeated numbers are read packed or unpacked; maps become objects,
 *    every value kept ("" included, message values such as Quantity too);
 *    bytes become base64; an integral double a bare integer (as Go writes
 *    float64 1: "minimum": 1);
 *  - meta.v1.Time becomes "2006-01-02T15:04:05Z", MicroTime
 *    "2006-01-02T15:04:05.000000Z" (Time keeps whole seconds, as upstream
 *    reads it); an empty one (Go's zero time, as go-to-protobuf writes it)
 *    is dropped where the JSON encoder would have written null; Duration a Go
 *    duration string ("1h2m3s"); Quantity its string; IntOrString a bare
 *    number or string; RawExtension, FieldsV1 and apiextensions JSON the raw
 *    JSON they carry (an embedded protobuf envelope is decoded in turn); Go
 *    slice types (authentication ExtraValue) a bare array; GroupVersion
 *    "group/version"; JSONSchemaPropsOrBool/OrArray/OrStringArray the
 *    schema, bool or array they hold.
 *
 * Returns 0 with a new object in *out (caller owns it). Returns -1 with a
 * message in err (if err is not NULL; truncated to errlen, always
 * NUL-terminated) and *out untouched for: a missing "k8s\0" magic, a
 * truncated or overlong varint, a length past the end of its enclosing
 * message, a wire type that does not fit a known field, an invalid wire
 * type, field number 0, strings that are not UTF-8 or contain NUL, times
 * outside years 1-9999, raw JSON that does not parse, a contentEncoding, a
 * kind that is not built in ("no kind \"Widget\" is registered for version
 * ..."), or allocation failure. Once the kind is known the message names it:
 * protobuf body of kind "Deployment" (apps/v1) does not decode: ...
 *
 * The body must already be limited in size by the caller (the server's
 * max_body); decoding needs memory a small multiple of len.
 */
int fakeapi__pb_decode(const void *body, size_t len, json_t **out, char *err, size_t errlen);

struct fakeapi__tmsg;

/*
 * The message of a body's kind, from its envelope's apiVersion and kind:
 * the kind a group-version serves, a meta/v1 options kind (any apiVersion),
 * or a subresource's or review's body kind. NULL if none.
 */
const struct fakeapi__tmsg *fakeapi__pb_kind_msg(const char *api_version, const char *kind);

/*
 * Decode one message of type m (len bytes, no envelope) to its JSON value,
 * by the rules above. Returns 0 with *out a new value, or NULL where JSON
 * would write null (a zero Time, an empty RawExtension); -1 with err as for
 * fakeapi__pb_decode and *out untouched.
 */
int fakeapi__pb_decode_msg(const struct fakeapi__tmsg *m, const void *data, size_t len,
                           json_t **out, char *err, size_t errlen);

#endif
