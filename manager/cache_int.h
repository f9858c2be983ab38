/*
 * cache_int.h - what the manager asks of the cache beyond ctrl/cache.h.
 */
#ifndef CTRL_CACHE_INT_H
#define CTRL_CACHE_INT_H

#include <stdbool.h>

#include "ctrl/cache.h"

/* No informer is in the middle of handling a watch line (any thread). */
bool ctrl__cache_idle(ctrl_cache *cache);

#endif
