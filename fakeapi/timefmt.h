/*
 * timefmt.h - the server's clock and Kubernetes time formats.
 *
 * Every timestamp the server writes comes through fakeapi__now_ns() from the
 * embedder's clock (DESIGN.md: determinism). Reentrant.
 */
#ifndef FAKEAPI_TIMEFMT_H
#define FAKEAPI_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

#include "fakeapi/fakeapi.h"

/* Nanoseconds since the epoch from clock, or from CLOCK_REALTIME if NULL. */
int64_t fakeapi__now_ns(const fakeapi_clock *clock);

/* RFC 3339 in whole seconds, UTC: "2026-12-02T09:35:36Z". buf >= 21 bytes. */
void fakeapi__fmt_time(int64_t ns, char *buf, size_t len);

/* MicroTime with exactly six fraction digits: "2026-12-02T09:35:36.123456Z". */
void fakeapi__fmt_microtime(int64_t ns, char *buf, size_t len);

#endif
