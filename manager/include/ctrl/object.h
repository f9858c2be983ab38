/*
 * ctrl/object.h - small helpers on unstructured objects (jansson), the ones
 * every controller writes: metadata fields, labels and annotations, fields
 * by dotted path, the controller owner, deletion. Reentrant; results are
 * borrowed from the object passed in. Owner references, finalizers and
 * create-or-update are in ctrl/controllerutil.h, conditions in
 * ctrl/conditions.h.
 */
#ifndef CTRL_OBJECT_H
#define CTRL_OBJECT_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "ctrl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* metadata.<field> as a string, or NULL. */
const char *ctrl_obj_meta(const json_t *obj, const char *field);

/* The usual metadata fields, or NULL (generation: 0 when absent). */
const char *ctrl_obj_name(const json_t *obj);
const char *ctrl_obj_namespace(const json_t *obj);
const char *ctrl_obj_uid(const json_t *obj);
const char *ctrl_obj_resource_version(const json_t *obj);
int64_t ctrl_obj_generation(const json_t *obj);
/* Top-level apiVersion and kind, or NULL. */
const char *ctrl_obj_api_version(const json_t *obj);
const char *ctrl_obj_kind(const json_t *obj);

/* metadata.labels[key] / metadata.annotations[key], or NULL. */
const char *ctrl_obj_label(const json_t *obj, const char *key);
const char *ctrl_obj_annotation(const json_t *obj, const char *key);
/* Set (value copied) or, with value NULL, remove a label or annotation;
 * the maps are created as needed. 0, CTRL_ERR_ARG (obj not an object, or
 * metadata or the map is not an object) or CTRL_ERR_NOMEM. */
int ctrl_obj_set_label(json_t *obj, const char *key, const char *value);
int ctrl_obj_set_annotation(json_t *obj, const char *key, const char *value);

/*
 * Fields by dotted path of object members ("spec.replicas",
 * "spec.template.metadata.labels"; no array indexes, no keys with dots).
 * ctrl_obj_get: the value (borrowed) or NULL. The typed getters answer def
 * when the field is missing or of another type (integers: a JSON integer,
 * or a real with an integral value).
 */
json_t *ctrl_obj_get(const json_t *obj, const char *path);
const char *ctrl_obj_get_string(const json_t *obj, const char *path);
int64_t ctrl_obj_get_int(const json_t *obj, const char *path, int64_t def);
bool ctrl_obj_get_bool(const json_t *obj, const char *path, bool def);
/*
 * Set the field at path to value (taken over, also on error), creating the
 * objects on the way. 0, CTRL_ERR_ARG (a NULL argument, an empty path
 * step, or a step through something that is not an object) or
 * CTRL_ERR_NOMEM.
 */
int ctrl_obj_set(json_t *obj, const char *path, json_t *value);
/* Remove the field at path: true when it was there. */
bool ctrl_obj_remove(json_t *obj, const char *path);

/* metadata.deletionTimestamp is set: the object is being deleted. */
bool ctrl_obj_deleting(const json_t *obj);

/*
 * The uid of obj's controller owner (ownerReferences[].controller true) when
 * it is of kind in group ("" for core; any version), else NULL.
 */
const char *ctrl_obj_controller_uid(const json_t *obj, const char *group, const char *kind);

#ifdef __cplusplus
}
#endif

#endif
