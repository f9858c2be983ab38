/*
 * types.h - the built-in API types, as static tables.
 *
 * Every message of every served built-in group-version (and of what they
 * import: meta/v1, intstr, resource, runtime) with its fields: JSON name,
 * protobuf number and wire type, whether repeated or a map, whether a Go
 * pointer, and the code-generation markers that drive list and patch
 * semantics (+listType, +listMapKey, +patchStrategy, +patchMergeKey,
 * +mapType, +structType, +optional, +required). Plus the resources the real
 * server serves for them (plural, scope, verbs, short names, categories,
 * subresources).
 *
 * The tables are generated (fakeapi/types_table.c, by scripts/gen_types.py
 * from fakeapi/types/facts.json, resources.txt and go-pointers.txt; facts.json
 * itself from the upstream definitions' extracted facts). They are const data:
 * nothing is parsed at start-up.
 *
 * Users: protobuf.c (decoding), discovery.c (OpenAPI), patch.c (strategic
 * merge keys), registry.c (the built-in resources), validation and defaulting.
 *
 * Thread-safety: read-only data and pure functions; any thread.
 */
#ifndef FAKEAPI_TYPES_H
#define FAKEAPI_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A field's value type. Scalars first; FAKEAPI__T_MSG names a message. */
typedef enum fakeapi__ttype {
    FAKEAPI__T_STRING = 1,
    FAKEAPI__T_BOOL,
    FAKEAPI__T_INT32,
    FAKEAPI__T_INT64,
    FAKEAPI__T_DOUBLE,
    FAKEAPI__T_BYTES,
    FAKEAPI__T_MSG,
} fakeapi__ttype;

/* Messages whose JSON is not an object of their fields (hand-written codecs upstream). */
typedef enum fakeapi__tspecial {
    FAKEAPI__S_NONE = 0,
    FAKEAPI__S_TIME,        /* meta/v1 Time: RFC 3339 seconds, null when zero */
    FAKEAPI__S_MICROTIME,   /* meta/v1 MicroTime: RFC 3339 with microseconds */
    FAKEAPI__S_DURATION,    /* meta/v1 Duration: a Go duration string */
    FAKEAPI__S_QUANTITY,    /* resource.Quantity: a string (a number accepted) */
    FAKEAPI__S_INTORSTRING, /* intstr.IntOrString: a bare number or string */
    FAKEAPI__S_RAW,         /* runtime.RawExtension, meta/v1 FieldsV1, apiextensions JSON: raw JSON */
    FAKEAPI__S_SLICE,       /* a Go slice type: the JSON is the bare array of field 1 */
    FAKEAPI__S_CUSTOM,      /* other custom JSON (GroupVersion, JSONSchemaPropsOr*) */
} fakeapi__tspecial;

enum {
    FAKEAPI__F_REPEATED = 1 << 0,  /* a list (or, with map_key, a map) */
    FAKEAPI__F_OMITEMPTY = 1 << 1, /* JSON tag omitempty */
    FAKEAPI__F_INLINE = 1 << 2,    /* Go-embedded: its fields sit in the parent's JSON */
    FAKEAPI__F_POINTER = 1 << 3,   /* a scalar that is a Go pointer: a zero value is kept */
    FAKEAPI__F_OPTIONAL = 1 << 4,  /* +optional */
    FAKEAPI__F_REQUIRED = 1 << 5,  /* +required */
    FAKEAPI__F_MAP = 1 << 6,       /* a map<key,value>; key type in map_key */
    FAKEAPI__F_NOJSON = 1 << 7,    /* never in JSON (json:"-" or written by the type itself) */
};

/* +listType (or, without it, what the patch strategy implies). */
typedef enum fakeapi__tlist {
    FAKEAPI__L_NONE = 0,
    FAKEAPI__L_ATOMIC,
    FAKEAPI__L_SET,
    FAKEAPI__L_MAP,
} fakeapi__tlist;

