/*
 * test_cron.c - the cron parser and next/previous times of the CronTask
 * controller (examples/cronjob/cron.h): syntax (lists, ranges, steps,
 * names, descriptors) and its errors, the day-of-month / day-of-week rule,
 * month ends, leap years (2100 is not one), year ends, RFC 3339 times, and
 * next/prev checked against a minute-by-minute scan.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cron.h"

#define JAN1_2026 ((int64_t)1767225600) /* 2026-01-01T00:00:00Z, a Thursday */

static example_cron parse(const char *expr)
{
    example_cron c;
    char err[256] = "";
    cr_assert_eq(example_cron_parse(expr, &c, err, sizeof err), 0, "\"%s\": %s", expr, err);
    return c;
}

static void parse_fails(const char *expr, const char *want)
{
    example_cron c;
    memset(&c, 0xAB, sizeof c);
    example_cron before = c;
    char err[256] = "";
    cr_assert_eq(example_cron_parse(expr, &c, err, sizeof err), -1, "\"%s\" parsed", expr);
    cr_assert(strstr(err, want), "\"%s\": error \"%s\" lacks \"%s\"", expr, err, want);
    cr_assert(!memcmp(&c, &before, sizeof c), "\"%s\": output changed on error", expr);
}

static int64_t ts(const char *s)
{
    int64_t t;
    cr_assert_eq(example_time_parse(s, &t), 0, "bad time %s", s);
    return t;
}

static void expect_next(const char *expr, const char *from, const char *want)
{
    example_cron c = parse(expr);
    char got[32] = "none";
    int64_t t = example_cron_next(&c, ts(from));
    if (t != -1) /* -1 is never a whole minute: it means none */
        example_time_format(t, got, sizeof got);
    cr_assert_str_eq(got, want, "next(\"%s\", %s)", expr, from);
}

static void expect_prev(const char *expr, const char *from, const char *want)
{
    example_cron c = parse(expr);
    char got[32] = "none";
    int64_t t = example_cron_prev(&c, ts(from));
    if (t != -1) /* -1 is never a whole minute: it means none */
        example_time_format(t, got, sizeof got);
    cr_assert_str_eq(got, want, "prev(\"%s\", %s)", expr, from);
}

/* ---- time strings ---- */

Test(cron_time, parses_known_instants)
{
    cr_assert_eq(ts("1970-01-01T00:00:00Z"), 0);
    cr_assert_eq(ts("2026-01-01T00:00:00Z"), JAN1_2026);
    cr_assert_eq(ts("2026-01-02T00:00:00Z"), JAN1_2026 + 86400);
    cr_assert_eq(ts("2000-02-29T00:00:00Z"), 951782400);
    cr_assert_eq(ts("2024-02-29T00:00:00Z"), 1709164800);
    cr_assert_eq(ts("1969-12-31T23:59:59Z"), -1);
    cr_assert_eq(ts("2026-01-01T01:00:00+01:00"), JAN1_2026);
    cr_assert_eq(ts("2025-12-31T19:30:00-04:30"), JAN1_2026);
    cr_assert_eq(ts("2026-01-01T00:00:00.999999Z"), JAN1_2026);
    cr_assert_eq(ts("2026-01-01t00:00:00z"), JAN1_2026);
    cr_assert_eq(ts("2016-12-31T23:59:60Z"), ts("2016-12-31T23:59:59Z"));
}

Test(cron_time, rejects_malformed)
{
    const char *bad[] = {"",
                         "2026-01-01",
                         "2026-01-01T00:00:00",
                         "2026-01-01T00:00:00+0100",
                         "2026-13-01T00:00:00Z",
                         "2026-02-29T00:00:00Z",
                         "2100-02-29T00:00:00Z",
                         "2026-04-31T00:00:00Z",
                         "2026-01-01T24:00:00Z",
                         "2026-01-01T00:60:00Z",
                         "2026-01-01T00:00:00.Z",
                         "2026-01-01T00:00:00Zjunk",
                         "2026/01/01T00:00:00Z",
                         "x026-01-01T00:00:00Z"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t t = 42;
        cr_assert_eq(example_time_parse(bad[i], &t), -1, "\"%s\" parsed", bad[i]);
        cr_assert_eq(t, 42, "output changed on error");
    }
    int64_t t = 42;
    cr_assert_eq(example_time_parse(NULL, &t), -1);
}

