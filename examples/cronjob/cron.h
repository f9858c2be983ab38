/*
 * cron.h - a small cron-schedule parser and next/previous-time computation
 * in UTC, for the CronTask controller (cronjob.h); no dependency on libctrl,
 * so it is unit-tested on its own (tests/unit/examples/test_cron.c).
 *
 * Syntax: five fields separated by blanks,
 *
 *     minute  hour  day-of-month  month  day-of-week
 *     0-59    0-23  1-31          1-12   0-7 (0 and 7 are Sunday)
 *
 * each a comma-separated list of `*` (or `?`), `n`, `a-b`, `* /n`
 * (written without the blank), `a-b/n` and `a/n` (a to the field's maximum,
 * every n), with month names JAN-DEC and day names SUN-SAT in any case;
 * or one of @yearly (@annually), @monthly, @weekly, @daily (@midnight) and
 * @hourly. As in Kubernetes' CronJob (robfig/cron): when both day fields are
 * restricted a day matches if either does (`0 0 1 * MON` is the 1st and
 * every Monday), otherwise both must match; a field counts as unrestricted
 * only when it is `*` or `?` with no step above 1 (so `* /2` restricts,
 * unlike Vixie cron). A schedule that can never fire (`0 0 30 2 *`) is a
 * parse error. Times are seconds since the Unix epoch, UTC; there is no
 * TZ= prefix.
 *
 * Everything here is pure and thread-safe.
 */
#ifndef EXAMPLE_CRON_H
#define EXAMPLE_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A parsed schedule: one bit per allowed value. Zero-initialisable. */
typedef struct example_cron {
    uint64_t minute; /* bits 0-59 */
    uint32_t hour;   /* bits 0-23 */
    uint32_t dom;    /* bits 1-31 */
    uint32_t month;  /* bits 1-12 */
    uint32_t dow;    /* bits 0-6, Sunday = 0 */
    bool dom_star;   /* day-of-month unrestricted (see above) */
    bool dow_star;
} example_cron;

/*
 * Parse expr (borrowed) into *out. Returns 0, or -1 with *out untouched and
 * errbuf (may be NULL; errlen bytes, always terminated) saying why, e.g.
 * `minute: 60 is out of range 0-59`.
 */
int example_cron_parse(const char *expr, example_cron *out, char *errbuf, size_t errlen);

/* True when t (seconds, UTC) is on a whole minute that c matches. */
bool example_cron_matches(const example_cron *c, int64_t t);

/*
 * The first time strictly after t that c matches (a whole minute), or -1
 * when there is none within ten years (a zero or hand-made example_cron) or
 * t is outside the years 1-9999. Times before 1970 are negative; -1
 * (1969-12-31T23:59:59Z) is never a whole minute, so it cannot be a result.
 */
int64_t example_cron_next(const example_cron *c, int64_t t);

/* The last time at or before t that c matches, or -1 as above. */
int64_t example_cron_prev(const example_cron *c, int64_t t);

/* ---- UTC calendar helpers ---- */

/*
 * Parse an RFC 3339 time ("2026-01-02T00:00:00Z", fractions and numeric
 * offsets allowed; fractions dropped) into seconds since the epoch. 0, or -1
 * (malformed) with *out untouched.
 */
int example_time_parse(const char *s, int64_t *out);

/* Format t as "YYYY-MM-DDTHH:MM:SSZ" into buf (at least 21 bytes for years
 * 0-9999; truncated otherwise). */
void example_time_format(int64_t t, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
