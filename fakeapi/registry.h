/*
 * registry.h - the table of every kind the server serves.
 *
 * Built-in kinds come from the generated type tables (types.h: every served
 * built-in resource with its kind's message); each served version
 * of a CustomResourceDefinition adds an entry when the CRD is stored and
 * loses it when the CRD goes. Discovery, OpenAPI, routing, validation and the
 * store all read this table; nothing else describes a kind.
 *
 * Entries are immutable and reference-counted: a lookup returns a reference
 * the caller drops with fakeapi__resource_unref, so a CRD deleted
 * mid-request never pulls an entry from under a handler.
 *
 * Thread-safety: every function may be called from any thread; one mutex
 * guards the table (never held while calling out).
 */
#ifndef FAKEAPI_REGISTRY_H
#define FAKEAPI_REGISTRY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

enum {
    FAKEAPI__SUB_STATUS = 1 << 0,
    FAKEAPI__SUB_SCALE = 1 << 1,
    FAKEAPI__SUB_EVICTION = 1 << 2, /* pods/eviction */
    FAKEAPI__SUB_BINDING = 1 << 3,  /* pods/binding */
    FAKEAPI__SUB_LOG = 1 << 4,      /* pods/log */
    FAKEAPI__SUB_EXEC = 1 << 5,     /* pods/exec, pods/attach, pods/portforward */
    FAKEAPI__SUB_PROXY = 1 << 6,    /* pods|nodes|services/proxy */
    FAKEAPI__SUB_TOKEN = 1 << 7,    /* serviceaccounts/token */
};

/* How object names are checked (K8S-API.md item 26). */
typedef enum fakeapi__namerule {
    FAKEAPI__NAME_SUBDOMAIN = 0, /* DNS-1123 subdomain, <= 253 */
    FAKEAPI__NAME_LABEL,         /* DNS-1123 label, <= 63 */
    FAKEAPI__NAME_PATHSEGMENT,   /* anything but "", ".", "..", '/', '%' (RBAC) */
} fakeapi__namerule;

struct fakeapi__tres;
struct fakeapi__tmsg;

typedef struct fakeapi__resource {
    atomic_int refs;
    char *group;         /* "" for the core group */
    char *version;       /* "v1" */
    char *group_version; /* "v1" or "apps/v1": the apiVersion of objects */
    char *kind;          /* "Deployment" */
    char *list_kind;     /* "DeploymentList" */
    char *plural;        /* "deployments" */
    char *singular;      /* "deployment" */
    char *store_key;     /* "apps/deployments": shared by every version of a kind */
    bool namespaced;
    json_t *short_names; /* array of strings, never NULL */
    json_t *categories;  /* array of strings, never NULL */
    unsigned subresources;
    fakeapi__namerule name_rule;
    bool custom;                        /* from a CRD: no strategic merge patch */
    bool update_needs_rv;               /* PUT without resourceVersion is 422 (Lease) */
    bool storage_version;               /* the version objects are stored in */
    const char *const *field_selectors; /* fields beyond metadata.name/namespace */
    json_t *schema;                     /* CRD openAPIV3Schema, or NULL */
    json_t *printer_columns;            /* CRD additionalPrinterColumns, or NULL */
    char *scale_spec;                   /* JSON path of the desired replicas, ".spec.replicas" */
    char *scale_status;                 /* ".status.replicas" */
    char *scale_selector;               /* ".status.selector" or NULL */
    char *crd_name;                     /* "crontabs.stable.example.com" for custom kinds */
    const char *verbs;                  /* "create,delete,...": what the resource allows */
    bool stored;                        /* false for reviews and bindings: answered, never kept */
    const struct fakeapi__tres *row;    /* built-ins: the type-table row, else NULL */
    const struct fakeapi__tmsg *type;   /* built-ins: the kind's message, else NULL */
} fakeapi__resource;

typedef struct fakeapi__registry fakeapi__registry;

/* A registry holding the built-in kinds. NULL on allocation failure. */
fakeapi__registry *fakeapi__registry_new(void);
void fakeapi__registry_free(fakeapi__registry *reg);

/* Lookups return a new reference or NULL. group "" is core. */
fakeapi__resource *fakeapi__registry_find(fakeapi__registry *reg, const char *group,
                                          const char *version, const char *plural);
fakeapi__resource *fakeapi__registry_find_kind(fakeapi__registry *reg, const char *group_version,
                                               const char *kind);

/* The storage-version entry for a store key ("apps/deployments"), or NULL. */
fakeapi__resource *fakeapi__registry_find_key(fakeapi__registry *reg, const char *store_key);

/*
 * Every entry, in registration order (core first, then groups as added), as a
 * new array of references; free with fakeapi__registry_release. *n gets the
 * count.
 */
fakeapi__resource **fakeapi__registry_all(fakeapi__registry *reg, size_t *n);
void fakeapi__registry_release(fakeapi__resource **all, size_t n);

/* Bumped on every change (CRD added or removed): discovery caches key on it. */
unsigned long fakeapi__registry_generation(fakeapi__registry *reg);

/*
 * Serve (or re-serve) the kinds a CustomResourceDefinition declares. crd is the
 * stored object; its served versions replace whatever it served before.
 * Returns 0, or -1 with a message when the CRD is malformed (the caller has
 * validated it already, so this is for in-process use).
 */
int fakeapi__registry_add_crd(fakeapi__registry *reg, const json_t *crd, char *err, size_t errlen);

/* Stop serving the kinds of the CRD named name ("plural.group"). */
void fakeapi__registry_remove_crd(fakeapi__registry *reg, const char *name);

fakeapi__resource *fakeapi__resource_ref(fakeapi__resource *r);
void fakeapi__resource_unref(fakeapi__resource *r);

/* True if r allows verb ("get", "list", "watch", "create", ...). */
bool fakeapi__resource_allows(const fakeapi__resource *r, const char *verb);

/* True if r supports the subresource named sub ("status", "scale", "eviction"...). */
bool fakeapi__resource_has_sub(const fakeapi__resource *r, const char *sub);

/* The resource as Status details name it: "leases.coordination.k8s.io", "pods". */
void fakeapi__resource_qualified(const fakeapi__resource *r, char *buf, size_t len);

#endif
