/*
 * hunt_util.h - what the controllers of examples/hunt share (private to
 * them): their variants and setup, their status writes. Reentrant; no state.
 */
#ifndef EXAMPLE_HUNT_UTIL_H
#define EXAMPLE_HUNT_UTIL_H

#include <stdbool.h>
#include <jansson.h>

#include "ctrl/manager.h"

/* The label every object a hunt controller makes carries, with its
 * owner's name. */
#define HUNT_OWNER_LABEL "hunt.example.com/owner"

/* What tells a hunt controller's two variants apart: whether the fix is
 * in, and the controller's name when the config gives none. */
typedef struct hunt_variant {
    bool fixed;
    const char *default_name;
} hunt_variant;

/*
 * Set up the controller of kind (of EXAMPLE_HUNT_API_VERSION) in variant v
 * with config's name and options (hunt.h): a builder, watch(b) (may be
 * NULL) to add what else it watches, then reconcile with v as its user
 * pointer (v must outlive the controller: the variants are static).
 * CTRL_ERR_ARG (nothing started) for a malformed config, or the builder's
 * error.
 */
int hunt_setup(ctrl_manager *mgr, const json_t *config, const char *kind, const hunt_variant *v,
               void (*watch)(ctrl_builder *b), ctrl_reconcile_fn reconcile);

/*
 * Write status (taken over) to obj's status subresource, with obj's
 * resourceVersion (a stale obj is a 409), unless obj's status already
 * equals it. 0 or the client's error.
 */
int hunt_write_status(ctrl_client *c, const json_t *obj, json_t *status);

#endif
