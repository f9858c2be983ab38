/*
 * types.c - lookups in the generated type tables (types_table.c).
 *
 * The message table is sorted by name (the generator sorts it), so a name is
 * found by binary search; fields are few per message and searched linearly.
 * Pure functions over const data: any thread.
 */
#include "types.h"

#include <stdlib.h>
#include <string.h>

static int by_name(const void *key, const void *elem)
{
    return strcmp(key, ((const fakeapi__tmsg *)elem)->name);
}

const fakeapi__tmsg *fakeapi__type_find(const char *name)
{
    if (!name)
        return NULL;
    return bsearch(name, fakeapi__tmsgs, fakeapi__ntmsgs, sizeof fakeapi__tmsgs[0], by_name);
}

const fakeapi__tmsg *fakeapi__type_at(int i)
{
    if (i < 0 || (size_t)i >= fakeapi__ntmsgs)
        return NULL;
    return &fakeapi__tmsgs[i];
}

const fakeapi__tmsg *fakeapi__type_of_kind(const char *group_version, const char *kind)
{
    const char *slash = strchr(group_version, '/');
    size_t glen = slash ? (size_t)(slash - group_version) : 0;
    const char *version = slash ? slash + 1 : group_version;
    for (size_t i = 0; i < fakeapi__ntress; i++) {
        const fakeapi__tres *r = &fakeapi__tress[i];
        if (strlen(r->group) == glen && !strncmp(r->group, group_version, glen) &&
            !strcmp(r->version, version) && !strcmp(r->kind, kind) && r->msg >= 0 &&
            !strcmp(r->kind_group_version, group_version))
            return &fakeapi__tmsgs[r->msg];
    }
    return NULL;
}

const fakeapi__tfield *fakeapi__type_field_num(const fakeapi__tmsg *m, uint32_t number)
{
    /* Sorted by number: a binary search. */
    size_t lo = 0, hi = m->nfields;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t n = m->fields[mid].number;
        if (n == number)
            return &m->fields[mid];
        if (n < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const fakeapi__tfield *fakeapi__type_field_json(const fakeapi__tmsg *m, const char *key,
                                                size_t keylen, const fakeapi__tmsg **owner)
{
    for (uint16_t i = 0; i < m->nfields; i++) {
        const fakeapi__tfield *f = &m->fields[i];
        if (f->flags & FAKEAPI__F_NOJSON)
            continue;
        if (f->flags & FAKEAPI__F_INLINE) {
            const fakeapi__tmsg *sub = fakeapi__type_at(f->msg);
            const fakeapi__tfield *g = sub ? fakeapi__type_field_json(sub, key, keylen, owner)
                                           : NULL;
            if (g)
                return g;
            continue;
        }
        if (strlen(f->json) == keylen && !memcmp(f->json, key, keylen)) {
            if (owner)
                *owner = m;
            return f;
        }
    }
    return NULL;
}

const fakeapi__tres *fakeapi__type_resource(const char *group, const char *version,
                                            const char *resource)
{
    for (size_t i = 0; i < fakeapi__ntress; i++) {
        const fakeapi__tres *r = &fakeapi__tress[i];
        if (!strcmp(r->group, group) && !strcmp(r->version, version) &&
            !strcmp(r->resource, resource))
            return r;
    }
    return NULL;
}
