/*
 * cron.h - CronJob schedules: the standard five-field cron syntax as
 * Kubernetes parses it (robfig/cron's ParseStandard), and the next and
 * previous matching times, in UTC.
 *
 *     minute  hour  day-of-month  month  day-of-week
 *     0-59    0-23  1-31          1-12   0-6 (Sunday = 0)
 *
 * Each field is a comma-separated list of `*` or `?`, `n`, `a-b`, `x/s`
 * (x one of those, s a step; `n/s` is n to the field's maximum), with
 * month names JAN-DEC and day names SUN-SAT in any case. Descriptors
 * @yearly (@annually), @monthly, @weekly, @daily (@midnight) and @hourly.
 * Day matching as robfig/cron: when day-of-month or day-of-week is `*` (or
 * `?`, without a step above 1) both must match, otherwise either may.
 * A schedule that never fires (`0 0 30 2 *`) is an error. Not supported:
 * `@every`, `CRON_TZ=`/`TZ=` prefixes (the API server refuses those in
 * spec.schedule anyway), time zones other than UTC.
 *
 * Times are seconds since the Unix epoch (UTC). Pure functions: any thread.
 */
#ifndef KC_CRON_H
#define KC_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kc_cron {
    uint64_t minute; /* bit per allowed value */
    uint32_t hour;
    uint32_t dom;   /* bits 1-31 */
    uint32_t month; /* bits 1-12 */
    uint32_t dow;   /* bits 0-6 */
    bool dom_star, dow_star;
} kc_cron;

/* Parse expr into *out: 0, or -1 with *out untouched and the reason in
 * errbuf (may be NULL), e.g. "minute: 60 out of range 0-59". */
int kc__cron_parse(const char *expr, kc_cron *out, char *errbuf, size_t errlen);

/* Does c fire at t (a whole minute)? */
bool kc__cron_matches(const kc_cron *c, int64_t t);

/* The first firing strictly after t, or -1 when none within 10 years. */
int64_t kc__cron_next(const kc_cron *c, int64_t t);

/* The last firing at or before t, or -1 when none within 10 years. */
int64_t kc__cron_prev(const kc_cron *c, int64_t t);

#endif
