/*
 * example_options.h - the settings every example controller reads from its
 * scenario's `config:` (or a test's JSON): name, maxConcurrentReconciles,
 * noLeaderElection. One parser, so that the examples agree on what a bad
 * value is.
 *
 * Reentrant; keeps nothing.
 */
#ifndef EXAMPLE_OPTIONS_H
#define EXAMPLE_OPTIONS_H

#include <jansson.h>

#include "ctrl/controller.h"

/*
 * Read config (an object, or NULL for none): *name gets the controller's
 * name (borrowed from config) or default_name; *o the options over the
 * manager's defaults. CTRL_ERR_ARG when config is not an object, name is
 * not a string, maxConcurrentReconciles is not an integer in 1..1024 or
 * noLeaderElection is not a boolean.
 */
int example_options_from_config(const json_t *config, const char *default_name, const char **name,
                                ctrl_controller_options *o);

#endif
