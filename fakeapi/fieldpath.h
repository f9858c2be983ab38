/*
 * fieldpath.h - field sets: the paths of an object's fields, as server-side
 * apply records ownership of them.
 *
 * A path is a sequence of elements: a field name (".spec"), a map-list key
 * ("[name=\"nginx\"]", one or more key=value pairs sorted by name), a set
 * value ("[=\"x\"]") or a list index ("[0]"). A set holds paths as a tree
 * whose nodes keep their children in upstream's element order (field names,
 * then keys, then values, then indices; values compared as numbers, strings,
 * booleans, ...), so the fieldsV1 codec writes keys in the order
 * structured-merge-diff does: `f:name`, `k:{"name":"x"}`, `v:"x"`, `i:0`,
 * and "." for a path that is both a member and a parent.
 *
 * The field set of an object depends on its schema, reached through
 * fakeapi__fptype: one implementation over the built-in type tables
 * (types.h), one over a CRD's openAPIV3Schema, and the deduced one for
 * untyped data (granular maps, atomic lists). fakeapi__fp_object_set is
 * upstream's ToFieldSet: leaves, atomic values, list items (with their
 * key fields) and the keys of maps that are not declared fields.
 *
 * Owns nothing global. Pure functions on caller-owned data: any thread, one
 * owner per set.
 */
#ifndef FAKEAPI_FIELDPATH_H
#define FAKEAPI_FIELDPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "strbuf.h"

typedef enum fakeapi__pe_kind {
    FAKEAPI__PE_FIELD = 0, /* a field name, or a key of a map */
    FAKEAPI__PE_KEY,       /* a map-list item by its keys */
    FAKEAPI__PE_VALUE,     /* a set-list item by its value */
    FAKEAPI__PE_INDEX,     /* a list item by position */
} fakeapi__pe_kind;

/*
 * One path element. name for FIELD; value for KEY (a JSON object whose keys
 * are in sorted order) and VALUE (a scalar); index for INDEX. An element is
 * a value type: fakeapi__pe_deinit frees what it holds.
 */
typedef struct fakeapi__pe {
    fakeapi__pe_kind kind;
    long long index;
    char *name;
    json_t *value;
} fakeapi__pe;

/* Constructors: each copies (or takes a reference to) its argument. 0 or -1 on ENOMEM. */
int fakeapi__pe_field(fakeapi__pe *pe, const char *name);
int fakeapi__pe_key(fakeapi__pe *pe, const json_t *keys); /* keys are sorted by name */
int fakeapi__pe_value(fakeapi__pe *pe, const json_t *value);
void fakeapi__pe_index(fakeapi__pe *pe, long long index);
int fakeapi__pe_copy(fakeapi__pe *dst, const fakeapi__pe *src);
void fakeapi__pe_deinit(fakeapi__pe *pe);

/* Upstream's PathElement.Compare: <0, 0, >0. */
int fakeapi__pe_compare(const fakeapi__pe *a, const fakeapi__pe *b);
/* Upstream's value.Compare on JSON scalars and containers. */
int fakeapi__fp_value_compare(const json_t *a, const json_t *b);

/* Append the element as fieldsV1 writes it ("f:name", "k:{...}", "v:1", "i:0"). */
int fakeapi__pe_serialize(const fakeapi__pe *pe, fakeapi__strbuf *out);
/* Parse one fieldsV1 key; 0, or -1 when it is not one. */
int fakeapi__pe_parse(fakeapi__pe *pe, const char *text);
/* Append a path as upstream prints it: ".spec.containers[name=\"nginx\"].image". */
int fakeapi__fp_path_string(const fakeapi__pe *path, size_t n, fakeapi__strbuf *out);

/* ---- sets ---- */

typedef struct fakeapi__fpset fakeapi__fpset;

/* An empty set, or NULL on ENOMEM. _free(NULL) does nothing. */
fakeapi__fpset *fakeapi__fpset_new(void);
void fakeapi__fpset_free(fakeapi__fpset *s);
fakeapi__fpset *fakeapi__fpset_copy(const fakeapi__fpset *s);

/* Insert the path of n elements (copied). 0, or -1 on ENOMEM. n == 0 is a no-op. */
int fakeapi__fpset_insert(fakeapi__fpset *s, const fakeapi__pe *path, size_t n);
/* True if the path is a member. */
bool fakeapi__fpset_has(const fakeapi__fpset *s, const fakeapi__pe *path, size_t n);
/* True if the path is a member or a prefix of one. */
bool fakeapi__fpset_has_prefix(const fakeapi__fpset *s, const fakeapi__pe *path, size_t n);
bool fakeapi__fpset_empty(const fakeapi__fpset *s);
/* Number of member paths. */
size_t fakeapi__fpset_size(const fakeapi__fpset *s);
bool fakeapi__fpset_equal(const fakeapi__fpset *a, const fakeapi__fpset *b);