enum {
    FAKEAPI__P_MERGE = 1 << 0,      /* +patchStrategy=merge */
    FAKEAPI__P_RETAINKEYS = 1 << 1, /* +patchStrategy=retainKeys */
    FAKEAPI__P_REPLACE = 1 << 2,    /* +patchStrategy=replace */
};

typedef struct fakeapi__tfield {
    const char *json;       /* JSON key ("" for an inline or no-JSON field) */
    const char *proto;      /* proto field name */
    uint32_t number;        /* protobuf field number */
    uint8_t type;           /* fakeapi__ttype of the value (map: of the map's value) */
    uint8_t map_key;        /* fakeapi__ttype of a map's key, else 0 */
    uint8_t list;           /* fakeapi__tlist (a map: L_ATOMIC for +mapType=atomic) */
    uint8_t patch;          /* FAKEAPI__P_* */
    uint16_t flags;         /* FAKEAPI__F_* */
    int16_t msg;            /* message index when type is FAKEAPI__T_MSG, else -1 */
    const char *merge_key;  /* +patchMergeKey, or NULL */
    const char *list_keys;  /* +listMapKey names, comma-separated, or NULL */
} fakeapi__tfield;

typedef struct fakeapi__tmsg {
    const char *name;       /* "k8s.io.api.apps.v1.Deployment" */
    const char *short_name; /* "Deployment" */
    const fakeapi__tfield *fields;
    uint16_t nfields;       /* fields sorted by number */
    uint8_t special;        /* fakeapi__tspecial */
    bool atomic;            /* +structType=atomic (or +mapType=atomic on the type) */
} fakeapi__tmsg;

/* One served resource (or subresource, "pods/status"). */
typedef struct fakeapi__tres {
    const char *group;      /* "" for core */
    const char *version;
    const char *resource;   /* "deployments" or "deployments/scale" */
    const char *kind;       /* "Deployment"; for a subresource, its body's kind */
    const char *kind_group_version; /* the body's group-version ("autoscaling/v1" for scale) */
    int16_t msg;            /* the body's message, or -1 */
    int16_t list_msg;       /* the list message, or -1 (subresources, reviews) */
    bool namespaced;
    bool storage;           /* the version this kind is stored in */
    const char *verbs;      /* comma-separated */
    const char *short_names; /* comma-separated, "" for none */
    const char *categories; /* comma-separated, "" for none */
} fakeapi__tres;

extern const fakeapi__tmsg fakeapi__tmsgs[];
extern const size_t fakeapi__ntmsgs;
extern const fakeapi__tres fakeapi__tress[];
extern const size_t fakeapi__ntress;
/* The upstream sources the tables came from: "k8s.io/api@<commit>, ..." */
extern const char fakeapi__types_source[];

/* The message named name ("k8s.io.api.apps.v1.Deployment"), or NULL. */
const fakeapi__tmsg *fakeapi__type_find(const char *name);

/* The message of the kind a group-version serves ("apps/v1", "Deployment"), or NULL. */
const fakeapi__tmsg *fakeapi__type_of_kind(const char *group_version, const char *kind);

/* The message at index i of fakeapi__tmsgs (a field's msg), or NULL for -1. */
const fakeapi__tmsg *fakeapi__type_at(int i);

/* The field numbered number, or NULL. */
const fakeapi__tfield *fakeapi__type_field_num(const fakeapi__tmsg *m, uint32_t number);

/*
 * The field whose JSON key is key (keylen bytes), looking through inline
 * fields: *owner gets the message that declares it (m itself or an inlined
 * message), if owner is not NULL. NULL if m has no such field.
 */
const fakeapi__tfield *fakeapi__type_field_json(const fakeapi__tmsg *m, const char *key,
                                                size_t keylen, const fakeapi__tmsg **owner);

/* The resource row for group/version/resource ("pods" or "pods/status"), or NULL. */
const fakeapi__tres *fakeapi__type_resource(const char *group, const char *version,
                                            const char *resource);

#endif
