/*
 * cron.c - cron schedules, next and previous firings in UTC (cron.h).
 *
 * The search walks whole days (a day either matches on month and day
 * fields or is skipped), then the hours and minutes of a matching day, so
 * even a schedule that fires once in four years (Feb 29) costs a few
 * thousand cheap steps. Calendar conversion with the proleptic Gregorian
 * day-number formulas, independent of the C library's time zone.
 */
#include "cron.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SEARCH_DAYS (366 * 10 + 3)

/* ---- calendar ---- */

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static bool day_matches(const kc_cron *c, int64_t days)
{
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    if (!(c->month >> m & 1))
        return false;
    int64_t w = (days + 4) % 7; /* 1970-01-01 was a Thursday */
    if (w < 0)
        w += 7;
    bool dom = c->dom >> d & 1, dow = c->dow >> w & 1;
    return c->dom_star || c->dow_star ? dom && dow : dom || dow;
}

bool kc__cron_matches(const kc_cron *c, int64_t t)
{
    if (t % 60 != 0)
        return false;
    int64_t days = floor_div(t, 86400), sec = t - days * 86400;
    return day_matches(c, days) && (c->hour >> (sec / 3600) & 1) &&
           (c->minute >> (sec % 3600 / 60) & 1);
}

/* First matching minute of the day at or after minute-of-day from, or -1. */
static int first_in_day(const kc_cron *c, int from)
{
    for (int mod = from < 0 ? 0 : from; mod < 1440; mod++)
        if ((c->hour >> (mod / 60) & 1) && (c->minute >> (mod % 60) & 1))
            return mod;
    return -1;
}

static int last_in_day(const kc_cron *c, int upto)
{
    for (int mod = upto > 1439 ? 1439 : upto; mod >= 0; mod--)
        if ((c->hour >> (mod / 60) & 1) && (c->minute >> (mod % 60) & 1))
            return mod;
    return -1;
}

int64_t kc__cron_next(const kc_cron *c, int64_t t)
{
    int64_t start = floor_div(t, 60) + 1; /* the next whole minute */
    int64_t days = floor_div(start, 1440);
    int from = (int)(start - days * 1440);
    for (int64_t i = 0; i < SEARCH_DAYS; i++, days++, from = 0) {
        if (!day_matches(c, days))
            continue;
        int mod = first_in_day(c, from);
        if (mod >= 0)
            return (days * 1440 + mod) * 60;
    }
    return -1;
}

int64_t kc__cron_prev(const kc_cron *c, int64_t t)
{
    int64_t at = floor_div(t, 60);
    int64_t days = floor_div(at, 1440);
    int upto = (int)(at - days * 1440);
    for (int64_t i = 0; i < SEARCH_DAYS; i++, days--, upto = 1439) {
        if (!day_matches(c, days))
            continue;
        int mod = last_in_day(c, upto);
        if (mod >= 0)
            return (days * 1440 + mod) * 60;
    }
    return -1;
}

/* ---- parsing ---- */

typedef struct field {
    const char *name;
    int min, max;
    const char *const *names; /* value names starting at min, or NULL */
} field;

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
                                          "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const dow_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

static const field fields[5] = {
    {"minute", 0, 59, NULL},          {"hour", 0, 23, NULL},
    {"day-of-month", 1, 31, NULL},    {"month", 1, 12, month_names},
    {"day-of-week", 0, 6, dow_names},
};