/*
 * New sets (NULL on ENOMEM): a ∪ b, a − b (members of a not in b), a ∩ b,
 * and a − b recursively (a member of b takes every path below it out too).
 */
fakeapi__fpset *fakeapi__fpset_union(const fakeapi__fpset *a, const fakeapi__fpset *b);
fakeapi__fpset *fakeapi__fpset_difference(const fakeapi__fpset *a, const fakeapi__fpset *b);
fakeapi__fpset *fakeapi__fpset_intersection(const fakeapi__fpset *a, const fakeapi__fpset *b);
fakeapi__fpset *fakeapi__fpset_recursive_difference(const fakeapi__fpset *a,
                                                    const fakeapi__fpset *b);

/*
 * In place, without copying what stays: s − b (as fakeapi__fpset_difference)
 * and s ∪ b (as fakeapi__fpset_union; -1 on ENOMEM, s then holds a part of
 * b), and the member path of n elements taken out. The first and last
 * return whether s changed; _add sets *changed when it did.
 */
bool fakeapi__fpset_subtract(fakeapi__fpset *s, const fakeapi__fpset *b);
int fakeapi__fpset_add(fakeapi__fpset *s, const fakeapi__fpset *b, bool *changed);
bool fakeapi__fpset_remove(fakeapi__fpset *s, const fakeapi__pe *path, size_t n);

/* The subtree under element pe (borrowed; NULL if none). */
const fakeapi__fpset *fakeapi__fpset_child(const fakeapi__fpset *s, const fakeapi__pe *pe);
/* A new set with only what s holds at and below the one-element path pe (NULL on ENOMEM). */
fakeapi__fpset *fakeapi__fpset_only(const fakeapi__fpset *s, const fakeapi__pe *pe);
/* True if pe itself is a member of s (a one-element path). */
bool fakeapi__fpset_member(const fakeapi__fpset *s, const fakeapi__pe *pe);

/*
 * Call fn for every member path, in upstream's order (a node's members, then
 * its children). Stops and returns fn's value when it is not 0.
 */
typedef int (*fakeapi__fpset_fn)(const fakeapi__pe *path, size_t n, void *ud);
int fakeapi__fpset_iterate(const fakeapi__fpset *s, fakeapi__fpset_fn fn, void *ud);

/* The fieldsV1 object of the set (a new reference; NULL on ENOMEM). */
json_t *fakeapi__fpset_to_json(const fakeapi__fpset *s);
/* The fieldsV1 text, byte-exact with upstream. Caller frees. */
char *fakeapi__fpset_to_text(const fakeapi__fpset *s);
/* Parse fieldsV1; *out gets a new set. 0, or -1 with a message in err. */
int fakeapi__fpset_from_json(const json_t *fields, fakeapi__fpset **out, char *err, size_t errlen);
/*
 * As fakeapi__fpset_from_json; *canonical tells whether fields is exactly
 * what fakeapi__fpset_to_json gives for the set (key order and spelling),
 * so that a caller may keep fields instead of encoding the set again.
 */
int fakeapi__fpset_from_json_canon(const json_t *fields, fakeapi__fpset **out, bool *canonical,
                                   char *err, size_t errlen);

/*
 * Check fields as fakeapi__fpset_from_json reads it without building the
 * set: 0 if it would decode (*canonical as _from_json_canon says), or -1
 * with a message in err.
 */
int fakeapi__fpset_check_json(const json_t *fields, bool *canonical, char *err, size_t errlen);
/*
 * Whether a member path of s is a member of the set that fields (canonical
 * fieldsV1, see above) holds: whether fakeapi__fpset_subtract would change
 * that set.
 */
bool fakeapi__fpset_meets_json(const fakeapi__fpset *s, const json_t *fields);
/* Whether every member path of s is a member there: whether fakeapi__fpset_add would not change it.
 */
bool fakeapi__fpset_within_json(const fakeapi__fpset *s, const json_t *fields);

/* ---- schemas ---- */

typedef enum fakeapi__fpkind {
    FAKEAPI__FPK_SCALAR = 0, /* a leaf */
    FAKEAPI__FPK_STRUCT,     /* an object with declared fields */
    FAKEAPI__FPK_MAP,        /* an object of like elements */
    FAKEAPI__FPK_LIST,
} fakeapi__fpkind;

