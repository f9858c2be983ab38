/*
 * replay_run.h - running the `request` and `expectWrite` steps (private to
 * libscenario; runner.c calls them on the driver thread).
 */
#ifndef SCN_REPLAY_RUN_H
#define SCN_REPLAY_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "fakeapi/fakeapi.h"
#include "scn/scenario.h"

/* A copy of obj (new reference; NULL if out of memory) whose
 * ownerReferences name the owners as they exist in srv now: each uid
 * replaced by that of the object of the reference's apiVersion, kind and
 * name (in ns, or the object's own namespace; or cluster-scoped), if there
 * is one. A recorded uid belongs to another cluster; the name is what a
 * replay can keep. */
json_t *scn__bind_owners(fakeapi_server *srv, const json_t *obj, const char *ns);

/* Send a REQUEST step's request in-process. 0, or -1 with why in msg (a
 * status other than the one expected). */
int scn__run_request(fakeapi_server *srv, const scn_step *st, char *msg, size_t len);

/* Look for a request matching an EXPECT_WRITE step that no earlier step
 * took: in the trace file, or, when the step has a body, in the run's audit
 * record (fakeapi_record_open), which holds the bodies. used (an object the
 * caller owns, empty at first, one per run) keeps what was read of both
 * files and which writes were taken, so each call reads only what is new.
 * 1 (the write now taken), 0 (what is missing in msg), or -1 if the file
 * cannot be read. */
int scn__find_write(const char *trace_path, const char *record_path, const scn_step *st,
                    json_t *used, char *msg, size_t len);

/* A fixture's status (obj borrowed), written through its status
 * subresource once the fixture is applied: a create drops it, and an
 * object recorded on a cluster came with one. 0 (also when the kind has no
 * status subresource, or obj no status), or -1 with why in msg. */
int scn__fixture_status(fakeapi_server *srv, const json_t *obj, char *msg, size_t len);

/* Does the scenario need the run recorded (an expectWrite with a body)? */
bool scn__needs_record(const scn_scenario *sc);

#endif