Test(cron_time, formats_and_round_trips)
{
    char buf[32];
    example_time_format(JAN1_2026 + 86400, buf, sizeof buf);
    cr_assert_str_eq(buf, "2026-01-02T00:00:00Z");
    example_time_format(1709164800 + 3723, buf, sizeof buf);
    cr_assert_str_eq(buf, "2024-02-29T01:02:03Z");
    example_time_format(-1, buf, sizeof buf);
    cr_assert_str_eq(buf, "1969-12-31T23:59:59Z");
    for (int64_t t = 0; t < (int64_t)4000000000; t += 86400 * 37 + 3607) {
        example_time_format(t, buf, sizeof buf);
        cr_assert_eq(ts(buf), t, "%s", buf);
    }
    example_time_format(JAN1_2026, buf, 5);
    cr_assert_str_eq(buf, "2026", "truncated, terminated");
}

/* ---- parsing ---- */

Test(cron_parse, fields_lists_ranges_steps)
{
    example_cron c = parse("*/15 0,12 1-10/3 */5 1-5");
    cr_assert_eq(c.minute, (1ull << 0) | (1ull << 15) | (1ull << 30) | (1ull << 45));
    cr_assert_eq(c.hour, (1u << 0) | (1u << 12));
    cr_assert_eq(c.dom, (1u << 1) | (1u << 4) | (1u << 7) | (1u << 10));
    cr_assert_eq(c.month, (1u << 1) | (1u << 6) | (1u << 11));
    cr_assert_eq(c.dow, 0x3eu);
    cr_assert_not(c.dom_star);
    cr_assert_not(c.dow_star);

    c = parse("5/20 1,2,3-5 * * *");
    cr_assert_eq(c.minute, (1ull << 5) | (1ull << 25) | (1ull << 45), "a/n is a-max/n");
    cr_assert_eq(c.hour, 0x3eu);
    cr_assert_eq(c.dom, 0xfffffffeu);
    cr_assert_eq(c.month, 0x1ffeu);
    cr_assert_eq(c.dow, 0x7fu);
    cr_assert(c.dom_star);
    cr_assert(c.dow_star);

    c = parse("* * * * *");
    cr_assert_eq(c.minute, (1ull << 60) - 1);
    cr_assert_eq(c.hour, (1u << 24) - 1);
}

Test(cron_parse, sunday_is_0_and_7)
{
    cr_assert_eq(parse("0 0 * * 7").dow, 1u);
    cr_assert_eq(parse("0 0 * * 0").dow, 1u);
    cr_assert_eq(parse("0 0 * * 5-7").dow, (1u << 5) | (1u << 6) | 1u);
    cr_assert_eq(parse("0 0 * * */2").dow, (1u << 0) | (1u << 2) | (1u << 4) | (1u << 6));
}

Test(cron_parse, names_any_case)
{
    cr_assert_eq(parse("0 0 1 JAN-MAR *").month, 0xeu);
    cr_assert_eq(parse("0 0 1 dec *").month, 1u << 12);
    cr_assert_eq(parse("0 0 * * mon-FRI").dow, 0x3eu);
    cr_assert_eq(parse("0 0 * * sun,Sat").dow, (1u << 0) | (1u << 6));
    parse_fails("0 0 * jan-xyz *", "month: not a number or name");
    parse_fails("0 0 * * monday", "day-of-week: not a number or name");
    parse_fails("jan 0 * * *", "minute: not a number");
}

Test(cron_parse, star_flags_follow_robfig)
{
    cr_assert(parse("0 0 * * 1").dom_star);
    cr_assert(parse("0 0 ? * 1").dom_star);
    cr_assert(parse("0 0 */1 * 1").dom_star);
    cr_assert_not(parse("0 0 */2 * 1").dom_star, "a step restricts (unlike Vixie cron)");
    cr_assert_not(parse("0 0 1-31 * 1").dom_star);
    cr_assert(parse("0 0 1 * *").dow_star);
    cr_assert(parse("0 0 1 * *,1").dow_star);
}

