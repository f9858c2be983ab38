/*
 * audit_versions.h - deprecated group/versions in audit logs (private to
 * libscenario): which ones fakeapi does not serve, and their GA version
 * when the conversion is trivial (the importer maps the request path and
 * the body; others are reported as gaps). Any thread.
 */
#ifndef SCN_AUDIT_VERSIONS_H
#define SCN_AUDIT_VERSIONS_H

#include <jansson.h>

typedef struct scn__gv_map {
    const char *group, *version, *resource; /* resource NULL: every one */
    const char *to_group, *to_version;      /* NULL: no trivial conversion */
} scn__gv_map;

/* The mapping for group/version/resource (group "" or NULL: core); NULL
 * when fakeapi serves it as it is. Borrowed from a static table. */
const scn__gv_map *scn__gv_find(const char *group, const char *version, const char *resource);

/* obj (a whole object of the deprecated version) in its GA form, in place:
 * apiVersion, and what the old version defaulted that the new requires
 * (a workload's selector from its template's labels). */
void scn__gv_convert(json_t *obj, const scn__gv_map *m);

/* uri with /apis/GROUP/VERSION/ replaced by the GA one: a new string
 * (free it), or NULL if out of memory. */
char *scn__gv_map_uri(const char *uri, const scn__gv_map *m);

#endif
