/*
 * scn/state_mask.h - the cluster state of a run as canonical JSON, with the
 * fields that differ between equal runs masked, so that two runs (two
 * controller builds, two seeds) can be compared object by object.
 *
 * Masked by default (each replaced by the string "<masked>"; a field that
 * is absent stays absent, so a deletionTimestamp that appears still shows):
 *   .metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp,
 *   .metadata.deletionTimestamp, .metadata.managedFields[*].time,
 *   .metadata.ownerReferences[*].uid, an Event's involvedObject (regarding)
 *   uid and resourceVersion,
 *   and every string anywhere that is an RFC 3339 time ("<time>").
 * Generated names (metadata.generateName G, name G + suffix) become
 * G + "<generated-K>", K counting from 1 in creation order among the
 * objects of one kind, namespace, prefix and controller owner; every string
 * in the state equal to such a name (a status field naming it, an owner
 * reference) is replaced the same way. An Event named as client-go names
 * them, <object>.<hex time>, counts as generated with prefix "<object>.".
 *
 * Paths ("specs") to ignore or keep, as the scenario's `diff: {ignore: [...],
 * keep: [...]}` and `scenario diff --ignore SPEC` write them:
 *   [KIND:]PATH    KIND is a kind ("Pod") or apiVersion/kind ("apps/v1/Deployment");
 *                  without it every kind.
 *   PATH           .a.b, .a['x.y'], .a[0], [*] (every item), .* (every key);
 *                  "." alone is the object itself (the object is left out).
 * An ignored path is masked in every object it matches; a kept path is
 * exempt from the default masks (e.g. "CronTask:.status.lastScheduleTime").
 *
 * The masked state is a JSON array of the masked objects sorted by
 * (apiVersion, kind, namespace, masked name); scn_state_text prints it one
 * object a line with sorted keys, so equal states give equal text.
 *
 * Ownership: a scn_mask and a scn_masker are the caller's (…_free); objects
 * passed in are borrowed; states handed out are new references.
 * Threads: a mask is read-only once built and may be shared; a masker is
 * used by one thread at a time (a run's driver).
 */
#ifndef SCN_STATE_MASK_H
#define SCN_STATE_MASK_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "scn/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct scn_mask scn_mask;

/* A mask with the defaults above. 0, or SCN_ERR_NOMEM. */
int scn_mask_new(scn_mask **out);
void scn_mask_free(scn_mask *m);

/* Mask spec too (ignore) / exempt it from the default masks (keep). 0, or
 * SCN_ERR_INPUT with what is wrong in *err (field "ignore"/"keep"), or
 * SCN_ERR_NOMEM. The spec is copied. */
int scn_mask_ignore(scn_mask *m, const char *spec, scn_error *err);
int scn_mask_keep(scn_mask *m, const char *spec, scn_error *err);

/* Add a scenario's `diff: {ignore, keep}` (already checked by the parser). */
int scn_mask_add_scenario(scn_mask *m, const scn_scenario *sc, scn_error *err);

/* 0 if spec is well formed, else SCN_ERR_INPUT and why in msg. */
int scn_mask_check_spec(const char *spec, char *msg, size_t len);

/*
 * A masker remembers, over the snapshots of one run, which placeholder each
 * generated name got, so that an object keeps its placeholder from one
 * quiescent point to the next (names seen first in the same snapshot are
 * ordered by creationTimestamp, then by their masked content, then by name).
 * m is borrowed and must outlive the masker.
 */
typedef struct scn_masker scn_masker;
int scn_masker_new(const scn_mask *m, scn_masker **out);
void scn_masker_free(scn_masker *mk);

/* The masked state of objects (an array of objects, borrowed) into *out (a
 * new array). 0, SCN_ERR_INPUT (objects is not an array), SCN_ERR_NOMEM. */
int scn_masker_apply(scn_masker *mk, const json_t *objects, json_t **out);

/* One snapshot on its own: scn_masker_apply with a fresh masker. */
int scn_state_mask(const scn_mask *m, const json_t *objects, json_t **out);

/* A masked state as text, one object a line with sorted keys (malloc'ed,
 * caller frees); NULL on allocation failure. */
char *scn_state_text(const json_t *state);

/* FNV-1a of scn_state_text: equal states, equal hashes. */
uint64_t scn_state_hash(const json_t *state);

#ifdef __cplusplus
}
#endif

#endif