Test(cron_parse, descriptors)
{
    example_cron a = parse("@hourly"), b = parse("0 * * * *");
    cr_assert(!memcmp(&a, &b, sizeof a));
    a = parse("@daily"), b = parse("0 0 * * *");
    cr_assert(!memcmp(&a, &b, sizeof a));
    a = parse("  @midnight  ");
    cr_assert(!memcmp(&a, &b, sizeof a));
    a = parse("@weekly"), b = parse("0 0 * * 0");
    cr_assert(!memcmp(&a, &b, sizeof a));
    a = parse("@monthly"), b = parse("0 0 1 * *");
    cr_assert(!memcmp(&a, &b, sizeof a));
    a = parse("@yearly"), b = parse("@annually");
    cr_assert(!memcmp(&a, &b, sizeof a));
    b = parse("0 0 1 1 *");
    cr_assert(!memcmp(&a, &b, sizeof a));
    parse_fails("@every 5m", "unknown descriptor");
    parse_fails("@reboot", "unknown descriptor");
    parse_fails("@hourly *", "unknown descriptor");
}

Test(cron_parse, errors_say_why)
{
    parse_fails("", "expected 5 fields");
    parse_fails("   ", "expected 5 fields");
    parse_fails("0 * * *", "found 4");
    parse_fails("0 * * * * *", "found more");
    parse_fails("60 * * * *", "minute: 60 is out of range 0-59");
    parse_fails("0 24 * * *", "hour: 24 is out of range 0-23");
    parse_fails("0 0 0 * *", "day-of-month: 0 is out of range 1-31");
    parse_fails("0 0 32 * *", "day-of-month: 32 is out of range 1-31");
    parse_fails("0 0 * 13 *", "month: 13 is out of range 1-12");
    parse_fails("0 0 * 0 *", "month: 0 is out of range 1-12");
    parse_fails("0 0 * * 8", "day-of-week: 8 is out of range 0-7");
    parse_fails("99999999999999999999 * * * *", "out of range");
    parse_fails("5-1 * * * *", "goes backwards");
    parse_fails("*/0 * * * *", "step 0 is out of range");
    parse_fails("*/60 * * * *", "step 60 is out of range");
    parse_fails("*/ * * * *", "missing step");
    parse_fails("*/x * * * *", "not a step");
    parse_fails("1,,2 * * * *", "empty list element");
    parse_fails("1, * * * *", "empty list element");
    parse_fails("-5 * * * *", "empty value");
    parse_fails("1- * * * *", "empty value");
    parse_fails("1.5 * * * *", "not a number");
    parse_fails("** * * * *", "not a number");
    parse_fails("TZ=Europe/Paris 0 * * * *", "time zones are not supported");
    parse_fails("CRON_TZ=UTC 0 * * * *", "time zones are not supported");
    example_cron c;
    cr_assert_eq(example_cron_parse(NULL, &c, NULL, 0), -1, "NULL errbuf is fine");
    cr_assert_eq(example_cron_parse("bad", &c, NULL, 0), -1);
}

Test(cron_parse, schedules_that_never_fire)
{
    parse_fails("0 0 30 2 *", "never fires");
    parse_fails("0 0 31 2,4,6,9,11 *", "never fires");
    parse_fails("0 0 30-31 feb *", "never fires");
    parse("0 0 29 2 *");                        /* leap years */
    parse("0 0 31 2,3 *");                      /* March */
    parse("0 0 30 2 1");                        /* both restricted: every Monday of February */
    parse_fails("0 0 31 4 *,1", "never fires"); /* `*,1` leaves day-of-week unrestricted */
    cr_assert_eq(example_cron_next(&(example_cron){0}, JAN1_2026), -1, "a zero schedule");
}

/* ---- next ---- */

