/*
 * scn/audit.h - Kubernetes audit logs in and out of scenarios.
 *
 * scn_audit_import reads audit.k8s.io/v1 Events (as kube-apiserver writes
 * them, or as `fakeapi serve --record` does) and writes a scenario that
 * replays every write made by actors other than the controllers under
 * test, at its recorded offset on the virtual clock (docs/scenarios.md,
 * "Replaying an incident"). scn_trace_to_audit and scn_audit_to_trace
 * convert between a run's trace and an audit log.
 *
 * Ownership: options and their strings are borrowed; results are new
 * (free() them). Threads: any thread; calls are independent (each import
 * starts and stops its own in-process fake API server to resolve kinds).
 */
#ifndef SCN_AUDIT_H
#define SCN_AUDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "scn/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct scn_import_options {
    const char *const *files; /* audit logs, read in order */
    size_t n_files;
    const char *snapshot; /* the cluster's objects when the log starts (a List as
                           * `kubectl get -A -o yaml` writes it, manifests, or a
                           * fakeapi store, `fakeapi serve --db`, read from a copy);
                           * NULL */
    /* The controllers under test (the scenario's controllers). Their writes
     * are not replayed. A write is theirs when its user is one of
     * actor_users, or its User-Agent one of actor_agents (exactly, or
     * followed by '/' or ' '); with neither given, when the user is NAME or
     * ends in ":NAME" (a service account), or the User-Agent is NAME,
     * NAME/..., or scenario/NAME-K (a scenario replica). */
    const char *const *controllers;
    size_t n_controllers;
    const char *const *actor_users;
    size_t n_actor_users;
    const char *const *actor_agents;
    size_t n_actor_agents;
    bool expect_writes; /* the controllers' writes become expectWrite steps */
    /* The scenario ends expecting, for each kind the controllers under test
     * wrote (in each namespace), as many objects as the log left. */
    bool expect_state;
    const char *name; /* the scenario's name; NULL: "imported" */
    /* Each warning (a gap, a version that cannot be mapped), one line, no
     * newline; called on the importing thread. NULL: none. */
    void (*warn)(void *ud, const char *msg);
    void *warn_ud;
} scn_import_options;

typedef struct scn_import_stats {
    size_t events;   /* events read (every stage) */
    size_t requests; /* requests after collapsing stages */
    size_t fixtures, replayed, expected, dropped, gaps;
} scn_import_stats;

/* Import: 0 and the scenario (YAML, malloc'ed) in *yaml, or SCN_ERR_INPUT
 * (file, line and field of the bad input in *err), SCN_ERR_IO,
 * SCN_ERR_NOMEM, SCN_ERR_SETUP; *yaml untouched then. stats may be NULL. */
int scn_audit_import(const scn_import_options *o, char **yaml, scn_import_stats *stats,
                     scn_error *err);

/* A run's trace (scenario --trace, fakeapi serve --trace) as an audit log
 * (JSON lines, Metadata level): every request line becomes one Event, the
 * faults fired on it its annotations. 0 and the text in *out, or
 * SCN_ERR_INPUT / SCN_ERR_IO with *err filled. *skipped (may be NULL)
 * counts the watch-event lines, which an audit log cannot hold. */
int scn_trace_to_audit(const char *trace_path, char **out, size_t *skipped, scn_error *err);

/* The reverse: an audit log as a trace (request lines, and the fault lines
 * kept in annotations). Needs what a trace holds: the User-Agent, the
 * verb, the request URI, the status, stageTimestamp. */
int scn_audit_to_trace(const char *audit_path, char **out, scn_error *err);

#ifdef __cplusplus
}
#endif

#endif
