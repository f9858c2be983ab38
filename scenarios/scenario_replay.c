/*
 * scenario_replay.c - the steps that replay what was recorded: `request`
 * (one HTTP request as a client sent it, e.g. a write read from an audit
 * log) and `expectWrite` (the controllers under test made a given write).
 * Parsed here into scn_step (scn/scenario.h); run by runner.c.
 *
 * Called by scenario.c's parser, on the parsing thread.
 */
#include "scn_parse.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_EXPECT_WRITE_NS (60 * INT64_C(1000000000))

static const char *const methods[] = {"POST", "PUT", "PATCH", "DELETE", NULL};
static const char *const write_verbs[] = {"create", "update",           "patch",
                                          "delete", "deletecollection", NULL};

static int get_status(scn__parser *p, const json_t *body, const char *field, scn_step *st)
{
    long status = 0;
    int rc = scn__get_int(p, body, "status", field, 100, 599, &status);

    st->status = (int)status;
    return rc;
}

int scn__step_request(scn__parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const keys[] = {
        "method", "path", "contentType", "body", "status", "currentResourceVersion", NULL};
    json_t *b, *cur;
    char f[FIELD_LEN];
    int rc;

    if ((rc = scn__need_type(p, body, field, JSON_OBJECT,
                             "{method, path, contentType, body, status}")) != 0 ||
        (rc = scn__check_keys(p, body, field, keys)) != 0 ||
        (rc = scn__get_string(p, body, "method", field, true, &st->method)) != 0 ||
        (rc = scn__get_string(p, body, "path", field, true, &st->path)) != 0 ||
        (rc = scn__get_string(p, body, "contentType", field, false, &st->content_type)) != 0 ||
        (rc = get_status(p, body, field, st)) != 0)
        return rc;
    if (!scn__is_one_of(st->method, methods)) {
        scn__sub(f, sizeof f, "%s.method", field);
        return scn__fail(p, json_object_get(body, "method"), f,
                         "\"%s\" is not a write; expected POST, PUT, PATCH or DELETE", st->method);
    }
    if (st->path[0] != '/') {
        scn__sub(f, sizeof f, "%s.path", field);
        return scn__fail(p, json_object_get(body, "path"), f,
                         "expected an absolute path (/api/v1/..., /apis/GROUP/VERSION/...)");
    }
    b = json_object_get(body, "body");
    scn__sub(f, sizeof f, "%s.body", field);
    if (b && !json_is_object(b) && !json_is_array(b))
        return scn__fail(p, b, f, "expected a mapping or a list, found %s", scn__type_name(b));
    if (!b &&
        (!strcmp(st->method, "POST") || !strcmp(st->method, "PUT") || !strcmp(st->method, "PATCH")))
        return scn__fail(p, body, f, "required field is missing (a %s has a body)", st->method);
    if (b && !strcmp(st->method, "PATCH") && !st->content_type) {
        scn__sub(f, sizeof f, "%s.contentType", field);
        return scn__fail(p, body, f,
                         "required for a PATCH (application/merge-patch+json, "
                         "application/strategic-merge-patch+json, application/json-patch+json "
                         "or application/apply-patch+yaml)");
    }
    cur = json_object_get(body, "currentResourceVersion");
    scn__sub(f, sizeof f, "%s.currentResourceVersion", field);
    if (cur && !json_is_boolean(cur))
        return scn__fail(p, cur, f, "expected true or false, found %s", scn__type_name(cur));
    if (json_is_true(cur) && (strcmp(st->method, "PUT") != 0 || !json_is_object(b)))
        return scn__fail(p, cur, f, "only for a PUT with an object body");
    st->current_rv = json_is_true(cur);
    st->manifest = json_incref(b);
    return 0;
}

int scn__step_expect_write(scn__parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const keys[] = {"verb", "path", "status", "timeout", "body", NULL};
    json_t *v, *b;
    char f[FIELD_LEN];
    int rc;

    if ((rc = scn__need_type(p, body, field, JSON_OBJECT, "{verb, path, status, timeout}")) != 0 ||
        (rc = scn__check_keys(p, body, field, keys)) != 0 ||
        (rc = scn__get_string(p, body, "verb", field, true, &st->verb)) != 0 ||
        (rc = scn__get_string(p, body, "path", field, true, &st->path)) != 0 ||
        (rc = get_status(p, body, field, st)) != 0)
        return rc;
    if (!scn__is_one_of(st->verb, write_verbs)) {
        scn__sub(f, sizeof f, "%s.verb", field);
        return scn__fail(p, json_object_get(body, "verb"), f,
                         "\"%s\" is not a write; expected one of create, update, patch, delete, "
                         "deletecollection",
                         st->verb);
    }
    if (st->path[0] != '/' || strchr(st->path, '?')) {
        scn__sub(f, sizeof f, "%s.path", field);
        return scn__fail(p, json_object_get(body, "path"), f,
                         "expected an absolute path without a query (a glob: '*' matches "
                         "within one segment)");
    }
    st->duration_ns = DEFAULT_EXPECT_WRITE_NS;
    v = json_object_get(body, "timeout");
    scn__sub(f, sizeof f, "%s.timeout", field);
    if (v && (rc = scn__get_duration(p, v, f, &st->duration_ns)) != 0)
        return rc;
    b = json_object_get(body, "body");
    scn__sub(f, sizeof f, "%s.body", field);
    if (b && !json_is_object(b) && !json_is_array(b))
        return scn__fail(p, b, f, "expected a mapping or a list, found %s", scn__type_name(b));
    st->manifest = json_incref(b);
    return 0;
}

/* Does have hold want? The first field that differs goes into at. */
static bool holds_body(const json_t *want, const json_t *have, char *at, size_t len, size_t used)
{
    const char *k;
    json_t *v;
    size_t i;

    if (json_is_object(want)) {
        if (!json_is_object(have)) {
            snprintf(at + used, len - used, " (not a mapping)");
            return false;
        }
        json_object_foreach((json_t *)want, k, v)
        {
            int n = snprintf(at + used, len - used, ".%s", k);
            size_t u = n > 0 && (size_t)n < len - used ? used + (size_t)n : used;
            if (!holds_body(v, json_object_get(have, k), at, len, u))
                return false;
            at[used] = '\0';
        }
        return true;
    }
    if (json_is_array(want)) {
        if (!json_is_array(have) || json_array_size(have) != json_array_size(want)) {
            snprintf(at + used, len - used, " (a list of %zu)", json_array_size(want));
            return false;
        }
        json_array_foreach((json_t *)want, i, v)
        {
            int n = snprintf(at + used, len - used, "[%zu]", i);
            size_t u = n > 0 && (size_t)n < len - used ? used + (size_t)n : used;
            if (!holds_body(v, json_array_get(have, i), at, len, u))
                return false;
            at[used] = '\0';
        }
        return true;
    }
    if (json_is_number(want) && json_is_number(have))
        return json_number_value(want) == json_number_value(have);
    return json_equal(want, have);
}

bool scn__body_holds(const json_t *want, const json_t *have, char *at, size_t len)
{
    if (len)
        at[0] = '\0';
    return !want || holds_body(want, have, at, len, 0);
}

bool scn__write_matches(const scn_step *st, const char *verb, const char *path, int status)
{
    if (!verb || !path || strcmp(verb, st->verb) != 0)
        return false;
    if (st->status ? status != st->status : (status < 200 || status > 299))
        return false;
    return fnmatch(st->path, path, FNM_PATHNAME) == 0;
}
