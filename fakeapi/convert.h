/*
 * convert.h - objects of a built-in kind served in several versions, between
 * the version they are stored in and the version a client asked for.
 *
 * A kind is stored once, in its storage version (fakeapi/types/resources.txt
 * marks it); every read converts the stored object to the version of the
 * request and every write converts the request's object back, as the real
 * server converts through its internal version. Only autoscaling's
 * HorizontalPodAutoscaler has fields that differ (v2 stored, v1 served):
 * v1's targetCPUUtilizationPercentage is v2's CPU Utilization metric, and
 * what v1 cannot express travels in the annotations the real server uses
 * (autoscaling.alpha.kubernetes.io/metrics, current-metrics, conditions,
 * behavior), so a round trip through v1 loses nothing. events.k8s.io/v1
 * Events are the core Events under other field names (regarding is
 * involvedObject, note is message, reportingController is
 * reportingComponent, deprecated* are the old counters), stored once as
 * core/v1 so `kubectl get events` sees what the new event recorders write. Every other kind only
 * changes its apiVersion (custom resources: the CRD's versions share a
 * schema, conversion strategy None).
 *
 * Pure functions on caller-owned objects; any thread.
 */
#ifndef FAKEAPI_CONVERT_H
#define FAKEAPI_CONVERT_H

#include <stdbool.h>
#include <jansson.h>

#include "registry.h"

/* True when objects of res need more than an apiVersion change to be served as res. */
bool fakeapi__convert_needed(const fakeapi__resource *res);

/*
 * obj, as stored (in the storage version of res's kind), rewritten in place
 * as res's version, apiVersion included. Returns 0, or -1 when a stored
 * annotation the conversion reads is not valid JSON (obj is then left with
 * what converted).
 */
int fakeapi__convert_out(const fakeapi__resource *res, json_t *obj);

/*
 * obj, in res's version, rewritten in place as the storage version of res's
 * kind (apiVersion included). Returns 0 or -1 as above.
 */
int fakeapi__convert_in(const fakeapi__resource *res, json_t *obj);

#endif
