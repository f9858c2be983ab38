/*
 * liveclient.h - a client that reads from the API server, never the cache,
 * for the reads a built-in controller must not answer from its cache (its
 * own just-written objects, an existence check before a deletion).
 *
 * ctrl_ctx_api_reader() reads live too, but as the manager: this client,
 * a child of the manager's client (children do not inherit readers), sends
 * the controller's User-Agent ("<manager's>/kc-<name>"), so fault rules,
 * traces and audit logs see which built-in controller read.
 *
 * Threads: kc__live_client at setup; the client is thread-safe.
 */
#ifndef KC_LIVECLIENT_H
#define KC_LIVECLIENT_H

#include <stdio.h>

#include "ctrl/client.h"
#include "ctrl/manager.h"

/* A new client for controller name ("kc-endpoints"); ctrl_client_free it.
 * 0 or a negative ctrl_errcode. */
static inline int kc__live_client(ctrl_manager *mgr, const char *name, ctrl_client **out)
{
    ctrl_client *parent = ctrl_manager_client(mgr);
    char ua[512];
    if (!parent)
        return CTRL_ERR_ARG;
    snprintf(ua, sizeof ua, "%s/%s", ctrl_client_user_agent(parent), name);
    return ctrl_client_new_for(parent, ua, out, NULL);
}

#endif
