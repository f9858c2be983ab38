/*
 * stages.h - pod lifecycle rules (the cluster document's `stages:`), as
 * kwok's Stages: which pods (namespace, labels, image, owner kind) take how
 * long to start and to become Ready, and how they end (run forever, succeed
 * or fail after a while), and how long they take to stop when deleted.
 * docs/cluster.md ("Stages") has the format.
 *
 * A parsed kc_stages is immutable: any thread may read it.
 */
#ifndef KC_STAGES_H
#define KC_STAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

typedef enum kc_outcome {
    KC_OUTCOME_RUN = 0, /* the containers run until deleted */
    KC_OUTCOME_SUCCEED, /* they exit 0 after `after` */
    KC_OUTCOME_FAIL,    /* they exit with exit_code after `after` */
} kc_outcome;

typedef struct kc_stage_rule {
    const char *name;   /* "stages[i]" when the rule has none */
    json_t *namespaces; /* array of names; NULL = any */
    json_t *selector;   /* a LabelSelector; NULL = any */
    json_t *images;     /* array of globs, one container must match; NULL = any */
    char *owner_kind;   /* an owner reference of this kind; NULL = any */
    int64_t scheduled_to_running_ns;
    int64_t ready_after_ns; /* from running */
    kc_outcome outcome;
    int64_t after_ns; /* Succeed, Fail: how long each run of the containers lasts */
    int exit_code;
    int64_t termination_ns; /* how long the containers take to stop when deleted */
} kc_stage_rule;

typedef struct kc_stages kc_stages;

/*
 * Parse rules (an array, borrowed) into *out. On error returns
 * KC_ERR_INPUT with the reason in errbuf, naming the rule ("stages[2]
 * (web)") and the key, and leaves *out untouched.
 */
int kc__stages_parse(const json_t *rules, kc_stages **out, char *errbuf, size_t errlen);
void kc__stages_free(kc_stages *st);
size_t kc__stages_count(const kc_stages *st);
const kc_stage_rule *kc__stages_rule(const kc_stages *st, size_t i);

/*
 * The rule for pod: the first configured rule that matches it, else the
 * built-in ones: pods of Jobs (an owner reference of kind Job, or a
 * job-name label) succeed after 1 s, every other pod runs. st may be NULL
 * (the built-ins only). Borrowed from st (or static).
 */
const kc_stage_rule *kc__stages_match(const kc_stages *st, const json_t *pod);

/* A duration: a Go duration string ("1.5s", "1m30s", "250ms") or a
 * non-negative number of seconds. false if malformed or negative. */
bool kc__duration_parse(const json_t *v, int64_t *ns);

#endif
