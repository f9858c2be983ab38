/*
 * recorder_int.h - the manager's event recorders (ctrl_recorder of
 * ctrl/manager.h).
 *
 * Threads: ctrl_recorder_event may be called from any thread; _new and
 * _free by the manager.
 */
#ifndef CTRL_RECORDER_INT_H
#define CTRL_RECORDER_INT_H

#include "ctrl/manager.h"

/* A recorder writing Events through client (borrowed) with
 * source.component = component and source.host = host (copied; host may be
 * NULL). NULL when out of memory. */
ctrl_recorder *ctrl__recorder_new(ctrl_client *client, const ctrl_clock *clock,
                                  const char *component, const char *host);
/* The component it was made for (borrowed). */
const char *ctrl__recorder_component(const ctrl_recorder *r);
void ctrl__recorder_free(ctrl_recorder *r);

#endif
