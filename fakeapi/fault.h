/*
 * fault.h - fault rules: matching requests, deciding when they fire, and
 * the plan a request follows when one does (fakeapi_fault in fakeapi.h is the
 * public rule; docs/faults.md the JSON form).
 *
 * DESIGN: the rule list and every rule's counters live behind one mutex
 * (a leaf lock: nothing else is taken while it is held). Probabilities draw
 * from the rule set's own generator, seeded from the server's seed, so the
 * same seed and the same sequence of requests fire the same faults, and
 * fault draws never disturb the uids the store generates.
 */
#ifndef FAKEAPI_FAULT_H
#define FAKEAPI_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "fakeapi/fakeapi.h"

typedef struct fakeapi__faults fakeapi__faults;

/* What a request is, for matching. Strings borrowed; "" when absent. */
typedef struct fakeapi__reqinfo {
    const char *verb; /* get list watch create update patch delete deletecollection */
    const char *sub;  /* "" for the main resource */
    const char *group, *resource, *ns, *name;
    const char *user_agent, *token;
} fakeapi__reqinfo;

#define FAKEAPI__MAX_WITHHOLD 8

/* What the fired rules ask of this request. Zero = nothing. */
typedef struct fakeapi__fault_plan {
    int terminal; /* 0 or FAKEAPI_FAULT_ERROR/DROP/TRUNCATE/LOSE_RESPONSE */
    int status;
    char reason[48];
    char message[256];
    int retry_after;
    int64_t delay_ns;
    bool compact;
    uint64_t stale_rv;    /* serve reads as of this revision */
    uint64_t stale_lag;   /* or this many behind the store (resolved by the reader) */
    unsigned close_after; /* watch: end after this many events (0 = no) */
    bool expire;          /* watch: 410 at once */
    int64_t event_delay_ns;
    size_t n_withhold; /* watch: drop events of objects matching these */
    struct {
        char ns[64], name[254];
        uint64_t rule;
    } withhold[FAKEAPI__MAX_WITHHOLD];
    uint64_t fired[16]; /* ids of the rules that fired, for the trace */
    size_t n_fired;
} fakeapi__fault_plan;

fakeapi__faults *fakeapi__faults_new(uint64_t seed);
void fakeapi__faults_free(fakeapi__faults *f);

/* Add a rule (copied); 0, or -1 with a message naming the bad field. */
int fakeapi__faults_add(fakeapi__faults *f, const fakeapi_fault *rule, uint64_t *id, char *err,
                        size_t errlen);
/* Parse one rule from JSON (strings borrowed from j) into *out. */
int fakeapi__fault_parse(const json_t *j, fakeapi_fault *out, char *err, size_t errlen);
/* Add one rule object or an array of them; returns the number added or -1. */
int fakeapi__faults_add_json(fakeapi__faults *f, const json_t *j, char *err, size_t errlen);
int fakeapi__faults_remove(fakeapi__faults *f, uint64_t id);
void fakeapi__faults_clear(fakeapi__faults *f);
int fakeapi__faults_hits(fakeapi__faults *f, uint64_t id, unsigned long *matched,
                         unsigned long *fired);
/* Every rule with its id and counters, as a new JSON array. */
json_t *fakeapi__faults_list(fakeapi__faults *f);
/* Total faults fired per rule id, for metrics: a new JSON object id -> count. */
json_t *fakeapi__faults_fired(fakeapi__faults *f);

/* Match the request against every rule, count, draw, and fill *plan. */
void fakeapi__faults_eval(fakeapi__faults *f, const fakeapi__reqinfo *ri,
                          fakeapi__fault_plan *plan);

/* Count one firing of rule id (watch-time actions such as withholding). */
void fakeapi__faults_count_fired(fakeapi__faults *f, uint64_t id);

/* "500ms", "2s", "1m", "1h", or a bare number of milliseconds; -1 if malformed. */
int64_t fakeapi__parse_duration_ms(const json_t *v);

/* True if user_agent is agent's: equal, or agent then '/' or ' ' and more
 * (a sub-client). The identity a rule's agent and fakeapi_close_watches use. */
bool fakeapi__agent_is(const char *user_agent, const char *agent);

#endif
