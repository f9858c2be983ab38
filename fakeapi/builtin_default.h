/*
 * builtin_default.h - what the API server fills in on built-in objects:
 * the defaulting functions of each group-version (pod specs and every pod
 * template, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob,
 * Service, PersistentVolumeClaim, Namespace, Secret), the admission plugins
 * that add to every Pod (DefaultTolerationSeconds, ServiceAccount,
 * Priority), the generated selector of a Job, a Service's cluster IP, and
 * which kinds carry metadata.generation.
 *
 * Defaults run on every new state (create, update, a patch's result) before
 * validation, as the server decodes (and so defaults) before it validates.
 *
 * Called from the write verbs; a function taking the store needs the store
 * lock (inside the write's transaction). Otherwise reentrant.
 */
#ifndef FAKEAPI_BUILTIN_DEFAULT_H
#define FAKEAPI_BUILTIN_DEFAULT_H

#include <stdbool.h>
#include <jansson.h>

#include "registry.h"
#include "store.h"

/* Fill in the defaults of res's kind on obj (built-in kinds; others untouched).
 * -1 on ENOMEM (obj then partly defaulted). */
int fakeapi__builtin_default(const fakeapi__resource *res, json_t *obj);

/* Does the kind's strategy keep metadata.generation (1 on create, +1 on a
 * spec change)? Custom kinds do; ConfigMaps, Secrets, Pods, Services... not. */
bool fakeapi__builtin_has_generation(const fakeapi__resource *res);

/*
 * After the server stamped a new object's uid: a Job without
 * spec.manualSelector gets its generated selector and template labels
 * (fakeapi__builtin_validate_generated then checks what the user had set).
 */
void fakeapi__builtin_after_stamp(const fakeapi__resource *res, json_t *obj);

/*
 * A new Service's cluster IPs: a requested one must be inside the service
 * range (10.96.0.0/12) and free; none requested gets a free one ("None" is
 * kept, ExternalName gets none). On update cur is the stored Service: its
 * IPs are kept when obj leaves them out, and may not change. Returns 0, or
 * -1 with the cause's field and message (for a 422) in field/msg; -2 on a
 * storage error. Holds the store lock.
 */
int fakeapi__builtin_cluster_ip(fakeapi__store *store, const fakeapi__resource *res, json_t *obj,
                                const json_t *cur, char *field, size_t flen, char *msg,
                                size_t mlen);

#endif
