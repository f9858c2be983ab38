/*
 * timefmt.h - the server's clock and Kubernetes time formats: writing
 * timestamps, reading them back, and kubectl's human durations.
 *
 * Every timestamp the server writes comes through fakeapi__now_ns() from the
 * embedder's clock (DESIGN.md: determinism). Reentrant.
 */
#ifndef FAKEAPI_TIMEFMT_H
#define FAKEAPI_TIMEFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fakeapi/fakeapi.h"

/* Nanoseconds since the epoch from clock, or from CLOCK_REALTIME if NULL. */
int64_t fakeapi__now_ns(const fakeapi_clock *clock);

/* RFC 3339 in whole seconds, UTC: "2026-12-02T09:35:36Z". buf >= 21 bytes. */
void fakeapi__fmt_time(int64_t ns, char *buf, size_t len);

/* MicroTime with exactly six fraction digits: "2026-12-02T09:35:36.123456Z". */
void fakeapi__fmt_microtime(int64_t ns, char *buf, size_t len);

/*
 * kubectl's human duration of ns nanoseconds ("45s", "3m20s", "5h", "2d4h",
 * "1y30d"; "0s" for a small negative skew, "<invalid>" below -1s), written
 * NUL-terminated into buf (>= 16 bytes is always enough).
 */
void fakeapi__human_duration(int64_t ns, char *buf, size_t len);

/*
 * An RFC 3339 timestamp ("2026-12-02T09:35:36Z", optional fraction and
 * numeric offset) as nanoseconds since the epoch. Returns 0, or -1 if s is
 * not one (*ns untouched).
 */
int fakeapi__parse_time(const char *s, int64_t *ns);

#endif
