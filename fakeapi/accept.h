/*
 * accept.h - content negotiation: which representation of an answer the
 * client's Accept header asks for.
 *
 * fakeapi answers JSON only, in three shapes: the objects themselves, a
 * meta.k8s.io Table (kubectl get), or PartialObjectMetadata(List) (the
 * metadata-only clients of client-go and controller-runtime). A client that
 * accepts none of them (protobuf only, YAML only, an unknown "as=") gets 406
 * NotAcceptable, as the real server answers media types it cannot produce.
 *
 * Pure functions; any thread.
 */
#ifndef FAKEAPI_ACCEPT_H
#define FAKEAPI_ACCEPT_H

#include <stdbool.h>
#include <jansson.h>

typedef enum fakeapi__as {
    FAKEAPI__AS_OBJECT = 0, /* plain JSON: the objects as stored */
    FAKEAPI__AS_TABLE,      /* application/json;as=Table;g=meta.k8s.io;v=v1 */
    FAKEAPI__AS_PARTIAL,    /* application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1 */
    FAKEAPI__AS_NONE,       /* nothing acceptable: 406 */
} fakeapi__as;

/*
 * The representation to answer with. accept may be NULL or empty (plain
 * JSON). Media ranges are taken by their q value (highest first, ties in
 * the order given); q=0 excludes a range. Recognised: application/json,
 * "application/<any>" (and "<any>/<any>"), and (any with params) "as=Table" / "as=PartialObjectMetadata"
 * / "as=PartialObjectMetadataList" with g=meta.k8s.io and v=v1 or v1beta1; for
 * a watch, ";stream=watch" is allowed too. Protobuf and YAML ranges are
 * skipped: fakeapi does not write them.
 */
fakeapi__as fakeapi__accept_pick(const char *accept);

/* obj's metadata as a meta.k8s.io/v1 PartialObjectMetadata (new reference; NULL on OOM). */
json_t *fakeapi__partial_of(const json_t *obj);

#endif
