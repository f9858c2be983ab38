/*
 * cache_int.h - what the manager asks of the cache beyond ctrl/cache.h.
 */
#ifndef CTRL_CACHE_INT_H
#define CTRL_CACHE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "ctrl/cache.h"

struct ctrl__logger;

/* Report what informers cannot do on their own (a kind the server does not
 * serve) to log (borrowed, outlives the cache). Before ctrl_cache_start;
 * informers created later use it too. */
void ctrl__cache_set_logger(ctrl_cache *cache, const struct ctrl__logger *log);

/* The informers not synced yet, as "apiVersion/Kind" separated by ", " in
 * buf (cut to len; "" when all have). Any thread. */
void ctrl__cache_unsynced(ctrl_cache *cache, char *buf, size_t len);

/* No informer is in the middle of handling a watch line (any thread). */
bool ctrl__cache_idle(ctrl_cache *cache);

#endif
