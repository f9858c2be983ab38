/*
 * leadership.h - the singleLeader invariant: no replica writes unless it
 * holds the Lease, checked over a run's trace (private to the runner).
 *
 * The fake server writes every request to the trace as it answers it, with
 * its client (User-Agent), verb, method, path, status and virtual time. A
 * checker reads the lines added since it last looked, in the server's order,
 * and keeps who holds the Lease: a replica's successful write of the Lease
 * (create, update, patch) means it holds it from then for the lease duration;
 * a delete ends every hold. Every other successful write (2xx; dropped
 * requests answer 0 and are not writes) by a replica must come from the
 * holder, within that time.
 *
 * Limits: the trace holds no bodies. A create of any Lease in the namespace
 * counts as a write of this one (a create names its object only in the body),
 * and a release (holderIdentity "") as a renewal: the releasing replica is
 * stopping.
 *
 * Threads: one checker is used by one thread (the driver), at quiescent
 * points, when the server writes nothing.
 */
#ifndef SCN_LEADERSHIP_H
#define SCN_LEADERSHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scn/scenario.h"

typedef struct scn__leadership scn__leadership;

/* Which replica a client (a User-Agent) belongs to: its index, and the
 * identity it writes into holderIdentity (into identity, len bytes); -1 for
 * a client that is no replica. */
typedef int (*scn__replica_of_fn)(void *ud, const char *client, char *identity, size_t len);

/* Whether client (a User-Agent) is the replica whose first incarnation's
 * User-Agent is base ("scenario/<controller>-<k>"): base itself, or base
 * ".r<n>" (a restarted incarnation), alone or followed by "/<component>".
 * Exact: "scenario/rs-10/podset" is not "scenario/rs-1". If so, its
 * identity (the incarnation's User-Agent, the holderIdentity it writes)
 * goes to identity (len bytes). */
bool scn__client_is(const char *base, const char *client, char *identity, size_t len);

/* A checker of c (SCN_COND_SINGLE_LEADER; borrowed, must outlive it) over
 * the trace at trace_path, from its start; times in messages count from
 * epoch_ns. 0 and *out, or SCN_ERR_NOMEM / SCN_ERR_IO. */
int scn__leadership_new(const scn_cond *c, const char *trace_path, int64_t epoch_ns,
                        scn__leadership **out);
void scn__leadership_free(scn__leadership *lt);

/* Read the lines the trace has gained: true if every write in them held;
 * else false, and msg (len bytes) names the replica, the write, its time and
 * who held the Lease. A line not yet complete is read next time. */
bool scn__leadership_check(scn__leadership *lt, scn__replica_of_fn who, void *ud, char *msg,
                           size_t len);

/* How often the Lease changed hands (to another identity) so far. */
unsigned long scn__leadership_changes(const scn__leadership *lt);

#endif
