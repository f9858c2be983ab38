/*
 * protobuf.h - Kubernetes protobuf request bodies, decoded to JSON.
 *
 * kubectl's typed-client commands (create namespace/configmap/secret/
 * serviceaccount) POST application/vnd.kubernetes.protobuf. Such a body is
 * the 4 bytes "k8s\0" followed by a runtime.Unknown message {typeMeta=1
 * {apiVersion=1, kind=2}, raw=2, contentEncoding=3, contentType=4} whose raw
 * field holds the object's own message. This module turns the body into the
 * JSON object the same request would have carried as JSON, so the rest of
 * the server only ever sees JSON.
 *
 * Only a fixed set of kinds is known (schema tables in protobuf.c):
 * v1 Namespace, ConfigMap, Secret, ServiceAccount, Event and
 * coordination.k8s.io/v1 Lease. Everything else is refused, so the client
 * can be told to send JSON instead.
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
 *  - fields absent from the body are absent from the JSON;
 *  - fields that are plain values in Go (omitempty) are dropped when empty
 *    ("", 0, false), because the Go encoder writes them always; fields that
 *    are pointers in Go (metadata.deletionGracePeriodSeconds, immutable,
 *    automountServiceAccountToken, every Lease spec field, ownerReference
 *    controller/blockOwnerDeletion) are kept when present, even if zero;
 *  - map values are always kept, "" included; bytes become base64;
 *  - meta.v1.Time becomes "2006-01-02T15:04:05Z", MicroTime
 *    "2006-01-02T15:04:05.000000Z"; a zero time ({0,0}, Go's zero time) is
 *    dropped where the JSON encoder would have written null;
 *  - a nested message that is present becomes an object, even if empty
 *    ("spec": {}); metadata.managedFields and unknown fields are skipped.
 *
 * Returns 0 with a new object in *out (caller owns it). Returns -1 with a
 * message in err (if err is not NULL; truncated to errlen, always
 * NUL-terminated) and *out untouched for: a missing "k8s\0" magic, a
 * truncated or overlong varint, a length past the end of its enclosing
 * message, a wire type that does not fit the field, groups, field number 0,
 * strings that are not UTF-8 or contain NUL, times outside years 1-9999, a
 * contentEncoding, an unsupported kind
 * (protobuf body of kind "Deployment" is not supported; send JSON), or
 * allocation failure.
 *
 * The body must already be limited in size by the caller (the server's
 * max_body); decoding needs memory a small multiple of len.
 */
int fakeapi__pb_decode(const void *body, size_t len, json_t **out, char *err, size_t errlen);

#endif
