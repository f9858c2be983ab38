/*
 * audit_snapshot.h - a cluster's objects when an audit log starts (private
 * to libscenario): YAML or JSON manifests (a List as `kubectl get -A -o
 * yaml` writes it, several documents, or single objects), or a fakeapi
 * store (`fakeapi serve --db FILE`), which is read from a copy so that it
 * is never changed. One thread at a time.
 */
#ifndef SCN_AUDIT_SNAPSHOT_H
#define SCN_AUDIT_SNAPSHOT_H

#include <jansson.h>

#include "scn/scenario.h"

/* 0 and a new array of objects (Lists expanded; each with apiVersion, kind
 * and metadata.name) in *objects; or SCN_ERR_INPUT (the file, line or item
 * in *err), SCN_ERR_IO, SCN_ERR_NOMEM with *objects untouched. */
int scn__snapshot_read(const char *path, json_t **objects, scn_error *err);

#endif
