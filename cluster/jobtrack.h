/*
 * jobtrack.h - the Job controller's pod finalizer
 * batch.kubernetes.io/job-tracking, as upstream tracks Jobs since 1.26: a
 * finished pod keeps the finalizer until the Job's status has counted it
 * (status.uncountedTerminatedPods, then succeeded/failed), so pods deleted
 * early are never lost from the counts.
 *
 * This module holds what the Job controller needs beyond job.c: the
 * removals it has made and the cache may not show yet (upstream's
 * finalizer expectations: a pod still showing the finalizer after we
 * removed it must not be counted twice), the removal itself, and a small
 * controller "kc-job-orphans" that removes the finalizer from pods whose
 * Job is gone.
 *
 * Threads: every function may be called from any reconcile worker (one
 * mutex over the expectations, a leaf lock).
 */
#ifndef KC_JOBTRACK_H
#define KC_JOBTRACK_H

#include <stdbool.h>
#include <jansson.h>

#include "cluster_int.h"
#include "ctrl/controller.h"

#define KC__JOB_FINALIZER "batch.kubernetes.io/job-tracking"

typedef struct kc_jobtrack kc_jobtrack;

kc_jobtrack *kc__jobtrack_new(void);
void kc__jobtrack_free(kc_jobtrack *t);

/* Does pod carry the finalizer? */
bool kc__jobtrack_has(const json_t *pod);

/* Drop the expected removals of the Job key whose pods (the cache's, a
 * borrowed array) no longer carry the finalizer or are gone. */
void kc__jobtrack_settle(kc_jobtrack *t, const char *key, const json_t *pods);
/* Did we remove the finalizer of pod uid (the cache may not show it)? */
bool kc__jobtrack_expected(kc_jobtrack *t, const char *key, const char *uid);
/* The Job is gone: forget its expectations. */
void kc__jobtrack_forget(kc_jobtrack *t, const char *key);

/*
 * Remove the finalizer from pod (borrowed) with a strategic merge patch
 * ($deleteFromPrimitiveList, as upstream) and record the expected removal
 * under key (t and key may be NULL: not recorded). A pod without it, or
 * gone, is 0. Otherwise the client's error.
 */
int kc__jobtrack_remove(ctrl_ctx *ctx, kc_jobtrack *t, const char *key, const json_t *pod);

/* Add the controller "kc-job-orphans" (For Pod, only pods carrying the
 * finalizer) to mgr. 0 or a negative code. */
int kc__jobtrack_orphans_setup(ctrl_manager *mgr, kc_config *cfg);

#endif
