/*
 * test_timefmt.c - the server's timestamps (fakeapi/timefmt.h): written as
 * strftime would write them, read back to the same instant, cut to the
 * buffer as snprintf cuts.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "timefmt.h"

static void reference(int64_t ns, const char *frac, char *buf, size_t len)
{
    time_t secs = (time_t)(ns / 1000000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char t[40];
    strftime(t, sizeof t, "%Y-%m-%dT%H:%M:%S", &tm);
    cr_assert_lt(strlen(t) + strlen(frac) + 2, len);
    strcat(strcat(strcpy(buf, t), frac), "Z");
}

Test(timefmt, times_as_strftime_writes_them)
{
    /* Seconds from 1970 through leap days and year ends, to the last year
     * int64 nanoseconds reach. */
    const int64_t s_per_day = 86400;
    int64_t at[] = {0,          1, 59, 86399, 951782400, /* 2000-02-29 */
                    1798761599,                          /* 2026-12-31T23:59:59 */
                    1798761600,                          /* 2027-01-01 */
                    4102444800,                          /* 2100-01-01 */
                    9214646399};                         /* 2261-12-31T23:59:59 */
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        for (int64_t d = 0; d < 3; d++) {
            int64_t ns = (at[i] + d * s_per_day + d * 3661) * 1000000000 + 123456789;
            char got[64], want[64];
            fakeapi__fmt_time(ns, got, sizeof got);
            reference(ns, "", want, sizeof want);
            cr_assert_str_eq(got, want);
            int64_t back = 0;
            cr_assert_eq(fakeapi__parse_time(got, &back), 0, "%s", got);
            cr_assert_eq(back, ns / 1000000000 * 1000000000, "%s", got);
            fakeapi__fmt_microtime(ns, got, sizeof got);
            reference(ns, ".123456", want, sizeof want);
            cr_assert_str_eq(got, want);
        }
    }
}

Test(timefmt, cut_to_the_buffer)
{
    char buf[32];
    for (size_t len = 1; len <= 21; len++) {
        memset(buf, 'x', sizeof buf);
        fakeapi__fmt_time(1798761599LL * 1000000000, buf, len);
        cr_assert_eq(strlen(buf), len - 1);
        cr_assert(!strncmp(buf, "2026-12-31T23:59:59Z", len - 1), "%zu: %s", len, buf);
        cr_assert_eq(buf[len], 'x', "nothing written past the buffer");
    }
}
