/*
 * scn/scenario.h - scenario files: what to run, and what must hold.
 *
 * A scenario (YAML or JSON; docs/scenarios.md has the format) names its
 * controllers, fixtures, an optional seed, steps and invariants. Parsing
 * turns it into a scn_scenario whose steps and conditions are checked up
 * front: a malformed file is reported with its file, line and field, and
 * nothing runs (exit code 2 in the `scenario` program).
 *
 * Ownership: a scn_scenario owns everything in it; scn_scenario_free frees
 * it. Strings and JSON values inside are borrowed by callers.
 * Threads: parsing is reentrant; a scenario is read-only once parsed.
 */
#ifndef SCN_SCENARIO_H
#define SCN_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum scn_errcode {
    SCN_OK = 0,
    SCN_ERR_NOMEM = -1,
    SCN_ERR_INPUT = -2,  /* malformed scenario file (exit code 2) */
    SCN_ERR_IO = -3,     /* a file could not be read */
    SCN_ERR_FAILED = -4, /* the scenario ran and a check failed (exit code 1) */
    SCN_ERR_SETUP = -5,  /* the server or a manager could not start */
    SCN_ERR_INTERNAL = -6,
} scn_errcode;

const char *scn_strerror(int code);

/* Where an input error is, and what it is. */
typedef struct scn_error {
    int code;
    char file[256];
    int line;        /* 1-based; 0 if unknown */
    char field[128]; /* e.g. "steps[3].wait.timeout" */
    char message[512];
} scn_error;

/* "file:line: field: message" (the parts that are known) into buf; returns
 * what snprintf returns. The form the `scenario` program prints:
 * 'examples.yaml:14: steps[3].wait.timeout: not a duration: "5 minutes" ...' */
int scn_error_format(const scn_error *e, char *buf, size_t len);

/* A condition on the store (K8S objects). */
typedef enum scn_cond_kind {
    SCN_COND_EXISTS = 1, /* an object exists */
    SCN_COND_ABSENT,     /* an object does not exist */
    SCN_COND_FIELD,      /* a field of an object compares */
    SCN_COND_COUNT,      /* the number of objects of a kind (selector) compares */
    SCN_COND_ALL,        /* every sub-condition */

    /* Invariants only: no replica writes unless it holds a Lease. Checked by
     * the runner over the run's trace (scenarios/leadership.h), not by
     * scn_cond_eval, which says it cannot. */
    SCN_COND_SINGLE_LEADER,

    SCN_COND_ANY, /* at least one sub-condition (in all, n_all) */
    SCN_COND_NOT, /* the sub-condition all[0] fails ("if A then B": any: [not: A, B]) */
} scn_cond_kind;

typedef enum scn_cmp {
    SCN_CMP_EQUALS = 1,
    SCN_CMP_AT_LEAST,
    SCN_CMP_AT_MOST,
    SCN_CMP_MATCHES, /* POSIX extended regex on the value as a string */
    SCN_CMP_EXISTS,  /* the field is present */
} scn_cmp;

/*
 * ns is NULL when the file names no namespace: a cluster-scoped object, or
 * for COUNT every namespace (nothing defaults to "default"). name is NULL
 * for COUNT. Paths: ".a.b", ".a[0].b", ".metadata.labels['app.kubernetes.io/name']",
 * "." (the object). Numbers compare numerically (3 equals 3.0).
 */
typedef struct scn_cond scn_cond;
struct scn_cond {
    scn_cond_kind kind;
    const char *api_version, *kind_name, *ns, *name;
    const char *selector; /* COUNT: label selector ("app=web,tier!=db"), may be NULL;
                           * a mapping {app: web} in the file is joined to "app=web" */
    const char *path;     /* FIELD: ".status.replicas", ".spec.containers[0].image" */
    scn_cmp cmp;
    json_t *value; /* what it compares with (FIELD, COUNT); NULL with value_from;
                    * EXISTS: true (present) or false (absent) */
    /* "equalsField/atLeastField/atMostField: {apiVersion, kind, namespace, name, path}"
     * compares with another object's field, e.g. "never more pods than the ReplicaSet's
     * .spec.replicas": value_from is then a FIELD condition without a cmp whose object
     * and path name that field. */
    scn_cond *value_from; /* FIELD, COUNT: compare with another object's field (may be NULL) */
    scn_cond **all;       /* ALL, ANY; NOT: its one sub-condition */
    size_t n_all;
    int line;
    const char *text; /* the condition as written, for messages */

