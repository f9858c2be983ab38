/*
 * openapi_pb.h - the /openapi/v2 document as protobuf (gnostic's
 * openapi.v2.Document), from its JSON form.
 *
 * Thread-safety: a pure function; any thread.
 */
#ifndef FAKEAPI_OPENAPI_PB_H
#define FAKEAPI_OPENAPI_PB_H

#include <stddef.h>
#include <jansson.h>

/* The media type clients ask for it by (client-go's openAPIV2mimePb). */
#define FAKEAPI__OPENAPI_V2_PB "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"

/*
 * Encode doc (a Swagger 2.0 document as fakeapi__openapi_v2 builds it).
 * Returns malloc'ed bytes (caller frees) and their length in *len, or NULL
 * on allocation failure or when doc is not an object.
 */
char *fakeapi__openapi_v2_protobuf(const json_t *doc, size_t *len);

#endif
