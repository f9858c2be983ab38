#include "timefmt.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS_PER_SEC INT64_C(1000000000)

int64_t fakeapi__now_ns(const fakeapi_clock *clock)
{
    if (clock && clock->now_ns)
        return clock->now_ns(clock->ud);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void fmt_utc(int64_t ns, const char *frac, char *buf, size_t len)
{
    time_t secs = (time_t)(ns / 1000000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    int year = tm.tm_year + 1900; /* 1677 to 2262: what int64 nanoseconds reach */
    /* "YYYY-MM-DDTHH:MM:SS" FRAC "Z", digit by digit: every write and every
     * event stamps one, and printf took 3,500 instructions a stamp. */
    char t[64];
    const int f[6] = {year / 100, year % 100, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min};
    static const char sep[6] = {0, 0, '-', '-', 'T', ':'};
    size_t at = 0;
    for (int i = 0; i < 6; i++) {
        if (sep[i])
            t[at++] = sep[i];
        t[at++] = (char)('0' + f[i] / 10);
        t[at++] = (char)('0' + f[i] % 10);
    }
    t[at++] = ':';
    t[at++] = (char)('0' + tm.tm_sec / 10);
    t[at++] = (char)('0' + tm.tm_sec % 10);
    size_t fl = strlen(frac);
    if (fl > sizeof t - at - 2)
        fl = sizeof t - at - 2;
    memcpy(t + at, frac, fl);
    at += fl;
    t[at++] = 'Z';
    if (len) {
        size_t n = at < len - 1 ? at : len - 1;
        memcpy(buf, t, n);
        buf[n] = '\0';
    }
}

void fakeapi__fmt_time(int64_t ns, char *buf, size_t len)
{
    fmt_utc(ns, "", buf, len);
}

void fakeapi__fmt_microtime(int64_t ns, char *buf, size_t len)
{
    char frac[16];
    snprintf(frac, sizeof frac, ".%06d", (int)((ns % 1000000000) / 1000));
    fmt_utc(ns, frac, buf, len);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

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

int fakeapi__parse_time(const char *s, int64_t *ns)
{
    int y, mo, d, h, mi, sec;
    if (!s || strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
        s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
        !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
        !digits(s + 17, 2, &sec))
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return -1;
    const char *p = s + 19;
    int64_t frac = 0;
    if (*p == '.') {
        int64_t scale = NS_PER_SEC / 10;
        p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        for (; isdigit((unsigned char)*p); p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    int64_t offset = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om;
        if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om))
            return -1;
        offset = (oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset;
    *ns = secs * NS_PER_SEC + frac;
    return 0;
}

void fakeapi__human_duration(int64_t d, char *buf, size_t len)
{
    /* Same thresholds as apimachinery's duration.HumanDuration (~2-3 significant figures). */
    int64_t seconds = d / NS_PER_SEC;
    if (seconds < -1) {
        snprintf(buf, len, "<invalid>");
        return;
    }
    if (seconds < 0) {
        snprintf(buf, len, "0s");
        return;
    }
    if (seconds < 60 * 2) {
        snprintf(buf, len, "%" PRId64 "s", seconds);
        return;
    }
    int64_t minutes = seconds / 60;
    int64_t hours = seconds / 3600;
    int64_t days = hours / 24;
    if (minutes < 10) {
        if (seconds % 60 == 0)
            snprintf(buf, len, "%" PRId64 "m", minutes);
        else
            snprintf(buf, len, "%" PRId64 "m%" PRId64 "s", minutes, seconds % 60);
    } else if (minutes < 60 * 3) {
        snprintf(buf, len, "%" PRId64 "m", minutes);
    } else if (hours < 8) {
        if (minutes % 60 == 0)
            snprintf(buf, len, "%" PRId64 "h", hours);
        else
            snprintf(buf, len, "%" PRId64 "h%" PRId64 "m", hours, minutes % 60);
    } else if (hours < 48) {
        snprintf(buf, len, "%" PRId64 "h", hours);
    } else if (hours < 24 * 8) {
        if (hours % 24 == 0)
            snprintf(buf, len, "%" PRId64 "d", days);
        else
            snprintf(buf, len, "%" PRId64 "d%" PRId64 "h", days, hours % 24);
    } else if (hours < 24 * 365 * 2) {
        snprintf(buf, len, "%" PRId64 "d", days);
    } else if (hours < 24 * 365 * 8) {
        if (days % 365 == 0)
            snprintf(buf, len, "%" PRId64 "y", days / 365);
        else
            snprintf(buf, len, "%" PRId64 "y%" PRId64 "d", days / 365, days % 365);
    } else {
        snprintf(buf, len, "%" PRId64 "y", days / 365);
    }
}

/* The age of a timestamp string at now_ns; "<unknown>" when absent, "<invalid>" if bad. */
