/*
 * informer_int.h - one informer (private to libctrl; the public half is in
 * ctrl/cache.h). The cache (cache.c) creates, starts, stops and frees
 * informers through these calls; everything else goes through the public
 * ctrl_informer_* functions.
 */
#ifndef CTRL_INFORMER_INT_H
#define CTRL_INFORMER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ctrl/cache.h"

/* What an informer takes from its cache; every pointer is borrowed and
 * outlives the informer. */
typedef struct ctrl__informer_config {
    ctrl_client *client;
    const char *const *namespaces; /* NULL-terminated; NULL = every namespace */
    int64_t resync_ns;             /* 0 = none */
    int watch_timeout_s;           /* 0 = 300 */
    bool no_watch_list;
    const ctrl_clock *clock; /* NULL = real time */
    const ctrl_hooks *hooks; /* NULL = none */
    uint64_t seed;           /* jitter draws (already made non-zero by the cache) */
    /* Where an unserved kind is reported (log_int.h); NULL = nowhere. */
    const struct ctrl__logger *log;
} ctrl__informer_config;

/* A new, stopped informer (opts may be NULL; strings are copied). */
int ctrl__informer_new(const ctrl__informer_config *cfg, const char *api_version, const char *kind,
                       const ctrl_informer_options *opts, ctrl_informer **out);
/* True when inf informs about api_version/kind. */
bool ctrl__informer_is(const ctrl_informer *inf, const char *api_version, const char *kind);
/* "apiVersion/Kind" (borrowed, lives as long as inf). */
const char *ctrl__informer_name(const ctrl_informer *inf);
/* Start its threads (CTRL_ERR_ARG if already started or stopped). */
int ctrl__informer_start(ctrl_informer *inf);
/* Ask its threads to end (returns at once; any thread; idempotent). */
void ctrl__informer_signal_stop(ctrl_informer *inf);
/* Wait for its threads to end (after signal_stop; one caller). */
void ctrl__informer_join(ctrl_informer *inf);
/* Free a joined (or never started) informer. NULL does nothing. */
void ctrl__informer_free(ctrl_informer *inf);

/* No watch line received and still being handled (any thread). */
bool ctrl__informer_idle(ctrl_informer *inf);

#endif
