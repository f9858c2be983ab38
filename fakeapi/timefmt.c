#include "timefmt.h"

#include <stdio.h>
#include <time.h>

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
    snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d%sZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
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