enum { FAKEAPI__FPL_ATOMIC = 0, FAKEAPI__FPL_SET, FAKEAPI__FPL_MAP };

#define FAKEAPI__FP_MAX_KEYS 8

/*
 * What a schema node is, for one value. keys point into keybuf or into the
 * schema: pass nodes by pointer, never copy one.
 */
typedef struct fakeapi__fpnode {
    fakeapi__fpkind kind;
    bool atomic; /* struct or map: replaced whole */
    /*
     * A value that exists whenever its parent does in the Go object (a
     * built-in value struct; a list or map field without omitempty, null
     * when empty): its own path is not added or removed while the parent
     * stays, only what is inside it.
     */
    bool implicit;
    int list;                               /* FAKEAPI__FPL_*, for lists */
    const char *keys[FAKEAPI__FP_MAX_KEYS]; /* map list: key fields, sorted */
    size_t nkeys;
    char keybuf[256];
} fakeapi__fpnode;

struct fakeapi__fpops;

/*
 * A reference to a schema node: the implementation and its own pointers.
 * A zero fakeapi__fptype (ops NULL) is the deduced, untyped schema.
 * Plain values: copy freely; they borrow the schema they point into.
 */
typedef struct fakeapi__fptype {
    const struct fakeapi__fpops *ops;
    const void *a;
    const void *b;
} fakeapi__fptype;

typedef struct fakeapi__fpops {
    /* Describe t for value v (v may be NULL: absent). */
    void (*describe)(const fakeapi__fptype *t, const json_t *v, fakeapi__fpnode *out);
    /* The type of the member key of a struct or map; true if key is a declared field. */
    bool (*child)(const fakeapi__fptype *t, const char *key, fakeapi__fptype *out);
    /* The type of a list's items. */
    void (*elem)(const fakeapi__fptype *t, fakeapi__fptype *out);
    /* The default of map-list key field name for items of list t: a new reference, or NULL. */
    json_t *(*key_default)(const fakeapi__fptype *t, const char *name);
} fakeapi__fpops;

void fakeapi__fptype_describe(const fakeapi__fptype *t, const json_t *v, fakeapi__fpnode *out);
bool fakeapi__fptype_child(const fakeapi__fptype *t, const char *key, fakeapi__fptype *out);
void fakeapi__fptype_elem(const fakeapi__fptype *t, fakeapi__fptype *out);

/* The deduced schema (granular maps, atomic lists). */
fakeapi__fptype fakeapi__fptype_deduced(void);
/*
 * A built-in kind's schema from the type tables: msg is a const
 * fakeapi__tmsg * (types.h). A NULL msg gives the deduced schema.
 */
fakeapi__fptype fakeapi__fptype_builtin(const void *msg);
/*
 * A custom resource's schema over its openAPIV3Schema (borrowed; must
 * outlive the type). apiVersion, kind and metadata are typed as every
 * object's are. A NULL schema gives the deduced schema.
 */
fakeapi__fptype fakeapi__fptype_crd(const json_t *schema);

/*
 * The element that names list item item of list node (FAKEAPI__FPL_SET: its
 * value; FAKEAPI__FPL_MAP: its keys, a key field the item lacks taken from
 * the schema's default). Returns 0, or -1 with a message in err (an item
 * without a key field and no default, a non-object item of a map list, a
 * non-scalar set item).
 */
enum {
    /*
     * An apply configuration: refuse duplicate list items and map-list items
     * without their keys. Live objects are read leniently (duplicates are
     * owned whole, a missing key field is left out of the key).
     */
    FAKEAPI__FP_STRICT = 1 << 0,
};

int fakeapi__fp_list_item_pe(const fakeapi__fptype *list, const fakeapi__fpnode *node,
                             const json_t *item, unsigned flags, fakeapi__pe *out, char *err,
                             size_t errlen);

/*
 * The field set of obj under type t (upstream's ToFieldSet): *out gets a new
 * set. Returns 0, or -1 with a message in err (naming the path) when obj does
 * not fit the schema's list keys.
 */
int fakeapi__fp_object_set(const fakeapi__fptype *t, const json_t *obj, unsigned flags,
                           fakeapi__fpset **out, char *err, size_t errlen);

/*
 * A copy of s with every prefix of a member path that ends in a declared
 * field made a member too (upstream's EnsureNamedFieldsAreMembers). NULL on
 * ENOMEM.
 */
fakeapi__fpset *fakeapi__fpset_named_members(const fakeapi__fpset *s, const fakeapi__fptype *t);

#endif
