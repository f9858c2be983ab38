/*
 * widget_webhook.c - the Widget defaulter and validator (widget_webhook.h).
 * Both run on the webhook server's threads and keep no state.
 */
#include "widget_webhook.h"

#include <string.h>

#define LABEL_DEFAULTED "widgets.example.com/defaulted"
#define LABEL_PROTECTED "widgets.example.com/protected"

static json_t *spec_of(json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec))
        json_object_set_new(obj, "spec", spec = json_object());
    return spec;
}

static int default_widget(const ctrl_admission_request *req, json_t *obj,
                          ctrl_admission_response *resp, void *user)
{
    (void)req, (void)resp, (void)user;
    json_t *spec = spec_of(obj);
    if (!json_object_get(spec, "color"))
        json_object_set_new(spec, "color", json_string("blue"));
    if (!json_object_get(spec, "size"))
        json_object_set_new(spec, "size", json_integer(1));
    json_t *meta = json_object_get(obj, "metadata");
    json_t *labels = json_object_get(meta, "labels");
    if (!json_is_object(labels))
        json_object_set_new(meta, "labels", labels = json_object());
    json_object_set_new(labels, LABEL_DEFAULTED, json_string("true"));
    return 0;
}

static const char *color_of(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "spec"), "color"));
}

static int validate_widget(const ctrl_admission_request *req, ctrl_admission_response *resp,
                           void *user)
{
    (void)user;
    if (!strcmp(req->operation, "DELETE")) {
        const json_t *labels =
            json_object_get(json_object_get(req->old_object, "metadata"), "labels");
        if (json_object_get(labels, LABEL_PROTECTED))
            ctrl_admission_deny(resp, "widget %s is protected: remove the %s label first",
                                req->name, LABEL_PROTECTED);
        return 0;
    }
    const char *color = color_of(req->object);
    if (!color || (strcmp(color, "blue") && strcmp(color, "green"))) {
        ctrl_admission_deny(resp, "spec.color must be blue or green, not %s",
                            color ? color : "empty");
        return 0;
    }
    json_t *size = json_object_get(json_object_get(req->object, "spec"), "size");
    json_int_t n = json_integer_value(size);
    if (!json_is_integer(size) || n < 1 || n > EXAMPLE_WIDGET_MAX_SIZE) {
        ctrl_admission_deny_status(resp, 422, "Invalid", "spec.size must be 1 to %d",
                                   EXAMPLE_WIDGET_MAX_SIZE);
        return 0;
    }
    const char *was = color_of(req->old_object);
    if (!strcmp(req->operation, "UPDATE") && was && strcmp(was, color)) {
        ctrl_admission_deny(resp, "spec.color is immutable (was %s)", was);
        return 0;
    }
    if (n > 5)
        ctrl_admission_warn(resp, "widget %s is large (size %lld)", req->name, (long long)n);
    return 0;
}

int example_widget_webhook_setup(ctrl_webhook_server *s)
{
    int rc =
        ctrl_webhook_server_register_defaulter(s, "example.com/v1", "Widget", default_widget, NULL);
    if (rc == 0)
        rc = ctrl_webhook_server_register_validator(s, "example.com/v1", "Widget", validate_widget,
                                                    NULL);
    return rc;
}
