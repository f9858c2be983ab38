/*
 * webhook_config.h - the defaults and validation rules of
 * MutatingWebhookConfiguration and ValidatingWebhookConfiguration
 * (admissionregistration.k8s.io/v1), as kube-apiserver applies them on
 * create and update, so that a configuration the webhook dispatcher
 * (admission.c) cannot use is refused with 422 when it is written, not when
 * a write is admitted. builtin_default.c and builtin_valid.c call in.
 *
 * Reentrant; any thread.
 */
#ifndef FAKEAPI_WEBHOOK_CONFIG_H
#define FAKEAPI_WEBHOOK_CONFIG_H

#include <stdbool.h>
#include <jansson.h>

/*
 * The v1 defaults, in place: failurePolicy Fail, matchPolicy Equivalent,
 * namespaceSelector and objectSelector {}, timeoutSeconds 10, each rule's
 * scope "*", a service's port 443, and (mutating) reinvocationPolicy Never.
 * Returns 0, or -1 on ENOMEM.
 */
int fakeapi__webhook_config_default(bool mutating, json_t *obj);

/*
 * The rules of upstream's ValidateValidatingWebhookConfiguration (and the
 * mutating one): fully qualified and unique webhook names, rules, the
 * policies' values, sideEffects None or NoneOnDryRun, timeoutSeconds 1-30,
 * exactly one of clientConfig.url (https, with a host, no user, query or
 * fragment) and clientConfig.service (name, namespace, port, path), and
 * admissionReviewVersions including v1 or v1beta1. Appends causes
 * ({reason, message, field}) to causes and returns how many.
 */
int fakeapi__webhook_config_validate(bool mutating, const json_t *obj, json_t *causes);

#endif
