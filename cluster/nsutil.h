/*
 * nsutil.h - the namespace state the per-namespace controllers
 * (serviceaccount, root-ca-cert-publisher) share. Pure; any thread.
 */
#ifndef KC_NSUTIL_H
#define KC_NSUTIL_H

#include <stdbool.h>
#include <string.h>
#include <jansson.h>

#include "ctrl/object.h"

/* Active: neither status.phase Terminating nor a deletionTimestamp. */
static inline bool kc__namespace_active(const json_t *ns)
{
    const char *phase = ctrl_obj_get_string(ns, "status.phase");
    return !ctrl_obj_deleting(ns) && (!phase || strcmp(phase, "Terminating"));
}

#endif