    /* SINGLE_LEADER: the Lease is coordination.k8s.io/v1 Lease ns/name; a
     * replica holds it for lease_ns (default 15 s) from its last write of it */
    int64_t lease_ns;
};

typedef enum scn_step_kind {
    SCN_STEP_APPLY = 1, /* manifest (a file or inline) */
    SCN_STEP_PATCH,     /* object + patch type + patch */
    SCN_STEP_DELETE,    /* object */
    SCN_STEP_SCALE,     /* object + replicas (the /scale subresource) */
    SCN_STEP_FAULT,     /* add (rule, with a name) or remove (name) a fakeapi fault rule */
    SCN_STEP_COMPACT,
    SCN_STEP_ADVANCE, /* virtual time */
    SCN_STEP_WAIT,    /* until a condition holds, with a virtual-time timeout */
    SCN_STEP_EXPECT,  /* a condition holds now */
    SCN_STEP_CRASH,   /* stop a manager replica abruptly: now, at its nth write, after a request */
    SCN_STEP_RESTART,
    SCN_STEP_PARTITION, /* cut a replica off the server */
    SCN_STEP_HEAL,
    SCN_STEP_REQUEST,      /* one HTTP request as a client sent it (a replayed write) */
    SCN_STEP_EXPECT_WRITE, /* the controllers made a write (verb, path) within a timeout */
} scn_step_kind;

typedef struct scn_step {
    scn_step_kind kind;
    int line;
    const char *text;        /* as written, for the trace and messages */
    json_t *manifest;        /* APPLY: array of objects (files read, Lists expanded);
                              * PATCH: the patch (an object; an array for "json") */
    const char *patch_type;  /* PATCH: "merge" (default), "json", "strategic" */
    const char *subresource; /* PATCH: "status" or "scale" to patch that subresource
                              * (what the object's own endpoint ignores); NULL: the
                              * object itself */
    const char *api_version, *kind_name, *ns, *name; /* PATCH, DELETE, SCALE */
    long replicas;                                   /* SCALE */
    json_t *rule;           /* FAULT add: the rule as fakeapi reads it (docs/faults.md);
                             * only its being a mapping is checked here */
    const char *fault_name; /* FAULT: the name steps refer to it by (always set; a
                             * remove names a fault in force at that step) */
    bool fault_remove;
    int64_t duration_ns; /* ADVANCE; WAIT timeout (default 5 min) */
    scn_cond *cond;      /* WAIT, EXPECT */
    int replica;         /* CRASH, RESTART, PARTITION, HEAL: the manager replica (default
                          * 0), below the most replicas any controller has; the step
                          * acts on every controller it runs (those whose replicas
                          * are above it) */
    long crash_at_write; /* CRASH: the replica's nth write from now (0 = now) */
    json_t *crash_after; /* CRASH: after a request matching {verb, subresource, group,
                          * resource, namespace, name} (strings); NULL otherwise */
    bool crash_restart;  /* CRASH with atWrite or after: start the replica again as soon as
                          * it crashed (a new incarnation, as `restart` starts one) */

    /* CRASH, RESTART, PARTITION, HEAL: when not NULL, the replica instead of
     * `replica`: "leader" (the replica holding the Lease of the one
     * leader-elected controller, or of replica_controller, when the step
     * runs) or a name that an
     * earlier step's replica_as gave. replica_as (may be NULL) names the
     * replica this step addresses, for later steps. */
    const char *replica_ref;
    const char *replica_as;
    /* With replica_ref "leader": the controller whose Lease
     * (kube-system/<controller>) names the leader; NULL: the scenario's one
     * leader-elected controller. */
    const char *replica_controller;

    /* APPLY: when not NULL, a server-side apply of each object as this field
     * manager (force: taking over conflicting fields); NULL creates or
     * merge-patches each object, like kubectl apply. */
    const char *field_manager;
    bool force;

    /* REQUEST: method ("POST", "PUT", "PATCH", "DELETE"), path with its
     * query, content type (NULL: application/json) and body (manifest,
     * NULL: none); the answer must have status (0: any 2xx).
     * EXPECT_WRITE: a request by a controller (any client but the
     * scenario's own steps) with this verb ("create", "update", "patch",
     * "delete", "deletecollection"), a path (no query) matching path as a
     * glob (fnmatch: '*' stays within one segment) and status (0: any
     * 2xx) has been answered, or is within duration_ns of virtual time
     * (default 1 min); with a body (manifest, may be NULL), a request whose
     * body holds it (every field given equal, lists item by item; fields
     * left out are not compared). Each write satisfies one expectation. */
    const char *method, *path, *content_type, *verb;
    int status;
    /* REQUEST (PUT): set the body's metadata.resourceVersion to the stored
     * object's when the request is sent (an update recorded against another
     * cluster's revision, replayed against this run's). */
    bool current_rv;
} scn_step;

