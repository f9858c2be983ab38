/*
 * scenario_int.h - internals shared by the scenario parser and the
 * condition evaluator: field paths.
 *
 * A path names a value inside an object, jq-like:
 *   .status.replicas                          keys
 *   .spec.containers[0].image                 array indexes (0-based)
 *   .metadata.labels['app.kubernetes.io/name'] quoted keys ('...' or "...";
 *                                             no escapes inside)
 *   .                                         the object itself
 * A plain key runs up to the next '.' or '['; it cannot be empty.
 */
#ifndef SCN_SCENARIO_INT_H
#define SCN_SCENARIO_INT_H

#include <stddef.h>
#include <jansson.h>

/* 0 if path is well formed, else -1 with what is wrong in msg. */
int scn__path_check(const char *path, char *msg, size_t len);

/* The value at path in v (borrowed from v), or NULL if there is none or
 * the path is malformed. */
json_t *scn__path_get(const json_t *v, const char *path);

#endif