__attribute__((format(printf, 3, 4))) static int fail(char *errbuf, size_t errlen, const char *fmt,
                                                      ...)
{
    if (errbuf && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* A number or a name of f in [s, s+n): the value, or -1. */
static long value_of(const field *f, const char *s, size_t n)
{
    if (n == 0 || n > 9)
        return -1;
    if (isdigit((unsigned char)s[0])) {
        long v = 0;
        for (size_t i = 0; i < n; i++) {
            if (!isdigit((unsigned char)s[i]))
                return -1;
            v = v * 10 + (s[i] - '0');
        }
        return v;
    }
    for (size_t i = 0; f->names && f->names[i]; i++)
        if (n == 3 && !strncasecmp(s, f->names[i], 3))
            return f->min + (long)i;
    return -1;
}

/* One comma-separated part of field f into *bits; *star when it is * or ?. */
static int parse_part(const field *f, const char *s, size_t n, uint64_t *bits, bool *star,
                      char *errbuf, size_t errlen)
{
    const char *slash = memchr(s, '/', n);
    size_t rn = slash ? (size_t)(slash - s) : n;
    long lo, hi, step = 1;
    bool is_star = (rn == 1 && (s[0] == '*' || s[0] == '?'));
    if (slash) {
        step = value_of(&(field){"", 0, 0, NULL}, slash + 1, n - rn - 1);
        if (step <= 0)
            return fail(errbuf, errlen, "%s: bad step in \"%.*s\"", f->name, (int)n, s);
    }
    if (is_star) {
        lo = f->min;
        hi = f->max;
    } else {
        const char *dash = memchr(s, '-', rn);
        size_t an = dash ? (size_t)(dash - s) : rn;
        lo = value_of(f, s, an);
        hi = dash ? value_of(f, dash + 1, rn - an - 1) : (slash ? f->max : lo);
        if (lo < 0 || hi < 0)
            return fail(errbuf, errlen, "%s: cannot parse \"%.*s\"", f->name, (int)n, s);
        if (lo < f->min || hi > f->max || lo > f->max)
            return fail(errbuf, errlen, "%s: \"%.*s\" out of range %d-%d", f->name, (int)n, s,
                        f->min, f->max);
        if (lo > hi)
            return fail(errbuf, errlen, "%s: beginning of range after end in \"%.*s\"", f->name,
                        (int)n, s);
    }
    for (long v = lo; v <= hi; v += step)
        *bits |= (uint64_t)1 << v;
    if (is_star && step <= 1)
        *star = true;
    return 0;
}

static int parse_field(const field *f, const char *s, size_t n, uint64_t *bits, bool *star,
                       char *errbuf, size_t errlen)
{
    *bits = 0;
    *star = false;
    while (n > 0) {
        const char *comma = memchr(s, ',', n);
        size_t pn = comma ? (size_t)(comma - s) : n;
        if (pn == 0)
            return fail(errbuf, errlen, "%s: empty list element", f->name);
        if (parse_part(f, s, pn, bits, star, errbuf, errlen) < 0)
            return -1;
        if (!comma)
            break;
        s = comma + 1;
        n -= pn + 1;
        if (n == 0)
            return fail(errbuf, errlen, "%s: empty list element", f->name);
    }
    return 0;
}

static const struct {
    const char *name, *expr;
} descriptors[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

int kc__cron_parse(const char *expr, kc_cron *out, char *errbuf, size_t errlen)
{
    if (!expr)
        return fail(errbuf, errlen, "empty schedule");
    while (isspace((unsigned char)*expr))
        expr++;
    if (*expr == '@') {
        size_t n = strlen(expr);
        while (n && isspace((unsigned char)expr[n - 1]))
            n--;
        for (size_t i = 0; i < sizeof descriptors / sizeof descriptors[0]; i++)
            if (strlen(descriptors[i].name) == n && !strncasecmp(expr, descriptors[i].name, n))
                return kc__cron_parse(descriptors[i].expr, out, errbuf, errlen);
        return fail(errbuf, errlen, "unrecognized descriptor: %.*s", (int)n, expr);
    }
    kc_cron c = {0};
    uint64_t bits[5];
    bool star[5];
    const char *p = expr;
    int nf = 0;
    while (*p) {
        const char *b = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if (nf == 5)
            return fail(errbuf, errlen, "expected exactly 5 fields, found more: %s", expr);
        if (parse_field(&fields[nf], b, (size_t)(p - b), &bits[nf], &star[nf], errbuf, errlen) < 0)
            return -1;
        nf++;
        while (isspace((unsigned char)*p))
            p++;
    }
    if (nf != 5)
        return fail(errbuf, errlen, "expected exactly 5 fields, found %d: %s", nf, expr);
    c.minute = bits[0];
    c.hour = (uint32_t)bits[1];
    c.dom = (uint32_t)bits[2];
    c.month = (uint32_t)bits[3];
    c.dow = (uint32_t)bits[4];
    c.dom_star = star[2];
    c.dow_star = star[4];
    if (kc__cron_next(&c, 0) < 0)
        return fail(errbuf, errlen, "the schedule never fires: %s", expr);
    *out = c;
    return 0;
}
