/*
 * podfacts.h - per controller owner, the facts about its pods that a
 * controller's status needs (how many are active, match the owner's
 * selector and template labels, are ready, since when), kept up to date
 * from the Pod informer's events, so that a reconcile after one pod changed
 * reads counts instead of visiting every pod.
 *
 * A pod belongs to the owner named by the uid of its controller
 * ownerReference (as the KC_CONTROLLER_INDEX of claim.h); pods without a
 * controller are not kept. For each pod only its labels and a few flags are
 * kept. Counts are relative to a selector and template labels given by the
 * reader: while they stay the same between reads, a read costs O(1) (O(pods
 * of the owner) over small records when the ready times are asked for);
 * when they change, the owner's pods are matched again once.
 *
 * The facts follow the events: a reader that runs between the informer's
 * store write and the handler call (only when the informer and the reader
 * are not serialised, as they are under the scenario scheduler) sees the
 * state before that event, which the event's own reconcile then corrects.
 *
 * Threads: every function may be called from any thread (one mutex, a leaf:
 * never held across a call out).
 */
#ifndef KC_PODFACTS_H
#define KC_PODFACTS_H

#include <stdint.h>
#include <jansson.h>

typedef struct kc_podfacts kc_podfacts;

/* NULL when out of memory. */
kc_podfacts *kc__podfacts_new(void);
/* NULL does nothing. */
void kc__podfacts_free(kc_podfacts *f);

/*
 * Feed: pod (borrowed, not kept) was added or changed, or is gone (by its
 * namespace and name: the last state is not needed). A pod whose controller
 * changed moves to the new owner; one that lost its controller is dropped.
 * 0, or KC_ERR_NOMEM: the facts are then incomplete, and every later
 * count says KC_ERR_NOMEM (the caller then reads its pods itself).
 */
int kc__podfacts_put(kc_podfacts *f, const json_t *pod);
void kc__podfacts_remove(kc_podfacts *f, const json_t *pod);

/* Counts over the owner's pods that are active (kc__pod_active). */
typedef struct kc_podfacts_counts {
    int64_t matching;     /* active, and the selector matches their labels */
    int64_t not_matching; /* active, and the selector does not match */
    /* Of the matching ones: */
    int64_t labelled; /* template labels all present (kc__map_matches) */
    int64_t ready;    /* kc__pod_ready */
} kc_podfacts_counts;

/*
 * The counts for owner_uid's pods against sel (a LabelSelector, already
 * known well formed; borrowed) and template labels tl (a plain map, NULL =
 * every pod is labelled; borrowed). An owner without pods counts zeros.
 * With since non-NULL, *since is a new array (the caller frees it; NULL
 * when empty) of the ready pods' kc__pod_ready_since, out->ready of them,
 * taken at the same moment as the counts. 0, or KC_ERR_NOMEM (out of memory
 * now or at an earlier put; *out zeroed, *since NULL).
 */
int kc__podfacts_count(kc_podfacts *f, const char *owner_uid, const json_t *sel, const json_t *tl,
                       kc_podfacts_counts *out, int64_t **since);

#endif