/* There are as many manager replicas as the most any controller asks for;
 * replica i runs the controllers whose replicas > i. */
typedef struct scn_controller_ref {
    const char *name; /* a registered controller ("replicaset") */
    int replicas;     /* manager replicas running it (default 1, at most 16) */
    json_t *config;   /* free-form options for the controller, may be NULL */
} scn_controller_ref;

typedef struct scn_scenario {
    const char *file;
    const char *name;
    bool has_seed;
    uint64_t seed;
    scn_controller_ref *controllers;
    size_t n_controllers;
    json_t *fixtures; /* array of objects to apply before the steps (files read,
                       * Lists expanded; never NULL) */
    scn_step *steps;
    size_t n_steps;
    scn_cond **invariants;
    size_t n_invariants;
    int64_t max_virtual_ns; /* the whole run's limit in virtual time (default 24 h) */
    /* cluster: the built-in controllers, nodes and kubelet (docs/cluster.md)
     * run beside the controllers under test, on a manager of their own that
     * no replica step addresses. NULL: none. The cluster document, checked
     * when parsed; cluster_dir: where its relative file names start. */
    json_t *cluster;
    const char *cluster_dir;
    void *priv_; /* parser-owned storage */
    /* atStart: fault and crash steps taken once the managers exist and
     * before they run (so a crash at the nth write or a fault rule covers
     * setup's reconciles too); their failures are setup's (step -1). */
    scn_step *start_steps;
    size_t n_start_steps;
} scn_scenario;

/* Parse a scenario from text (file names messages and resolves relative
 * fixture and manifest paths against its directory; NULL: "<input>" and the
 * current directory). Fixture and manifest files are read now.
 * 0 and a new scenario in *out (scn_scenario_free); or SCN_ERR_INPUT (also
 * for a fixture file that is missing or malformed) or SCN_ERR_NOMEM with
 * *out untouched and *err filled if non-NULL. */
int scn_scenario_parse(const char *file, const char *text, size_t len, scn_scenario **out,
                       scn_error *err);
/* Read path and scn_scenario_parse it; SCN_ERR_IO if it cannot be read. */
int scn_scenario_load(const char *path, scn_scenario **out, scn_error *err);
void scn_scenario_free(scn_scenario *s);

/* Parse a duration: a string of one or more <number><unit> (units ns, us,
 * ms, s, m, h; "500ms", "10s", "5m", "24h", "1h30m", "1.5s"), a number of
 * seconds (10, 0.5) or a string of one ("10"). 0 with *ns set, or
 * SCN_ERR_INPUT (negative, malformed, or beyond ~292 years). */
int scn_parse_duration(const json_t *v, int64_t *ns);

/*
 * Evaluate a condition against objects (the caller's lookup callbacks read
 * the store). msg (len bytes, may be NULL) says what was expected and what
 * was there, whether it held or not:
 * 'expected .status.replicas of ReplicaSet default/web to equal 3, found 2',
 * 'expected count of Pod in default with app=web to be at most 3, found 4'.
 * For ALL, the message of the first sub-condition that fails.
 * COUNT passes its selector to list unparsed: the store filters. A get or
 * list that fails counts as "absent" / a false condition.
 */
typedef struct scn_lookup {
    /* get: 0 and a new reference, or < 0 if absent */
    int (*get)(void *ud, const char *api_version, const char *kind, const char *ns,
               const char *name, json_t **out);
    /* list: 0 and a new array */
    int (*list)(void *ud, const char *api_version, const char *kind, const char *ns,
                const char *selector, json_t **out);
    void *ud;
    /* count (optional): 0 and the number of objects list would give */
    int (*count)(void *ud, const char *api_version, const char *kind, const char *ns,
                 const char *selector, size_t *out);
} scn_lookup;
bool scn_cond_eval(const scn_cond *c, const scn_lookup *lk, char *msg, size_t len);

#ifdef __cplusplus
}
#endif

#endif
