/*
 * test_cron.c - CronJob schedules (cluster/cron.c): the five-field syntax
 * and descriptors as robfig/cron's standard parser takes them, errors for
 * what it refuses, and the next and previous firings in UTC.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "cron.h"

#define JAN1_2026 INT64_C(1767225600) /* a Thursday, 00:00:00Z */
#define MIN 60
#define HOUR 3600
#define DAY 86400

static kc_cron parse(const char *expr)
{
    kc_cron c;
    char err[160] = "";
    cr_assert_eq(kc__cron_parse(expr, &c, err, sizeof err), 0, "%s: %s", expr, err);
    return c;
}

static void refused(const char *expr, const char *why)
{
    kc_cron c = {.minute = 42};
    char err[160] = "";
    cr_assert_eq(kc__cron_parse(expr, &c, err, sizeof err), -1, "%s parsed", expr);
    cr_assert(strstr(err, why), "%s: \"%s\" lacks \"%s\"", expr, err, why);
    cr_assert_eq(c.minute, 42, "output untouched on error");
}

Test(cron, every_minute_and_steps)
{
    kc_cron c = parse("* * * * *");
    cr_assert_eq(kc__cron_next(&c, JAN1_2026), JAN1_2026 + MIN);
    cr_assert_eq(kc__cron_next(&c, JAN1_2026 + 59), JAN1_2026 + MIN);
    cr_assert_eq(kc__cron_prev(&c, JAN1_2026 + 59), JAN1_2026);
    c = parse("*/15 * * * *");
    cr_assert_eq(kc__cron_next(&c, JAN1_2026 + 7 * MIN), JAN1_2026 + 15 * MIN);
    cr_assert_eq(kc__cron_next(&c, JAN1_2026 + 45 * MIN), JAN1_2026 + HOUR);
    c = parse("5/20 * * * *"); /* 5, 25, 45 */
    cr_assert_eq(kc__cron_next(&c, JAN1_2026 + 26 * MIN), JAN1_2026 + 45 * MIN);
    cr_assert_eq(kc__cron_next(&c, JAN1_2026 + 45 * MIN), JAN1_2026 + HOUR + 5 * MIN);
    c = parse("10-12,40 3 * * *");
    cr_assert_eq(kc__cron_next(&c, JAN1_2026), JAN1_2026 + 3 * HOUR + 10 * MIN);
    cr_assert_eq(kc__cron_next(&c, JAN1_2026 + 3 * HOUR + 12 * MIN),
                 JAN1_2026 + 3 * HOUR + 40 * MIN);
    cr_assert_eq(kc__cron_next(&c, JAN1_2026 + 3 * HOUR + 40 * MIN),
                 JAN1_2026 + DAY + 3 * HOUR + 10 * MIN);
}

Test(cron, descriptors)
{
    kc_cron c = parse("@hourly");
    cr_assert_eq(kc__cron_next(&c, JAN1_2026), JAN1_2026 + HOUR, "strictly after");
    c = parse("@daily");
    cr_assert_eq(kc__cron_next(&c, JAN1_2026 + 1), JAN1_2026 + DAY);
    c = parse("@midnight");
    cr_assert_eq(kc__cron_next(&c, JAN1_2026 + 1), JAN1_2026 + DAY);
    c = parse("@weekly"); /* Sundays: 2026-01-04 */
    cr_assert_eq(kc__cron_next(&c, JAN1_2026), INT64_C(1767484800));
    c = parse("@monthly");
    cr_assert_eq(kc__cron_next(&c, JAN1_2026), INT64_C(1769904000));
    c = parse("@yearly");
    cr_assert_eq(kc__cron_next(&c, JAN1_2026), INT64_C(1798761600));
    c = parse("@annually");
    cr_assert_eq(kc__cron_prev(&c, JAN1_2026 + 5 * DAY), JAN1_2026);
}

Test(cron, names_and_weekdays)
{
    kc_cron c = parse("0 9 * * MON-FRI");
    cr_assert_eq(kc__cron_next(&c, JAN1_2026 + 10 * HOUR), INT64_C(1767344400), "Friday 09:00");
    cr_assert_eq(kc__cron_next(&c, INT64_C(1767344400)), INT64_C(1767571200) + 9 * HOUR,
                 "then Monday");
    c = parse("0 0 * jan,Jul sat");
    cr_assert_eq(kc__cron_next(&c, JAN1_2026), INT64_C(1767398400), "Saturday Jan 3");
}

Test(cron, day_of_month_or_day_of_week)
{
    /* Both restricted: either matches (the 1st, or any Monday). */
    kc_cron c = parse("0 0 1 * MON");
    cr_assert_eq(kc__cron_next(&c, JAN1_2026), INT64_C(1767571200), "Monday Jan 5");
    cr_assert(kc__cron_matches(&c, INT64_C(1769904000)), "Feb 1 (a Sunday)");
    /* One a star: both must match. */
    c = parse("0 0 * * MON");
    cr_assert_not(kc__cron_matches(&c, INT64_C(1769904000)));
    c = parse("0 0 1 * *");
    cr_assert(kc__cron_matches(&c, INT64_C(1769904000)));
    cr_assert_not(kc__cron_matches(&c, INT64_C(1767571200)));
    /* A star with a step restricts the field (robfig/cron). */
    c = parse("0 0 */2 * MON");
    cr_assert(kc__cron_matches(&c, JAN1_2026 + 2 * DAY), "the 3rd: odd day");
    cr_assert(kc__cron_matches(&c, INT64_C(1767571200)), "Monday the 5th");
    cr_assert_not(kc__cron_matches(&c, JAN1_2026 + DAY), "Friday the 2nd");
    /* "?" is a star. */
    c = parse("0 0 ? * MON");
    cr_assert_not(kc__cron_matches(&c, INT64_C(1769904000)));
}

Test(cron, rare_and_previous)
{
    kc_cron c = parse("0 0 29 2 *");
    cr_assert_eq(kc__cron_next(&c, JAN1_2026), INT64_C(1835395200), "2028-02-29");
    cr_assert_eq(kc__cron_prev(&c, JAN1_2026), INT64_C(1835395200) - (365 * 3 + 366) * DAY,
                 "2024-02-29");
    c = parse("30 * * * *");
    cr_assert_eq(kc__cron_prev(&c, JAN1_2026 + 10 * HOUR + 29 * MIN + 59),
                 JAN1_2026 + 9 * HOUR + 30 * MIN);
    cr_assert_eq(kc__cron_prev(&c, JAN1_2026 + 10 * HOUR + 30 * MIN),
                 JAN1_2026 + 10 * HOUR + 30 * MIN, "at or before");
    cr_assert(kc__cron_matches(&c, JAN1_2026 + 30 * MIN));
    cr_assert_not(kc__cron_matches(&c, JAN1_2026 + 30 * MIN + 1), "only whole minutes");
}

Test(cron, refused)
{
    refused("60 * * * *", "out of range 0-59");
    refused("* 24 * * *", "hour");
    refused("* * 0 * *", "day-of-month");
    refused("* * * 13 *", "month");
    refused("0 0 * * 7", "out of range 0-6");
    refused("* * * *", "expected exactly 5 fields");
    refused("* * * * * *", "expected exactly 5 fields");
    refused("*/0 * * * *", "bad step");
    refused("5-3 * * * *", "beginning of range after end");
    refused("a * * * *", "cannot parse");
    refused("1,,2 * * * *", "empty list element");
    refused("0 0 30 2 *", "never fires");
    refused("@every 5m", "unrecognized descriptor");
    refused("", "expected exactly 5 fields");
}
