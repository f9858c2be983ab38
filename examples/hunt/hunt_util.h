/*
 * hunt_util.h - what the controllers of examples/hunt share (private to
 * them): their config, their status writes. Reentrant; no state.
 */
#ifndef EXAMPLE_HUNT_UTIL_H
#define EXAMPLE_HUNT_UTIL_H

#include <stdbool.h>
#include <jansson.h>

#include "ctrl/manager.h"

/* The label every object a hunt controller makes carries, with its
 * owner's name. */
#define HUNT_OWNER_LABEL "hunt.example.com/owner"

/*
 * Start a builder for kind (of EXAMPLE_HUNT_API_VERSION) with config's
 * name and options (hunt.h), default_name when config names none. *out is
 * the builder; CTRL_ERR_ARG (nothing started) for a malformed config.
 */
int hunt_builder(ctrl_manager *mgr, const json_t *config, const char *kind,
                 const char *default_name, ctrl_builder **out);

/*
 * Write status (taken over) to obj's status subresource, with obj's
 * resourceVersion (a stale obj is a 409), unless obj's status already
 * equals it. 0 or the client's error.
 */
int hunt_write_status(ctrl_client *c, const json_t *obj, json_t *status);

#endif
