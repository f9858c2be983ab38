/*
 * revision.h - ControllerRevisions (apps/v1) for the controllers that keep
 * their pod template's history: StatefulSet and DaemonSet, as upstream's
 * controller history package does it. A revision's data is
 * {"spec":{"template":{...,"$patch":"replace"}}}; its name is
 * "<owner>-<hash>" with the hash of that data and the owner's collision
 * count; revision numbers grow by one per new template, and going back to
 * an older template renumbers its revision instead of making a new one.
 *
 * Threads: reconcile workers; pure helpers on borrowed objects, plus the
 * client's writes.
 */
#ifndef KC_REVISION_H
#define KC_REVISION_H

#include <stdint.h>
#include <jansson.h>

#include "ctrl/controller.h"

/* The revision label on ControllerRevisions. */
#define KC__REV_HASH_LABEL "controller.kubernetes.io/hash"

/*
 * Make sure a revision of owner's spec.template exists and is the newest.
 * owner (borrowed) must carry apiVersion and kind. *collision is the
 * owner's status.collisionCount, raised when a name is taken by other
 * data. On success *revisions (new array, sorted by revision number,
 * including the update revision) and *update (a new reference) are set.
 * 0 or the client's error.
 */
int kc__rev_sync(ctrl_ctx *ctx, const json_t *owner, int64_t *collision, json_t **revisions,
                 json_t **update);

/* The pod template a revision holds (a new object), or NULL. */
json_t *kc__rev_template(const json_t *rev);

/* The hash part of a revision's name (its KC__REV_HASH_LABEL), or "". */
const char *kc__rev_hash(const json_t *rev);

/* The revision named name in revisions (borrowed), or NULL. */
const json_t *kc__rev_find(const json_t *revisions, const char *name);

/*
 * Delete the oldest revisions beyond limit (revisionHistoryLimit) that are
 * not live: not named in live (a JSON object whose keys are revision
 * names). 0 or the first delete error.
 */
int kc__rev_truncate(ctrl_ctx *ctx, const json_t *revisions, const json_t *live, int64_t limit);

#endif
