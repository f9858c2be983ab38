/*
 * builtin_valid.h - the validation rules of the common built-in kinds, as
 * the API server's strategies apply them after defaulting: Pod specs (and
 * every pod template), Deployment, ReplicaSet, StatefulSet, DaemonSet, Job,
 * CronJob, Service, ConfigMap and Secret, and the webhook configurations
 * (webhook_config.h). Each violation is a cause in the
 * server's shape ({reason, message, field}) for a 422 Invalid.
 *
 * Reentrant; any thread.
 */
#ifndef FAKEAPI_BUILTIN_VALID_H
#define FAKEAPI_BUILTIN_VALID_H

#include <jansson.h>

#include "registry.h"

/*
 * Validate obj, a defaulted new state of res's kind; cur is the stored
 * object on update (NULL on create). Appends the causes, in the server's
 * order, to causes (an array) and returns how many.
 */
int fakeapi__builtin_validate(const fakeapi__resource *res, const json_t *obj, const json_t *cur,
                              json_t *causes);

/*
 * A new Job's generated selector (after fakeapi__builtin_after_stamp): it
 * must select the labels the server generates, so a selector of the user's
 * own without spec.manualSelector is refused. Appends causes; returns how
 * many.
 */
int fakeapi__builtin_validate_generated(const fakeapi__resource *res, const json_t *obj,
                                        json_t *causes);

#endif
