/*
 * svcutil.h - what the Endpoints and EndpointSlice controllers share
 * (upstream's pkg/controller/util/endpoint): which pods a Service selects,
 * which of them belong in its endpoints, how a Service port resolves
 * against a pod (FindPort), and the last-change trigger time tracker.
 *
 * Threads: the pure functions are reentrant (arguments borrowed). A
 * kc_trigger is thread-safe (one mutex, a leaf).
 */
#ifndef KC_SVCUTIL_H
#define KC_SVCUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

/* The annotation both controllers write, and the headless-Service label. */
#define KC_TRIGGER_ANNOTATION "endpoints.kubernetes.io/last-change-trigger-time"
#define KC_HEADLESS_LABEL "service.kubernetes.io/headless"

/* spec.selector is a non-empty map: the controllers manage this Service's
 * endpoints (a Service without one has hand-made endpoints). */
bool kc__svc_has_selector(const json_t *svc);
/* spec.clusterIP is "None". */
bool kc__svc_headless(const json_t *svc);
/* svc has a selector and selects pod (same namespace, labels match). */
bool kc__svc_selects(const json_t *svc, const json_t *pod);

/*
 * A ctrl_map_fn from a pod to the Services that select it: user is the
 * Service informer (ctrl_informer *). A new array of requests.
 */
json_t *kc__svc_map_pod(const json_t *pod, void *user);

/*
 * The pods of svc's namespace its selector matches, from the pod informer
 * (a ctrl_informer *): *out a new array. 0 or a negative ctrl_errcode.
 */
int kc__svc_pods(void *pod_informer, const json_t *svc, json_t **out);

/* ShouldPodBeInEndpoints: not terminal, has an IP, and (unless
 * include_terminating) not being deleted. */
bool kc__pod_in_endpoints(const json_t *pod, bool include_terminating);
/* status.podIP, or the first of status.podIPs; NULL when none. */
const char *kc__pod_ip(const json_t *pod);
/* ShouldSetHostname: the pod has spec.hostname and its spec.subdomain is
 * the Service's name, in the Service's namespace. */
bool kc__pod_hostname_for(const json_t *pod, const json_t *svc);

/*
 * FindPort: the pod's port number for a Service port (an entry of
 * spec.ports): targetPort as a number is taken as it is, as a name it is
 * looked up in the pod's containers' ports (and restartable init
 * containers') with the Service port's protocol; no targetPort means the
 * port itself. 0 with *out, or -1 when the pod has no such port.
 */
int kc__find_port(const json_t *pod, const json_t *svc_port, int64_t *out);

/*
 * The trigger-time tracker (upstream TriggerTimeTracker): remembers, per
 * Service key, the pods' trigger times (their Ready condition's
 * lastTransitionTime) and the Service's (its creationTimestamp) as of the
 * last sync, and answers the earliest of those that changed since: the
 * value of KC_TRIGGER_ANNOTATION.
 */
typedef struct kc_trigger kc_trigger;
kc_trigger *kc__trigger_new(void);
void kc__trigger_free(kc_trigger *t);
/* pods: the Service's selected pods (borrowed array). Wall ns, or -1 when
 * nothing changed (the annotation is then removed). Records the state. */
int64_t kc__trigger_compute(kc_trigger *t, const char *key, const json_t *svc, const json_t *pods);
/* The Service is gone: forget its state. */
void kc__trigger_delete(kc_trigger *t, const char *key);

#endif
