/*
 * audit_event.h - Kubernetes audit logs (audit.k8s.io/v1 Event) read and
 * checked (private to libscenario).
 *
 * A log is JSON lines (one Event per line, as kube-apiserver's log backend
 * writes them) or one EventList (the webhook backend's batches), or a
 * stream of EventLists. Every event is checked for the fields a replay
 * needs; the events of one request (one auditID, several stages) are
 * collapsed into the most complete one.
 *
 * Ownership: a scn__audit_log owns its events; scn__audit_log_free frees
 * them. One thread at a time.
 */
#ifndef SCN_AUDIT_EVENT_H
#define SCN_AUDIT_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "scn/scenario.h"

typedef struct scn__audit_event {
    json_t *ev;       /* the Event (own reference) */
    const char *file; /* borrowed from the caller's file names */
    int line;         /* 1-based, 0 if unknown */
    const char *audit_id, *stage, *level, *verb, *uri, *user_agent;
    const char *username; /* impersonatedUser's when the request impersonated */
    /* objectRef (NULL members when absent) */
    const char *group, *version, *resource, *subresource, *ns, *name;
    int code;            /* responseStatus.code, 0 if none */
    int64_t received_ns; /* requestReceivedTimestamp, Unix ns */
    size_t seq;          /* order of first appearance */
} scn__audit_event;

typedef struct scn__audit_log {
    scn__audit_event *ev; /* collapsed, sorted by received_ns then seq */
    size_t n, cap;
    size_t raw;  /* events read, before collapsing stages */
    json_t *ids; /* auditID -> index in ev */
    /* Set before reading to keep only writes and reads that show objects
     * (what an import needs: a busy cluster's log is mostly watches and
     * lists); the others are only counted, in skipped (auditID -> true). */
    bool lean;
    json_t *skipped;
    int64_t first_ns; /* the earliest requestReceivedTimestamp of all (kept or not) */
} scn__audit_log;

/* Read one audit log file and add its events to log. 0, or SCN_ERR_INPUT
 * (the file, line and field in *err) or SCN_ERR_IO. */
int scn__audit_read(scn__audit_log *log, const char *path, scn_error *err);

/* The same for a log already in memory (buf need not end in NUL); path
 * names it in messages and must outlive log. */
int scn__audit_read_buf(scn__audit_log *log, const char *path, const char *buf, size_t len,
                        scn_error *err);

/* Sort the events by the time their requests were received. */
void scn__audit_sort(scn__audit_log *log);

/* Requests read: the events kept and the lean ones, one per auditID. */
size_t scn__audit_requests(const scn__audit_log *log);

void scn__audit_log_free(scn__audit_log *log);

/* An RFC 3339 time ("2026-01-01T00:00:00.123456Z", or with an offset) as
 * Unix ns; -1 if malformed. */
int64_t scn__parse_rfc3339(const char *s);

/* create, update, patch, delete, deletecollection. */
bool scn__audit_is_write(const char *verb);

#endif
