/*
 * ctrl/object.h - small helpers on unstructured objects (jansson), the ones
 * every controller writes: metadata fields, the controller owner, deletion.
 * Reentrant; results are borrowed from the object passed in.
 */
#ifndef CTRL_OBJECT_H
#define CTRL_OBJECT_H

#include <stdbool.h>
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* metadata.<field> as a string, or NULL. */
const char *ctrl_obj_meta(const json_t *obj, const char *field);

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
