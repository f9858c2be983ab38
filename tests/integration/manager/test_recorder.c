/*
 * test_recorder.c - Events written by the manager's recorder: fields,
 * repeats counted on one Event, distinct events kept apart.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ctrl/manager.h"
#include "fakeapi/fakeapi.h"

static fakeapi_server *api;
static ctrl_manager *mgr;

static void quiet(const char *line, void *user)
{
    (void)line, (void)user;
}

static void setup(void)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){0}, &api), 0);
    ctrl_config *cfg;
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(api), &cfg, NULL), 0);
    ctrl_manager_options o = {.metrics_addr = "0", .log_sink = quiet};
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    ctrl_config_free(cfg);
    const char *cm = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"web\","
                     "\"namespace\":\"default\"},\"data\":{\"a\":\"b\"}}";
    cr_assert_eq(fakeapi_apply(api, cm, strlen(cm), NULL), 0);
}

static void teardown(void)
{
    ctrl_manager_free(mgr);
    fakeapi_stop(api);
}

TestSuite(recorder, .init = setup, .fini = teardown, .timeout = 60);

static json_t *get_obj(const char *kind, const char *ns, const char *name)
{
    json_t *obj = NULL;
    cr_assert_eq(fakeapi_get(api, "v1", kind, ns, name, &obj, NULL), 0);
    return obj;
}

static json_t *events(const char *ns)
{
    json_t *arr = NULL;
    cr_assert_eq(fakeapi_list(api, "v1", "Event", ns, NULL, &arr, NULL), 0);
    return arr;
}

static const char *s(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_string_value(v);
}

Test(recorder, writes_an_event)
{
    json_t *cm = get_obj("ConfigMap", "default", "web");
    ctrl_recorder *r = ctrl_manager_recorder(mgr, "my-controller");
    cr_assert(r);
    cr_assert_eq(ctrl_manager_recorder(mgr, "my-controller"), r, "one per component");
    ctrl_recorder_event(r, cm, "Normal", "Synced", "synced %d keys", 1);
    json_t *evs = events("default");
    cr_assert_eq(json_array_size(evs), 1);
    json_t *ev = json_array_get(evs, 0);
    cr_assert_str_eq(s(ev, "reason", NULL), "Synced");
    cr_assert_str_eq(s(ev, "message", NULL), "synced 1 keys");
    cr_assert_str_eq(s(ev, "type", NULL), "Normal");
    cr_assert_str_eq(s(ev, "source", "component"), "my-controller");
    cr_assert_str_eq(s(ev, "involvedObject", "kind"), "ConfigMap");
    cr_assert_str_eq(s(ev, "involvedObject", "name"), "web");
    cr_assert_str_eq(s(ev, "involvedObject", "namespace"), "default");
    cr_assert_str_eq(s(ev, "involvedObject", "uid"), s(cm, "metadata", "uid"));
    cr_assert_str_eq(s(ev, "involvedObject", "apiVersion"), "v1");
    cr_assert_eq(json_integer_value(json_object_get(ev, "count")), 1);
    cr_assert(s(ev, "firstTimestamp", NULL));
    cr_assert_str_eq(s(ev, "firstTimestamp", NULL), s(ev, "lastTimestamp", NULL));
    cr_assert_eq(strncmp(s(ev, "metadata", "name"), "web.", 4), 0, "%s", s(ev, "metadata", "name"));
    json_decref(evs);
    json_decref(cm);
}

Test(recorder, repeats_patch_the_count)
{
    json_t *cm = get_obj("ConfigMap", "default", "web");
    ctrl_recorder *r = ctrl_manager_recorder(mgr, "rc");
    for (int i = 0; i < 3; i++)
        ctrl_recorder_event(r, cm, "Warning", "Failed", "cannot reach %s", "db");
    ctrl_recorder_event(r, cm, "Warning", "Failed", "cannot reach %s", "cache");
    ctrl_recorder_event(r, cm, "Normal", "Failed", "cannot reach %s", "db");
    json_t *evs = events("default");
    cr_assert_eq(json_array_size(evs), 3, "same (object, type, reason, message) counted once");
    int seen = 0;
    size_t i;
    json_t *ev;
    json_array_foreach(evs, i, ev)
    {
        long long count = json_integer_value(json_object_get(ev, "count"));
        if (strcmp(s(ev, "type", NULL), "Warning") == 0 &&
            strcmp(s(ev, "message", NULL), "cannot reach db") == 0) {
            cr_assert_eq(count, 3);
            seen++;
        } else {
            cr_assert_eq(count, 1);
        }
    }
    cr_assert_eq(seen, 1);
    json_decref(evs);
    json_decref(cm);
}

Test(recorder, recreated_when_the_event_is_gone)
{
    json_t *cm = get_obj("ConfigMap", "default", "web");
    ctrl_recorder *r = ctrl_manager_recorder(mgr, "rc");
    ctrl_recorder_event(r, cm, "Normal", "Again", "x");
    json_t *evs = events("default");
    cr_assert_eq(json_array_size(evs), 1);
    const char *name = s(json_array_get(evs, 0), "metadata", "name");
    cr_assert_eq(fakeapi_delete(api, "v1", "Event", "default", name, NULL), 0);
    json_decref(evs);
    ctrl_recorder_event(r, cm, "Normal", "Again", "x");
    evs = events("default");
    cr_assert_eq(json_array_size(evs), 1, "a new event");
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(evs, 0), "count")), 1);
    json_decref(evs);
    json_decref(cm);
}

Test(recorder, cluster_scoped_objects_go_to_default)
{
    json_t *ns = get_obj("Namespace", NULL, "default");
    ctrl_recorder_event(ctrl_manager_recorder(mgr, "rc"), ns, "Normal", "Seen", "namespace");
    json_t *evs = events("default");
    cr_assert_eq(json_array_size(evs), 1);
    cr_assert_str_eq(s(json_array_get(evs, 0), "involvedObject", "kind"), "Namespace");
    cr_assert_null(s(json_array_get(evs, 0), "involvedObject", "namespace"));
    json_decref(evs);
    json_decref(ns);
}
