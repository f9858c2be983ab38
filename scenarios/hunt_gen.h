/*
 * hunt_gen.h - inputs for `scenario hunt` from a CustomResourceDefinition's
 * openAPIV3Schema, as Acto makes them: changes to a custom resource, each
 * one valid (the API server accepts it) or invalid (it must answer 422),
 * and sequences of them; then base scenarios that apply a custom resource
 * and make those changes, for the campaign engine (scenarios/hunt.c).
 * docs/scenarios.md, "Inputs from a CRD schema", says what each schema
 * construct yields.
 *
 * Every change is classified by simulating the API server on the whole
 * object (prune unknown fields, prune nulls the schema does not allow,
 * apply defaults, validate, as fakeapi and kube-apiserver do), so a label
 * never rests on one keyword alone; candidates whose class differs from
 * what they were made for are dropped.
 *
 * Ownership: results are new allocations the caller frees with the
 * matching _free; schemas and objects passed in are borrowed and never
 * modified. Threads: reentrant, no global state; a regex is compiled per
 * call (POSIX regcomp).
 */
#ifndef SCN_HUNT_GEN_H
#define SCN_HUNT_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "scn/scenario.h"

/* Bounds on what is generated, whatever the schema. */
#define SCN_GEN_MAX_PER_FIELD 16 /* changes of one field's value */
#define SCN_GEN_MAX_CHANGES 4096 /* changes of one object */
#define SCN_GEN_MAX_DEPTH 24     /* schema levels walked */
#define SCN_GEN_MAX_SEQS 100000  /* sequences, and so base scenarios */

typedef struct scn_gen_change {
    char *path;    /* JSON pointer of the patch operation ("/spec/replicas"); when a
                    * missing parent must be added first, the parent's */
    char *field;   /* the field the change is about, dotted ("spec.containers[0].port") */
    json_t *value; /* the new value at path; NULL: remove the field */
    bool valid;    /* the server accepts the change */
    char *why;     /* "minimum", "enum value 2 of 3", "remove optional", "string for integer" */
} scn_gen_change;

typedef struct scn_gen_options {
    uint64_t seed;     /* picks the changes after the first of a sequence, and the
                        * sample when max_seqs cuts */
    unsigned seq_len;  /* changes per sequence (0 = 1) */
    unsigned max_seqs; /* sequences; 0: one starting with each change of the base */
    bool no_invalid;   /* only valid changes */
    int64_t settle_ns; /* scn_hunt_crd_bases: virtual time after the custom resource
                        * and after each valid change (0 = 30 s) */
} scn_gen_options;

/* A sequence: changes made one after the other, each generated against
 * the object as stored after the valid ones before it. */
typedef struct scn_gen_seq {
    scn_gen_change *changes;
    size_t n;
} scn_gen_seq;

/*
 * A minimal valid object for schema: required fields, defaults, the
 * smallest valid value of each (minimum, minItems items, the first enum
 * value, a short string matching the pattern). apiVersion, kind and
 * metadata at the root are left to the caller. 0 and a new object in
 * *out; SCN_ERR_INPUT (no valid instance found: err says where) or
 * SCN_ERR_NOMEM with *out untouched.
 */
int scn_gen_instance(const json_t *schema, json_t **out, scn_error *err);

/*
 * Every change of base (an object valid for schema; root apiVersion, kind,
 * metadata and status are not changed): per field, valid values within its
 * constraints and at their bounds, removal of optional fields, and unless
 * o->no_invalid invalid values (beyond the bounds, outside the enum, not
 * matching the pattern, of another type, removal of required fields).
 * Deterministic: the same inputs give the same changes in the same order
 * (schema order). o may be NULL. 0 and a new array in *out (*n entries;
 * scn_gen_changes_free); SCN_ERR_INPUT (base not valid: err says why) or
 * SCN_ERR_NOMEM with *out untouched.
 */
int scn_gen_changes(const json_t *schema, const json_t *base, const scn_gen_options *o,
                    scn_gen_change **out, size_t *n, scn_error *err);
void scn_gen_changes_free(scn_gen_change *c, size_t n);

/*
 * Sequences of o->seq_len changes from base: with o->max_seqs 0, one for
 * each change of base (it first, then changes drawn with o->seed from the
 * changes of the object reached); else o->max_seqs of them, their first
 * changes a seeded sample. Returns as scn_gen_changes; free with
 * scn_gen_seqs_free.
 */
int scn_gen_sequences(const json_t *schema, const json_t *base, const scn_gen_options *o,
                      scn_gen_seq **out, size_t *n, scn_error *err);
void scn_gen_seqs_free(scn_gen_seq *s, size_t n);

/*
 * The object as the server stores it after change c on obj: the patch
 * operation, then unknown fields and disallowed nulls pruned and defaults
 * applied. 0 and a new object in *out, with *valid saying whether it
 * passes the schema; SCN_ERR_INPUT if the operation does not apply (a
 * missing parent), SCN_ERR_NOMEM.
 */
int scn_gen_apply(const json_t *schema, const json_t *obj, const scn_gen_change *c, json_t **out,
                  bool *valid);

/* Does obj pass schema as the API server validates a custom resource
 * (after pruning and defaulting, which the caller has done)? When not, why
 * (len bytes, may be NULL) gets the first cause the server would answer,
 * as "<field>: <message>" (fakeapi_schema_validate). */
bool scn_gen_check(const json_t *schema, const json_t *obj, char *why, size_t len);

/*
 * One base scenario per change sequence of a custom resource: fixtures
 * (crd_path, then fixtures[], absolute names), the controller (NULL: none),
 * apply the custom resource (cr_path, or NULL: scn_gen_instance named
 * "hunt" in "default"), advance o->settle_ns, then per change: a valid one
 * as a JSON patch step and an advance; an invalid one as a `request` step
 * that must answer 422 and an `expect` that the field kept its value. Each
 * scenario is parsed by scn_scenario_parse (its file "<crd_path>:hunt-<i>",
 * so relative names start at the CRD's directory) and named after its
 * changes. 0 and a new array of *n scenarios (scn_scenario_free each, then
 * free the array); SCN_ERR_IO (a file cannot be read), SCN_ERR_INPUT (not
 * a CRD, no schema, a custom resource of another kind or not valid),
 * SCN_ERR_NOMEM, with *out untouched and *err filled if non-NULL.
 */
int scn_hunt_crd_bases(const char *crd_path, const char *controller, const char *cr_path,
                       const char *const *fixtures, size_t n_fixtures, const scn_gen_options *o,
                       scn_scenario ***out, size_t *n, scn_error *err);

#endif
