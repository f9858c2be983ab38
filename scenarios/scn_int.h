/*
 * scn_int.h - internal declarations shared by the scenario runner's modules.
 */
#ifndef SCN_INT_H
#define SCN_INT_H

#include <stddef.h>

#include "scn/run.h"

/* The registered controller called name: 0 and its setup, or SCN_ERR_INPUT. */
int scn__find_controller(const char *name, scn_setup_fn *fn, void **user);
/* Every registered name, comma-separated, for error messages. */
void scn__list_controllers(char *buf, size_t len);

/* The name libctrl gives an informer's watching thread ("informer <user
 * agent> <apiVersion>/<Kind>", ctrl/cache.h): the driver releases a watch's
 * events only while that thread waits for them. */
void scn__informer_thread_name(char *buf, size_t len, const char *user_agent,
                               const char *api_version, const char *kind);

#endif
