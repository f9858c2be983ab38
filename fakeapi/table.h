/*
 * table.h - server-side printing: meta.k8s.io/v1 Table responses.
 *
 * `kubectl get` asks for a Table (K8S-API.md section 9) and prints its
 * columns as they come. The columns of built-in kinds follow the real API
 * server's printers (pods READY/STATUS/RESTARTS/AGE, ...); a CRD kind uses
 * its additionalPrinterColumns, evaluated with a small JSONPath subset, or
 * AGE alone when it declares none.
 *
 * Time: AGE and other durations are computed against now_ns, the server's
 * clock (fakeapi__now_ns), never the wall clock, so tables are reproducible.
 *
 * Thread-safety: every function is reentrant; arguments are only read.
 */
#ifndef FAKEAPI_TABLE_H
#define FAKEAPI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "registry.h"

/*
 * A Table of the objects in items (a JSON array of objects of kind r).
 * items is BORROWED (unlike jansson's *_new, which steal): the caller keeps
 * its list. list_rv becomes metadata.resourceVersion (NULL: omitted); cont,
 * if non-NULL and non-empty, becomes metadata.continue. Each row carries the
 * object's metadata as a PartialObjectMetadata (the default of the real
 * server's includeObject=Metadata). For a single-object GET pass a
 * one-element array.
 * Returns a new reference the caller owns, or NULL on allocation failure or
 * when items is not an array.
 */
json_t *fakeapi__table_new(const fakeapi__resource *r, json_t *items, const char *list_rv,
                           const char *cont, int64_t now_ns);

/* What each row carries in "object": the real server's ?includeObject= values. */
typedef enum fakeapi__table_include {
    FAKEAPI__INCLUDE_METADATA = 0, /* "Metadata" (the default): a PartialObjectMetadata */
    FAKEAPI__INCLUDE_NONE,         /* "None": no object */
    FAKEAPI__INCLUDE_OBJECT,       /* "Object": the whole object (kubectl get --sort-by asks) */
} fakeapi__table_include;

/*
 * The includeObject query value v (NULL or "": Metadata) into *out. Returns 0,
 * or -1 for any other value (*out untouched): the real server answers that
 * with 400 BadRequest.
 */
int fakeapi__table_include_parse(const char *v, fakeapi__table_include *out);

/* fakeapi__table_new with the rows' objects as include says. */
json_t *fakeapi__table_new_incl(const fakeapi__resource *r, json_t *items, const char *list_rv,
                                const char *cont, int64_t now_ns, fakeapi__table_include include);

/*
 * True when an Accept header asks for a meta.k8s.io/v1 Table
 * ("application/json;as=Table;v=v1;g=meta.k8s.io") before it accepts plain
 * JSON, i.e. when the first media range this server can satisfy is the
 * Table. NULL or "" is false. Ranges the server cannot produce (protobuf,
 * v1beta1 Tables, other "as=" kinds) are skipped.
 */
bool fakeapi__table_wanted(const char *accept);

#endif
