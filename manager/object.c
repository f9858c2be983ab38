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
