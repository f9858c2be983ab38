/*
 * test_conditions.c - status conditions as meta.SetStatusCondition and its
 * companions handle them; no server.
 */
#include <criterion/criterion.h>

#include "ctrl/clock.h"
#include "ctrl/conditions.h"

#define T0 ((int64_t)1767225600 * CTRL_SECOND) /* 2026-01-01T00:00:00Z */

static const char *field(const json_t *c, const char *k)
{
    return json_string_value(json_object_get(c, k));
}

Test(conditions, add_then_transition_only_on_status_change)
{
    json_t *conds = json_array();
    cr_assert(ctrl_condition_set(conds, &(ctrl_condition){.type = "Available", .status = "False",
                                                          .reason = "Starting", .message = "wait",
                                                          .observed_generation = 1},
                                 T0));
    json_t *c = ctrl_condition_find(conds, "Available");
    cr_assert_not_null(c);
    cr_assert_str_eq(field(c, "lastTransitionTime"), "2026-01-01T00:00:00Z");
    cr_assert_eq(json_integer_value(json_object_get(c, "observedGeneration")), 1);
    cr_assert(ctrl_condition_is_false(conds, "Available"));

    /* The same again: nothing changes. */
    cr_assert_not(ctrl_condition_set(conds, &(ctrl_condition){.type = "Available",
                                                              .status = "False",
                                                              .reason = "Starting",
                                                              .message = "wait",
                                                              .observed_generation = 1},
                                     T0 + 60 * CTRL_SECOND));
    /* A new message and generation, same status: the time stays. */
    cr_assert(ctrl_condition_set(conds, &(ctrl_condition){.type = "Available", .status = "False",
                                                          .reason = "Starting", .message = "2/3",
                                                          .observed_generation = 2},
                                 T0 + 60 * CTRL_SECOND));
    cr_assert_str_eq(field(c, "lastTransitionTime"), "2026-01-01T00:00:00Z");
    cr_assert_str_eq(field(c, "message"), "2/3");
    cr_assert_eq(json_integer_value(json_object_get(c, "observedGeneration")), 2);
    /* The status flips: the time moves. */
    cr_assert(ctrl_condition_set(conds, &(ctrl_condition){.type = "Available", .status = "True",
                                                          .reason = "Ready"},
                                 T0 + 3600 * CTRL_SECOND));
    cr_assert_str_eq(field(c, "lastTransitionTime"), "2026-01-01T01:00:00Z");
    cr_assert_str_eq(field(c, "reason"), "Ready");
    cr_assert_str_eq(field(c, "message"), "");
    cr_assert(ctrl_condition_is_true(conds, "Available"));
    cr_assert_not(ctrl_condition_is_false(conds, "Available"));
    cr_assert_eq(json_array_size(conds), 1);
    json_decref(conds);
}

Test(conditions, given_time_unknown_default_remove)
{
    json_t *conds = json_array();
    cr_assert(ctrl_condition_set(conds, &(ctrl_condition){.type = "Degraded",
                                                          .last_transition_time =
                                                              "2025-05-05T05:05:05Z"},
                                 T0));
    cr_assert_str_eq(field(ctrl_condition_find(conds, "Degraded"), "lastTransitionTime"),
                     "2025-05-05T05:05:05Z");
    cr_assert(ctrl_condition_is_present_and_equal(conds, "Degraded", "Unknown"));
    cr_assert_null(json_object_get(ctrl_condition_find(conds, "Degraded"), "observedGeneration"));
    cr_assert(ctrl_condition_set(conds, &(ctrl_condition){.type = "Ready", .status = "True"}, T0));
    cr_assert_eq(json_array_size(conds), 2);
    cr_assert(ctrl_condition_remove(conds, "Degraded"));
    cr_assert_not(ctrl_condition_remove(conds, "Degraded"));
    cr_assert_null(ctrl_condition_find(conds, "Degraded"));
    cr_assert(ctrl_condition_is_true(conds, "Ready"));
    cr_assert_not(ctrl_condition_is_true(conds, "Missing"));
    cr_assert_not(ctrl_condition_set(conds, &(ctrl_condition){.status = "True"}, T0), "no type");
    cr_assert_not(ctrl_condition_set(NULL, &(ctrl_condition){.type = "X"}, T0));
    json_decref(conds);
}

Test(conditions, on_objects)
{
    json_t *o = json_pack("{s:{s:s}}", "metadata", "name", "x");
    json_t *conds = ctrl_obj_conditions(o);
    cr_assert(json_is_array(conds));
    cr_assert_eq(json_object_get(json_object_get(o, "status"), "conditions"), conds);
    cr_assert_eq(ctrl_obj_conditions(o), conds, "found again, not replaced");
    json_t *bad = json_pack("{s:{s:s}}", "status", "conditions", "oops");
    cr_assert_null(ctrl_obj_conditions(bad));
    json_decref(bad);
    json_decref(o);
}
