/*
 * test_object.c - ctrl/object.h: metadata fields, deletion, controller owner.
 */
#include <criterion/criterion.h>

#include "ctrl/object.h"

static json_t *obj(const char *text)
{
    json_t *o = json_loads(text, 0, NULL);
    cr_assert_not_null(o, "bad test JSON: %s", text);
    return o;
}

Test(object, meta_fields_and_deletion)
{
    json_t *o =
        obj("{\"metadata\":{\"name\":\"a\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"}}");
    cr_assert_str_eq(ctrl_obj_meta(o, "name"), "a");
    cr_assert_null(ctrl_obj_meta(o, "namespace"));
    cr_assert(ctrl_obj_deleting(o));
    json_decref(o);
    o = obj("{\"metadata\":{\"name\":\"b\"}}");
    cr_assert_not(ctrl_obj_deleting(o));
    cr_assert_null(ctrl_obj_meta(NULL, "name"));
    json_decref(o);
}

Test(object, controller_owner_by_group_and_kind)
{
    json_t *o =
        obj("{\"metadata\":{\"ownerReferences\":["
            "{\"apiVersion\":\"example.com/v1\",\"kind\":\"PodSet\",\"uid\":\"u1\"},"
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"uid\":\"u2\","
            "\"controller\":true},"
            "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"uid\":\"u3\",\"controller\":true}]}}");
    cr_assert_null(ctrl_obj_controller_uid(o, "example.com", "PodSet"), "not the controller");
    cr_assert_str_eq(ctrl_obj_controller_uid(o, "apps", "ReplicaSet"), "u2");
    cr_assert_null(ctrl_obj_controller_uid(o, "app", "ReplicaSet"), "group must match whole");
    cr_assert_null(ctrl_obj_controller_uid(o, "", "ReplicaSet"));
    cr_assert_str_eq(ctrl_obj_controller_uid(o, "", "Node"), "u3");
    json_decref(o);
}
