/*
 * memcached.h - the Memcached controller: for each cache.example.com/v1
 * Memcached it keeps a Deployment of spec.size memcached replicas that it
 * controls, a finalizer that lets it clean up first when the Memcached is
 * deleted, and an "Available" condition in status.conditions.
 */
#ifndef MEMCACHED_H
#define MEMCACHED_H

#include <ctrl/manager.h>

#define MEMCACHED_API_VERSION "cache.example.com/v1"
#define MEMCACHED_KIND "Memcached"
#define MEMCACHED_FINALIZER "cache.example.com/finalizer"

/* Register the controller on mgr (before ctrl_manager_start). 0 or a
 * negative ctrl_errcode. */
int memcached_setup(ctrl_manager *mgr);

#endif
