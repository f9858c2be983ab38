/*
 * objmeta.h - small helpers on an object's metadata (jansson objects).
 * Reentrant. Borrowed results point into the object passed in.
 */
#ifndef FAKEAPI_OBJMETA_H
#define FAKEAPI_OBJMETA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "registry.h"

/* obj.metadata, created empty if absent (NULL only on ENOMEM or non-object). */
json_t *fakeapi__meta(json_t *obj);
/* A string field of metadata, or NULL (borrowed). */
const char *fakeapi__meta_str(const json_t *obj, const char *field);
/* Set a string field of metadata (copied). */
int fakeapi__meta_set_str(json_t *obj, const char *field, const char *value);

/* metadata.resourceVersion as an integer; 0 if absent, -1 if not a number. */
long long fakeapi__meta_rv(const json_t *obj);

/*
 * Check a name against the resource's rule (DNS-1123 subdomain or label, or
 * path segment). Returns 0, or -1 with the API server's wording in msg, e.g.
 * "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric
 * characters, '-' or '.', and must start and end with an alphanumeric character".
 */
int fakeapi__name_check(fakeapi__namerule rule, const char *name, char *msg, size_t len);

/*
 * Check a generateName prefix as the API server's ValidateObjectMeta does:
 * the name rule with the trailing part allowed (a trailing '-' is masked,
 * as upstream's maskTrailingDash does; path segments are only checked for
 * '/' and '%'). Returns 0, or -1 with the message in msg.
 */
int fakeapi__generate_name_check(fakeapi__namerule rule, const char *prefix, char *msg, size_t len);

/*
 * Check metadata.labels and metadata.annotations as the API server does:
 * label keys and annotation keys are [prefix/]name (prefix a DNS subdomain,
 * name <= 63 of [A-Za-z0-9._-] starting and ending alphanumeric); label
 * values <= 63 of the same (may be empty); annotations <= 256 KiB in all.
 * Returns 0, or -1 with the field ("metadata.labels") and the reason.
 */
int fakeapi__labels_check(const json_t *obj, char *field, size_t flen, char *msg, size_t mlen);

/* True if finalizers (array) contains s. */
bool fakeapi__has_finalizer(const json_t *obj, const char *s);
/* Remove every occurrence of s from metadata.finalizers; true if one was removed. */
bool fakeapi__remove_finalizer(json_t *obj, const char *s);
/* Number of metadata.finalizers. */
size_t fakeapi__finalizer_count(const json_t *obj);
/* A graceful deletion still running: metadata.deletionGracePeriodSeconds
 * > 0 (a pod whose kubelet has yet to stop it). Such an object stays when
 * its last finalizer goes; only a delete with grace 0 removes it. */
bool fakeapi__grace_pending(const json_t *obj);

/* A compact JSON serialisation of metadata.labels, or NULL when there are none. */
char *fakeapi__labels_text(const json_t *obj);

/*
 * True when a and b differ outside metadata and status, i.e. an update
 * between them bumps metadata.generation.
 */
bool fakeapi__spec_changed(const json_t *a, const json_t *b);

/* Equal except for metadata.resourceVersion and managedFields: a no-op write. */
bool fakeapi__same_object(const json_t *a, const json_t *b);

/* uids of metadata.ownerReferences as a new array (possibly empty). */
json_t *fakeapi__owner_uids(const json_t *obj);

#endif
