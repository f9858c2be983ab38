/*
 * cron.c - cron schedules and UTC calendar arithmetic (see cron.h).
 *
 * Next and previous times walk a broken-down UTC time field by field, as
 * robfig/cron does: a month that does not match moves to the next (or
 * previous) month's first (last) minute, a day to the next day's, an hour to
 * the next hour's, a minute to the next minute; every move restarts the
 * checks from the month. Days are converted with Howard Hinnant's
 * days_from_civil / civil_from_days (proleptic Gregorian), so nothing
 * depends on the C library's time zone or on timegm.
 */
#include "cron.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEARCH_YEARS 10 /* Feb 29 can be 8 years away (2096 -> 2104) */
#define MIN_YEAR 1
#define MAX_YEAR 9999

/* ---- calendar ---- */

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
    static const int dim[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dim[m - 1];
}

/* Days since 1970-01-01 of y-m-d. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

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

/* 0 = Sunday. 1970-01-01 was a Thursday. */
static int weekday(int64_t days)
{
    int64_t w = (days + 4) % 7;
    return (int)(w < 0 ? w + 7 : w);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* A broken-down UTC minute. */
typedef struct tm_utc {
    int64_t y;
    int mo, d, h, mi;
} tm_utc;

static tm_utc to_tm(int64_t t)
{
    tm_utc tm;
    int64_t days = floor_div(t, 86400), secs = t - days * 86400;
    civil_from_days(days, &tm.y, &tm.mo, &tm.d);
    tm.h = (int)(secs / 3600);
    tm.mi = (int)(secs % 3600 / 60);
    return tm;
}

static int64_t from_tm(const tm_utc *tm)
{
    return days_from_civil(tm->y, tm->mo, tm->d) * 86400 + tm->h * 3600 + tm->mi * 60;
}

/* ---- time strings ---- */

static bool digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

int example_time_parse(const char *s, int64_t *out)
{
    int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
    if (!s || strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
        s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
        !digits(s + 17, 2, &sec))
        return -1;
    const char *p = s + 19;
    if (*p == '.') {
        if (!isdigit((unsigned char)*++p))
            return -1;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if ((*p == 'Z' || *p == 'z') && !p[1]) {
        sign = 0;
    } else if ((*p == '+' || *p == '-') && strlen(p) == 6 && digits(p + 1, 2, &oh) && p[3] == ':' &&
               digits(p + 4, 2, &om) && oh <= 23 && om <= 59) {
        sign = *p == '+' ? 1 : -1;
    } else {
        return -1;
    }
    /* Second 60: a leap second, as RFC 3339 allows; it counts as :59. */
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 60)
        return -1;
    if (sec == 60)
        sec = 59;
    *out =
        days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - sign * (oh * 3600 + om * 60);
    return 0;
}

void example_time_format(int64_t t, char *buf, size_t len)
{
    if (!buf || !len)
        return;
    int64_t days = floor_div(t, 86400), secs = t - days * 86400, y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    snprintf(buf, len, "%04lld-%02d-%02dT%02d:%02d:%02dZ", (long long)y, m, d, (int)(secs / 3600),
             (int)(secs % 3600 / 60), (int)(secs % 60));
}

/* ---- parsing ---- */

typedef struct field_def {
    const char *name;
    int min, max;
    const char *const *names; /* names[i] stands for min + i; NULL = none */
} field_def;

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                          "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const day_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

static const field_def fields[5] = {
    {"minute", 0, 59, NULL},          {"hour", 0, 23, NULL},
    {"day-of-month", 1, 31, NULL},    {"month", 1, 12, month_names},
    {"day-of-week", 0, 7, day_names},
};

static int perr(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int perr(char *errbuf, size_t errlen, const char *fmt, ...)
{
    if (errbuf && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* A number or (for fields that have them) a name, [s, e). */
static int parse_value(const field_def *f, const char *s, const char *e, int *out, char *errbuf,
                       size_t errlen)
{
    size_t n = (size_t)(e - s);
    if (n == 0)
        return perr(errbuf, errlen, "%s: empty value", f->name);
    if (isdigit((unsigned char)*s)) {
        long v = 0;
        for (const char *p = s; p < e; p++) {
            if (!isdigit((unsigned char)*p))
                return perr(errbuf, errlen, "%s: not a number: \"%.*s\"", f->name, (int)n, s);
            v = v * 10 + (*p - '0');
            if (v > 1000)
                break;
        }
        if (v < f->min || v > f->max)
            return perr(errbuf, errlen, "%s: %.*s is out of range %d-%d", f->name, (int)n, s,
                        f->min, f->max);
        *out = (int)v;
        return 0;
    }
    if (f->names && n == 3) {
        int count = f->max - f->min + 1 - (f == &fields[4]); /* no name for 7 */
        for (int i = 0; i < count; i++) {
            if (tolower((unsigned char)s[0]) == f->names[i][0] &&
                tolower((unsigned char)s[1]) == f->names[i][1] &&
                tolower((unsigned char)s[2]) == f->names[i][2]) {
                *out = f->min + i;
                return 0;
            }
        }
    }
    return perr(errbuf, errlen, "%s: not a number%s: \"%.*s\"", f->name, f->names ? " or name" : "",
                (int)n, s);
}

/* One comma-separated part [s, e) of field f: bits into *bits, *star if it
 * is an unrestricted `*` or `?`. */
static int parse_part(const field_def *f, const char *s, const char *e, uint64_t *bits, bool *star,
                      char *errbuf, size_t errlen)
{
    const char *slash = memchr(s, '/', (size_t)(e - s));
    const char *re = slash ? slash : e;
    int lo, hi, step = 1;
    bool any = false;
    if (slash) {
        const char *p = slash + 1;
        long v = 0;
        if (p == e)
            return perr(errbuf, errlen, "%s: missing step after '/'", f->name);
        for (; p < e; p++) {
            if (!isdigit((unsigned char)*p))
                return perr(errbuf, errlen, "%s: not a step: \"%.*s\"", f->name,
                            (int)(e - slash - 1), slash + 1);
            v = v * 10 + (*p - '0');
            if (v > 1000)
                break;
        }
        if (v < 1 || v > f->max)
            return perr(errbuf, errlen, "%s: step %.*s is out of range 1-%d", f->name,
                        (int)(e - slash - 1), slash + 1, f->max);
        step = (int)v;
    }
    if (re - s == 1 && (*s == '*' || *s == '?')) {
        lo = f->min;
        hi = f->max == 7 ? 6 : f->max; /* `*` in day-of-week: 0-6 */
        any = true;
    } else {
        const char *dash = memchr(s, '-', (size_t)(re - s));
        if (parse_value(f, s, dash ? dash : re, &lo, errbuf, errlen) < 0)
            return -1;
        if (dash) {
            if (parse_value(f, dash + 1, re, &hi, errbuf, errlen) < 0)
                return -1;
            if (hi < lo)
                return perr(errbuf, errlen, "%s: range %.*s goes backwards", f->name, (int)(re - s),
                            s);
        } else {
            hi = slash ? f->max : lo; /* `a/n` is a to the maximum, every n */
        }
    }
    for (int v = lo; v <= hi; v += step)
        *bits |= (uint64_t)1 << (v == 7 && f == &fields[4] ? 0 : v);
    if (any && step == 1)
        *star = true;
    return 0;
}

static int parse_field(const field_def *f, const char *s, const char *e, uint64_t *bits, bool *star,
                       char *errbuf, size_t errlen)
{
    *bits = 0;
    *star = false;
    for (const char *p = s;;) {
        const char *comma = memchr(p, ',', (size_t)(e - p));
        const char *pe = comma ? comma : e;
        if (pe == p)
            return perr(errbuf, errlen, "%s: empty list element", f->name);
        if (parse_part(f, p, pe, bits, star, errbuf, errlen) < 0)
            return -1;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

static const struct {
    const char *name, *expr;
} descriptors[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

int example_cron_parse(const char *expr, example_cron *out, char *errbuf, size_t errlen)
{
    if (!expr || !out)
        return perr(errbuf, errlen, "no schedule");
    while (isspace((unsigned char)*expr))
        expr++;
    if (*expr == '@') {
        size_t n = strcspn(expr, " \t\r\n");
        const char *rest = expr + n;
        while (isspace((unsigned char)*rest))
            rest++;
        for (size_t i = 0; i < sizeof descriptors / sizeof descriptors[0]; i++) {
            if (strlen(descriptors[i].name) == n && !strncmp(expr, descriptors[i].name, n) &&
                !*rest)
                return example_cron_parse(descriptors[i].expr, out, errbuf, errlen);
        }
        return perr(errbuf, errlen,
                    "unknown descriptor \"%.*s\" (expected @yearly, @annually, "
                    "@monthly, @weekly, @daily, @midnight or @hourly)",
                    (int)n, expr);
    }
    if (!strncmp(expr, "TZ=", 3) || !strncmp(expr, "CRON_TZ=", 8))
        return perr(errbuf, errlen, "time zones are not supported: schedules are in UTC");

    example_cron c = {0};
    uint64_t bits[5];
    bool star[5];
    const char *p = expr;
    for (int i = 0; i < 5; i++) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            return perr(errbuf, errlen,
                        "expected 5 fields (minute hour day-of-month month "
                        "day-of-week), found %d",
                        i);
        const char *e = p;
        while (*e && !isspace((unsigned char)*e))
            e++;
        if (parse_field(&fields[i], p, e, &bits[i], &star[i], errbuf, errlen) < 0)
            return -1;
        p = e;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p)
        return perr(errbuf, errlen, "expected 5 fields, found more: \"%s\"", p);
    c.minute = bits[0];
    c.hour = (uint32_t)bits[1];
    c.dom = (uint32_t)bits[2];
    c.month = (uint32_t)bits[3];
    c.dow = (uint32_t)bits[4];
    c.dom_star = star[2];
    c.dow_star = star[4];

    /* With day-of-week unrestricted the day of month must exist in one of
     * the months (Feb 29 does, in leap years). */
    if (c.dow_star) {
        bool possible = false;
        for (int m = 1; m <= 12 && !possible; m++) {
            if (!(c.month >> m & 1))
                continue;
            int max = m == 2 ? 29 : days_in_month(2001, m);
            for (int d = 1; d <= max && !possible; d++)
                possible = c.dom >> d & 1;
        }
        if (!possible)
            return perr(errbuf, errlen, "never fires: no month of the schedule has those days");
    }
    *out = c;
    return 0;
}

/* ---- matching and searching ---- */

static bool day_ok(const example_cron *c, const tm_utc *tm)
{
    bool dm = c->dom >> tm->d & 1;
    bool wm = c->dow >> weekday(days_from_civil(tm->y, tm->mo, tm->d)) & 1;
    if (c->dom_star || c->dow_star)
        return dm && wm;
    return dm || wm;
}

bool example_cron_matches(const example_cron *c, int64_t t)
{
    if (!c || floor_div(t, 60) * 60 != t)
        return false;
    tm_utc tm = to_tm(t);
    return (c->month >> tm.mo & 1) && day_ok(c, &tm) && (c->hour >> tm.h & 1) &&
           (c->minute >> tm.mi & 1);
}

/* Year bounds: far enough inside int64 and RFC 3339's four digits. */
static bool in_range(int64_t t)
{
    return t >= days_from_civil(MIN_YEAR, 1, 1) * 86400 &&
           t < days_from_civil(MAX_YEAR + 1, 1, 1) * 86400;
}

static void next_month(tm_utc *tm)
{
    tm->d = 1, tm->h = 0, tm->mi = 0;
    if (++tm->mo > 12)
        tm->mo = 1, tm->y++;
}

static void next_day(tm_utc *tm)
{
    tm->h = 0, tm->mi = 0;
    if (++tm->d > days_in_month(tm->y, tm->mo))
        next_month(tm);
}

static void next_hour(tm_utc *tm)
{
    tm->mi = 0;
    if (++tm->h > 23)
        next_day(tm);
}

int64_t example_cron_next(const example_cron *c, int64_t t)
{
    if (!c || !in_range(t))
        return -1;
    tm_utc tm = to_tm(floor_div(t, 60) * 60 + 60);
    int64_t limit = tm.y + SEARCH_YEARS;
    while (tm.y <= limit) {
        if (!(c->month >> tm.mo & 1))
            next_month(&tm);
        else if (!day_ok(c, &tm))
            next_day(&tm);
        else if (!(c->hour >> tm.h & 1))
            next_hour(&tm);
        else if (!(c->minute >> tm.mi & 1)) {
            if (++tm.mi > 59)
                next_hour(&tm);
        } else {
            int64_t r = from_tm(&tm);
            return in_range(r) ? r : -1;
        }
    }
    return -1;
}

static void prev_month(tm_utc *tm)
{
    if (--tm->mo < 1)
        tm->mo = 12, tm->y--;
    tm->d = days_in_month(tm->y, tm->mo), tm->h = 23, tm->mi = 59;
}

static void prev_day(tm_utc *tm)
{
    tm->h = 23, tm->mi = 59;
    if (--tm->d < 1)
        prev_month(tm);
}

static void prev_hour(tm_utc *tm)
{
    tm->mi = 59;
    if (--tm->h < 0)
        prev_day(tm);
}

int64_t example_cron_prev(const example_cron *c, int64_t t)
{
    if (!c || !in_range(t))
        return -1;
    tm_utc tm = to_tm(floor_div(t, 60) * 60);
    int64_t limit = tm.y - SEARCH_YEARS;
    while (tm.y >= limit) {
        if (!(c->month >> tm.mo & 1))
            prev_month(&tm);
        else if (!day_ok(c, &tm))
            prev_day(&tm);
        else if (!(c->hour >> tm.h & 1))
            prev_hour(&tm);
        else if (!(c->minute >> tm.mi & 1)) {
            if (--tm.mi < 0)
                prev_hour(&tm);
        } else {
            int64_t r = from_tm(&tm);
            return in_range(r) ? r : -1;
        }
    }
    return -1;
}
