/*
 * decode.h - the decode step of a write: would the kind's Go type accept
 * this JSON? kube-apiserver decodes every request body (and every patched
 * object) into the kind's Go struct before anything else, so a value of the
 * wrong JSON type ("data": "x" on a ConfigMap) is an error there, never a
 * stored object that no typed client can read back.
 *
 * What a kind's fields are is data: a table of messages (decode_types.c)
 * shaped like ../shared/k8s-types (a field: JSON name, scalar or message
 * type, list or map of it), so that a table generated from those files can
 * replace the hand-written one. A message without fields is any object.
 * Unknown fields are not errors here (pruning and fieldValidation=Strict
 * are other steps); null is accepted everywhere, as Go leaves the zero value.
 *
 * The first error in document order is reported, as Go's decoder does, in
 * one of the dialects of the API server's code paths (see
 * fakeapi__decode_dialect).
 *
 * Reentrant; the tables are constant.
 */
#ifndef FAKEAPI_DECODE_H
#define FAKEAPI_DECODE_H

#include <stddef.h>
#include <jansson.h>

#include "registry.h"
#include "strbuf.h"

/* The type of a field's value, or of its elements for lists and maps. */
typedef enum fakeapi__dtype {
    FAKEAPI__D_STRING = 0,
    FAKEAPI__D_BOOL,
    FAKEAPI__D_INT32,
    FAKEAPI__D_INT64,
    FAKEAPI__D_DOUBLE,
    FAKEAPI__D_BYTES,   /* a base64 string (Go []byte) */
    FAKEAPI__D_TIME,    /* meta/v1 Time and MicroTime: a string (their own UnmarshalJSON) */
    FAKEAPI__D_ANY,     /* Quantity, IntOrString, RawExtension, FieldsV1: not checked */
    FAKEAPI__D_MESSAGE, /* a struct: msg */
} fakeapi__dtype;

typedef enum fakeapi__dshape {
    FAKEAPI__D_ONE = 0, /* a single value */
    FAKEAPI__D_LIST,    /* repeated: a JSON array */
    FAKEAPI__D_MAP,     /* map<string, type>: a JSON object */
} fakeapi__dshape;

typedef struct fakeapi__dmsg fakeapi__dmsg;

typedef struct fakeapi__dfield {
    const char *json; /* the JSON key; NULL ends a field list */
    fakeapi__dtype type;
    fakeapi__dshape shape;
    const fakeapi__dmsg *msg; /* FAKEAPI__D_MESSAGE */
    const char *go;           /* the Go element type when not derived from type
                                 ("v1.SecretType" for a named string), or NULL */
} fakeapi__dfield;

struct fakeapi__dmsg {
    const char *go;                /* "v1.ObjectMeta": Go package alias and struct name */
    const fakeapi__dfield *fields; /* NULL: any object */
};

/* A served kind: its group, its kind, the fields of its root object. */
typedef struct fakeapi__dkind {
    const char *group; /* "" for core; NULL ends the table */
    const char *kind;
    const fakeapi__dfield *fields;
} fakeapi__dkind;

/* The built-in kinds' table (decode_types.c). */
extern const fakeapi__dkind fakeapi__decode_kinds[];
/* The root of a custom resource: apiVersion, kind, metadata. */
extern const fakeapi__dfield fakeapi__decode_custom_root[];

typedef enum fakeapi__decode_code {
    FAKEAPI__DECODE_OK = 0,
    FAKEAPI__DECODE_TYPE,     /* a value of the wrong JSON type */
    FAKEAPI__DECODE_NUMBER,   /* a number that does not fit the integer type */
    FAKEAPI__DECODE_BASE64,   /* a []byte string that is not base64 */
    FAKEAPI__DECODE_TIME,     /* a Time that is not a string */
    FAKEAPI__DECODE_TYPEMETA, /* apiVersion or kind is not a string */
    FAKEAPI__DECODE_VALUE,    /* a type decoding itself refused the value (IntOrString's int32) */
    FAKEAPI__DECODE_QUANTITY, /* a type's own parser refused the string (Quantity, Time):
                                 text holds its message */
} fakeapi__decode_code;

/* What went wrong, for the message formatters. */
typedef struct fakeapi__decode_error {
    fakeapi__decode_code code;
    char go_struct[64];  /* the struct holding the field: "ConfigMap", "ObjectMeta" */
    char go_path[256];   /* JSON names from the root, as encoding/json reports: "metadata.labels" */
    char full_path[512]; /* with map keys and positions: ".metadata.labels.a", ".subsets[0]" */
    char go_type[128];   /* the Go type decoded into: "map[string]string", "string" */
    char target[16];     /* its reflect kind: map, slice, struct, string, bool, int32, ... */
    char number[48];     /* FAKEAPI__DECODE_NUMBER: the number (reprinted: 1e3 shows as 1000) */
    size_t offset;       /* FAKEAPI__DECODE_BASE64: the first bad input byte */
    const char *text;    /* FAKEAPI__DECODE_QUANTITY: the message (static or in detail) */
    char detail[400];    /* a message built for this error (a time's parse error) */
    const json_t *value; /* the offending value (borrowed from the checked object) */
} fakeapi__decode_error;

/*
 * Check obj against the table of the kind res serves (custom kinds: only
 * apiVersion, kind and metadata). Returns 0, or -1 with err filled in (err
 * may be NULL). Nothing is modified.
 */
int fakeapi__decode_check(const fakeapi__resource *res, const json_t *obj,
                          fakeapi__decode_error *err);

/* The decoder whose wording a message follows. */
typedef enum fakeapi__decode_dialect {
    /* encoding/json (create, update, JSON and merge patch results):
     * "json: cannot unmarshal string into Go struct field ConfigMap.data of
     * type map[string]string" */
    FAKEAPI__DIALECT_JSON = 0,
    /* apimachinery's unstructured converter (strategic merge patch results):
     * "cannot restore map from string" */
    FAKEAPI__DIALECT_UNSTRUCTURED,
    /* structured-merge-diff's typed values (server-side apply), approximated:
     * ".data: expected map, got &{x}" */
    FAKEAPI__DIALECT_APPLY,
} fakeapi__decode_dialect;

/* The error's message in dialect d, NUL-terminated in buf (cut to len). */
void fakeapi__decode_message(const fakeapi__decode_error *err, fakeapi__decode_dialect d, char *buf,
                             size_t len);

/*
 * Go's %v of v as json.Unmarshal would hold it (map[a:1 b:[x y]], <nil>),
 * as a new string (caller frees), cut at max bytes; NULL on ENOMEM.
 */
char *fakeapi__decode_gofmt(const json_t *v, size_t max);

/* Append Go's %q of s (strconv.Quote; bytes past ASCII are kept as they are). */
void fakeapi__go_quote(fakeapi__strbuf *b, const char *s);

/*
 * Decode base64 as Go's base64.StdEncoding does (padding required, \r and
 * \n skipped). Returns -1 when s is valid, else the offset Go reports in
 * "illegal base64 data at input byte N".
 */
long fakeapi__base64_error(const char *s, size_t n);

/* Go's %v of a float64 into buf: the shortest digits that read back the
 * same, in exponent form when the exponent is below -4 or at least 6
 * (1e+06); NaN, +Inf, -Inf. */
void fakeapi__go_float(char *buf, size_t len, double d);

/* n bytes as standard base64 with padding: a new NUL-terminated string
 * (free()), its length in *len if non-NULL; NULL on ENOMEM. */
char *fakeapi__base64_encode(const void *p, size_t n, size_t *len);

#endif
