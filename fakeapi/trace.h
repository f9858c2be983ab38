/*
 * trace.h - the server's trace: every request, fired fault and delivered
 * watch event as one JSON line each, in the order they happen.
 *
 * Times come from the server's clock (virtual in scenarios, so a trace never
 * reads the wall clock). Bodies are never written: no Secret data, no
 * tokens. One mutex serialises lines; callable from any thread.
 */
#ifndef FAKEAPI_TRACE_H
#define FAKEAPI_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "fault.h"
#include "server_int.h"

int fakeapi__trace_open(fakeapi_server *srv, const char *path, char *err, size_t errlen);
void fakeapi__trace_close(fakeapi_server *srv);

/* True while a trace is open (callers skip building what would be thrown away). */
bool fakeapi__tracing(fakeapi_server *srv);

void fakeapi__trace_request(fakeapi_server *srv, const fakeapi__reqinfo *ri, const char *method,
                            const char *path, int status, const char *rv);
void fakeapi__trace_fault(fakeapi_server *srv, const fakeapi__reqinfo *ri, uint64_t rule,
                          const char *what);
void fakeapi__trace_event(fakeapi_server *srv, uint64_t watch, const char *client, const char *type,
                          const char *key, const char *ns, const char *name, uint64_t rv);

/* One member of a trace line: a string (str) or an integer. */
typedef struct fakeapi__trace_field {
    const char *key;
    const char *str;
    bool is_int;
    long long num;
} fakeapi__trace_field;

/* The line (no newline, malloc'd) the members make, as json_dumps(JSON_COMPACT
 * | JSON_SORT_KEYS) would write the object json_pack would build of them
 * (they come sorted by key); NULL where json_pack would fail: a NULL or
 * invalid UTF-8 string. Any thread. */
char *fakeapi__trace_line(const fakeapi__trace_field *f, size_t n);

#endif