Test(cron_next, hourly_and_half_hourly)
{
    expect_next("0 * * * *", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z");
    expect_next("0 * * * *", "2026-01-01T00:30:00Z", "2026-01-01T01:00:00Z");
    expect_next("0 * * * *", "2026-01-01T00:59:59Z", "2026-01-01T01:00:00Z");
    expect_next("0 * * * *", "2026-01-01T23:00:00Z", "2026-01-02T00:00:00Z");
    expect_next("*/30 * * * *", "2026-01-01T00:00:00Z", "2026-01-01T00:30:00Z");
    expect_next("*/30 * * * *", "2026-01-01T00:30:00Z", "2026-01-01T01:00:00Z");
    expect_next("* * * * *", "2026-01-01T00:00:30Z", "2026-01-01T00:01:00Z");
    expect_next("15,45 9-17 * * *", "2026-01-01T17:45:00Z", "2026-01-02T09:15:00Z");
}

Test(cron_next, year_and_month_ends)
{
    expect_next("0 0 1 1 *", "2026-12-31T23:59:00Z", "2027-01-01T00:00:00Z");
    expect_next("59 23 31 12 *", "2026-12-31T23:59:00Z", "2027-12-31T23:59:00Z");
    expect_next("0 0 31 * *", "2026-01-31T00:00:00Z", "2026-03-31T00:00:00Z");
    expect_next("0 0 31 * *", "2026-04-01T00:00:00Z", "2026-05-31T00:00:00Z");
    expect_next("0 0 30 * *", "2026-01-30T00:00:00Z", "2026-03-30T00:00:00Z");
    expect_next("0 12 28-31 2 *", "2026-02-28T12:00:00Z", "2027-02-28T12:00:00Z");
}

Test(cron_next, leap_years)
{
    expect_next("0 0 29 2 *", "2026-01-01T00:00:00Z", "2028-02-29T00:00:00Z");
    expect_next("0 0 29 2 *", "2024-02-29T00:00:00Z", "2028-02-29T00:00:00Z");
    expect_next("0 0 29 2 *", "1999-01-01T00:00:00Z", "2000-02-29T00:00:00Z");
    /* 2100 is not a leap year: eight years from 2096 to 2104. */
    expect_next("0 0 29 2 *", "2096-03-01T00:00:00Z", "2104-02-29T00:00:00Z");
    expect_next("0 0 * 3 *", "2024-02-28T12:00:00Z", "2024-03-01T00:00:00Z");
    expect_next("0 0 * * *", "2024-02-28T12:00:00Z", "2024-02-29T00:00:00Z");
    expect_next("0 0 * * *", "2100-02-28T12:00:00Z", "2100-03-01T00:00:00Z");
}

Test(cron_next, day_of_month_or_day_of_week)
{
    /* Both restricted: either matches. 2026-01-02 is a Friday. */
    expect_next("0 0 13 * 5", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z");
    expect_next("0 0 13 * 5", "2026-01-09T00:00:00Z", "2026-01-13T00:00:00Z");
    expect_next("0 0 1 * mon", "2026-01-01T00:00:00Z", "2026-01-05T00:00:00Z");
    expect_next("0 0 1 * mon", "2026-01-26T00:00:00Z", "2026-02-01T00:00:00Z");
    /* A step restricts: odd days or Mondays (Vixie cron would say odd Mondays). */
    expect_next("0 0 */2 * 1", "2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z");
    /* Only one restricted: that one decides. */
    expect_next("0 0 * * 1", "2026-01-01T00:00:00Z", "2026-01-05T00:00:00Z");
    expect_next("0 0 1 * *", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z");
    expect_next("0 0 ? * 0", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z");
    /* "Friday the 13th" is not expressible: it means the 13th or any Friday. */
    expect_next("0 0 13 2 5", "2026-01-01T00:00:00Z", "2026-02-06T00:00:00Z");
    /* Weekdays at 9:30 over a weekend: Saturday 2026-01-03 -> Monday. */
    expect_next("30 9 * * 1-5", "2026-01-02T09:30:00Z", "2026-01-05T09:30:00Z");
    /* Sunday as 7. */
    expect_next("0 0 * * 7", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z");
}

Test(cron_next, descriptors_and_matches)
{
    expect_next("@weekly", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z");
    expect_next("@monthly", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z");
    expect_next("@yearly", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z");
    example_cron c = parse("0 * * * *");
    cr_assert(example_cron_matches(&c, JAN1_2026));
    cr_assert_not(example_cron_matches(&c, JAN1_2026 + 1), "not on a whole minute");
    cr_assert_not(example_cron_matches(&c, JAN1_2026 + 60));
    cr_assert(example_cron_matches(&c, JAN1_2026 - 3600));
    c = parse("0 0 * * 4");
    cr_assert(example_cron_matches(&c, JAN1_2026), "2026-01-01 is a Thursday");
    cr_assert_not(example_cron_matches(NULL, JAN1_2026));
}

/* ---- prev ---- */

Test(cron_prev, at_or_before)
{
    expect_prev("0 * * * *", "2026-01-02T00:00:00Z", "2026-01-02T00:00:00Z");
    expect_prev("0 * * * *", "2026-01-01T23:59:59Z", "2026-01-01T23:00:00Z");
    expect_prev("0 * * * *", "2026-01-01T00:00:59Z", "2026-01-01T00:00:00Z");
    expect_prev("*/30 * * * *", "2026-01-01T00:29:00Z", "2026-01-01T00:00:00Z");
    expect_prev("0 0 1 1 *", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z");
    expect_prev("0 0 1 1 *", "2025-12-31T23:59:59Z", "2025-01-01T00:00:00Z");
    expect_prev("0 0 31 * *", "2026-03-15T00:00:00Z", "2026-01-31T00:00:00Z");
    expect_prev("0 0 31 * *", "2026-07-30T00:00:00Z", "2026-05-31T00:00:00Z");
    expect_prev("0 0 29 2 *", "2026-06-01T00:00:00Z", "2024-02-29T00:00:00Z");
    expect_prev("0 0 29 2 *", "2104-02-28T00:00:00Z", "2096-02-29T00:00:00Z");
    expect_prev("0 0 13 * 5", "2026-01-12T00:00:00Z", "2026-01-09T00:00:00Z");
    expect_prev("30 9 * * 1-5", "2026-01-05T09:29:00Z", "2026-01-02T09:30:00Z");
    expect_prev("0 0 1 * *", "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z");
    expect_prev("0 0 2 * *", "1970-01-01T00:00:00Z", "1969-12-02T00:00:00Z");
}

Test(cron_prev, missed_runs_pick_the_latest)
{
    /* What the controller does after a day down: the one run to make. */
    example_cron c = parse("0 * * * *");
    int64_t last = JAN1_2026, now = JAN1_2026 + 86400 + 1234;
    int64_t p = example_cron_prev(&c, now);
    cr_assert_eq(p, JAN1_2026 + 86400);
    cr_assert_gt(p, last);
    cr_assert_eq(example_cron_next(&c, now), JAN1_2026 + 86400 + 3600);
}

Test(cron_bounds, out_of_range_times)
{
    example_cron c = parse("* * * * *");
    cr_assert_eq(example_cron_next(&c, ts("9999-12-31T23:59:00Z")), -1);
    cr_assert_eq(example_cron_next(&c, INT64_MAX), -1);
    cr_assert_eq(example_cron_prev(&c, INT64_MIN), -1);
    cr_assert_eq(example_cron_prev(&c, ts("0001-01-01T00:00:30Z")), ts("0001-01-01T00:00:00Z"));
    example_cron jan2 = parse("0 0 2 1 *");
    cr_assert_eq(example_cron_prev(&jan2, ts("0001-01-01T00:00:30Z")), -1, "before year 1");
    cr_assert_eq(example_cron_next(NULL, 0), -1);
    cr_assert_eq(example_cron_prev(NULL, 0), -1);
}

/* ---- against a brute-force scan ---- */

static int64_t scan_next(const example_cron *c, int64_t t)
{
    for (int64_t m = (t / 60 + 1) * 60;; m += 60)
        if (example_cron_matches(c, m))
            return m;
}

static int64_t scan_prev(const example_cron *c, int64_t t)
{
    for (int64_t m = t / 60 * 60;; m -= 60)
        if (example_cron_matches(c, m))
            return m;
}

Test(cron_scan, next_and_prev_agree_with_a_minute_scan)
{
    const char *exprs[] = {"0 * * * *",   "*/30 * * * *", "*/7 */5 * * *",  "15,45 9-17 * * 1-5",
                           "0 0 13 * 5",  "0 0 */2 * 1",  "0 12 28-31 * *", "5/20 1 1,15 * *",
                           "0 0 * * sun", "59 23 * 2 *",  "0 6 1-7 * mon",  "@daily"};
    /* The matcher (checked above on known days) is the oracle: every
     * minute of the range between prev(t) and next(t) is scanned. */
    for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
        example_cron c = parse(exprs[i]);
        for (int64_t t = ts("2028-01-25T00:00:00Z"); t < ts("2028-03-05T00:00:00Z");
             t += 7 * 3600 + 17 * 60 + 11) {
            int64_t n = example_cron_next(&c, t), p = example_cron_prev(&c, t);
            cr_assert_eq(n, scan_next(&c, t), "next(\"%s\", %lld)", exprs[i], (long long)t);
            cr_assert_eq(p, scan_prev(&c, t), "prev(\"%s\", %lld)", exprs[i], (long long)t);
            cr_assert_gt(n, t);
            cr_assert_leq(p, t);
            cr_assert_eq(example_cron_prev(&c, n), n);
            cr_assert_eq(example_cron_next(&c, p), n, "nothing matches in (prev, next)");
        }
    }
}
