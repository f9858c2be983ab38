/*
 * expectations.h - what a controller has asked for and not yet seen in
 * its cache (kube-controller-manager's ControllerExpectations).
 *
 * A controller that creates 3 pods reads its cache again before the cache
 * shows them; acting on that read would create 3 more. So before writing it
 * records how many creations and deletions it expects for the owner's key;
 * the pod informer's handlers count them down as they arrive; the owner is
 * acted on only once its expectations are met (or have expired: a lost
 * event must not wedge it forever). A write that failed is counted down at
 * once by the controller itself.
 *
 * Keys are "namespace/name" of the owner. Times are the manager's clock.
 *
 * Threads: every function may be called from any thread (one mutex, a
 * leaf: never held across a call out).
 */
#ifndef KC_EXPECTATIONS_H
#define KC_EXPECTATIONS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct kc_expect kc_expect;

/* ttl_ns: how long unmet expectations hold (0 = 5 minutes, as upstream). */
kc_expect *kc__expect_new(int64_t ttl_ns);
void kc__expect_free(kc_expect *e);

/* Expect adds creations and dels deletions for key, from now. Replaces
 * what was expected before (SetExpectations). */
void kc__expect_set(kc_expect *e, const char *key, int adds, int dels, int64_t now_ns);
/* One creation / deletion seen (or a write that failed: it never will be). */
void kc__expect_observed_add(kc_expect *e, const char *key);
void kc__expect_observed_del(kc_expect *e, const char *key);
/* Met (nothing pending), expired, or never set: the owner may be acted on. */
bool kc__expect_satisfied(kc_expect *e, const char *key, int64_t now_ns);
/* The owner is gone: forget it. */
void kc__expect_delete(kc_expect *e, const char *key);

#endif
