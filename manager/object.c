/*
 * object.c - see ctrl/object.h.
 */
#include "ctrl/object.h"

#include <string.h>

const char *ctrl_obj_meta(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

bool ctrl_obj_deleting(const json_t *obj)
{
    return json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp") != NULL;
}

/* apiVersion "group/version" (or "version" for core) names group. */
static bool in_group(const char *api_version, const char *group)
{
    const char *slash = strchr(api_version, '/');
    if (!slash)
        return !*group;
    size_t n = (size_t)(slash - api_version);
    return strlen(group) == n && !strncmp(api_version, group, n);
}

const char *ctrl_obj_controller_uid(const json_t *obj, const char *group, const char *kind)
{
    size_t i;
    const json_t *ref;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, ref)
    {
        const char *av = json_string_value(json_object_get(ref, "apiVersion"));
        const char *k = json_string_value(json_object_get(ref, "kind"));
        if (json_is_true(json_object_get(ref, "controller")) && av && k && !strcmp(k, kind) &&
            in_group(av, group))
            return json_string_value(json_object_get(ref, "uid"));
    }
    return NULL;
}

const char *ctrl_obj_name(const json_t *obj)
{
    return ctrl_obj_meta(obj, "name");
}

const char *ctrl_obj_namespace(const json_t *obj)
{
    return ctrl_obj_meta(obj, "namespace");
}

const char *ctrl_obj_uid(const json_t *obj)
{
    return ctrl_obj_meta(obj, "uid");
}

const char *ctrl_obj_resource_version(const json_t *obj)
{
    return ctrl_obj_meta(obj, "resourceVersion");
}

int64_t ctrl_obj_generation(const json_t *obj)
{
    return ctrl_obj_get_int(obj, "metadata.generation", 0);
}

const char *ctrl_obj_api_version(const json_t *obj)
{
    return json_string_value(json_object_get(obj, "apiVersion"));
}

const char *ctrl_obj_kind(const json_t *obj)
{
    return json_string_value(json_object_get(obj, "kind"));
}

static const char *map_entry(const json_t *obj, const char *map, const char *key)
{
    if (!key)
        return NULL;
    return json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"), map), key));
}

const char *ctrl_obj_label(const json_t *obj, const char *key)
{
    return map_entry(obj, "labels", key);
}

const char *ctrl_obj_annotation(const json_t *obj, const char *key)
{
    return map_entry(obj, "annotations", key);
}

/* The member name of obj, created as an empty object when missing; NULL
 * when it is something else (or out of memory). */
static json_t *child_object(json_t *obj, const char *name, size_t len, bool create)
{
    char key[256];
    if (!json_is_object(obj) || len == 0 || len >= sizeof key)
        return NULL;
    memcpy(key, name, len);
    key[len] = '\0';
    json_t *c = json_object_get(obj, key);
    if (!c && create) {
        c = json_object();
        if (!c || json_object_set_new(obj, key, c) < 0)
            return NULL;
    }
    return json_is_object(c) ? c : NULL;
}

static int set_map_entry(json_t *obj, const char *map, const char *key, const char *value)
{
    if (!json_is_object(obj) || !key)
        return CTRL_ERR_ARG;
    json_t *meta = child_object(obj, "metadata", strlen("metadata"), value != NULL);
    json_t *m = meta ? child_object(meta, map, strlen(map), value != NULL) : NULL;
    if (!value) {
        if (json_is_object(m))
            json_object_del(m, key);
        return 0;
    }
    if (!m)
        return CTRL_ERR_ARG;
    json_t *v = json_string(value);
    if (!v || json_object_set_new(m, key, v) < 0)
        return v ? CTRL_ERR_NOMEM : CTRL_ERR_ARG; /* json_string: NULL for invalid UTF-8 too */
    return 0;
}

int ctrl_obj_set_label(json_t *obj, const char *key, const char *value)
{
    return set_map_entry(obj, "labels", key, value);
}

int ctrl_obj_set_annotation(json_t *obj, const char *key, const char *value)
{
    return set_map_entry(obj, "annotations", key, value);
}

json_t *ctrl_obj_get(const json_t *obj, const char *path)
{
    if (!obj || !path || !*path)
        return NULL;
    const json_t *cur = obj;
    const char *p = path;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        char key[256];
        if (!json_is_object(cur) || len == 0 || len >= sizeof key)
            return NULL;
        memcpy(key, p, len);
        key[len] = '\0';
        cur = json_object_get(cur, key);
        if (!cur || !dot)
            return (json_t *)cur;
        p = dot + 1;
    }
}

const char *ctrl_obj_get_string(const json_t *obj, const char *path)
{
    return json_string_value(ctrl_obj_get(obj, path));
}

int64_t ctrl_obj_get_int(const json_t *obj, const char *path, int64_t def)
{
    const json_t *v = ctrl_obj_get(obj, path);
    if (json_is_integer(v))
        return (int64_t)json_integer_value(v);
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d >= -9.2e18 && d <= 9.2e18 && d == (double)(int64_t)d)
            return (int64_t)d;
    }
    return def;
}

bool ctrl_obj_get_bool(const json_t *obj, const char *path, bool def)
{
    const json_t *v = ctrl_obj_get(obj, path);
    return json_is_boolean(v) ? json_is_true(v) : def;
}

int ctrl_obj_set(json_t *obj, const char *path, json_t *value)
{
    if (!value)
        return CTRL_ERR_ARG;
    if (!json_is_object(obj) || !path || !*path) {
        json_decref(value);
        return CTRL_ERR_ARG;
    }
    json_t *cur = obj;
    const char *p = path;
    const char *dot;
    while ((dot = strchr(p, '.'))) {
        cur = child_object(cur, p, (size_t)(dot - p), true);
        if (!cur) {
            json_decref(value);
            return CTRL_ERR_ARG;
        }
        p = dot + 1;
    }
    if (!*p || strlen(p) >= 256) {
        json_decref(value);
        return CTRL_ERR_ARG;
    }
    return json_object_set_new(cur, p, value) < 0 ? CTRL_ERR_NOMEM : 0;
}

bool ctrl_obj_remove(json_t *obj, const char *path)
{
    if (!path)
        return false;
    const char *last = strrchr(path, '.');
    json_t *parent = last ? NULL : obj;
    if (last) {
        char head[1024];
        size_t n = (size_t)(last - path);
        if (n >= sizeof head)
            return false;
        memcpy(head, path, n);
        head[n] = '\0';
        parent = ctrl_obj_get(obj, head);
    }
    const char *key = last ? last + 1 : path;
    return json_is_object(parent) && json_object_get(parent, key) && json_object_del(parent, key) == 0;
}
