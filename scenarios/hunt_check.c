/*
 * hunt_check.c - the API server's handling of a custom resource for the
 * input generator: prune unknown fields, prune the nulls the schema neither
 * allows nor defaults, apply defaults, validate, match patterns. All of it
 * is fakeapi's own code (fakeapi_schema_store, fakeapi_schema_validate,
 * fakeapi_schema_pattern_match), so a change the generator labels is
 * labelled as the server answers it; the integration test
 * (tests/integration/scenarios/test_hunt_gen.c) holds it to that. Also the
 * generator's JSON pointers and child schema lookup.
 * Reentrant; schemas are only read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "hunt_gen.h"
#include "hunt_gen_int.h"

/* ---- schema helpers ------------------------------------------------------ */

const json_t *scn__gen_child_schema(const json_t *s, const char *k)
{
    const json_t *prop = json_object_get(json_object_get(s, "properties"), k);
    const json_t *addl = json_object_get(s, "additionalProperties");
    if (prop)
        return prop;
    return json_is_object(addl) ? addl : NULL;
}

size_t scn__gen_utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            n++;
    return n;
}

/* ---- the server's handling, from fakeapi ---------------------------------- */

int scn__gen_re_match(const char *pattern, const char *s)
{
    int rc = fakeapi_schema_pattern_match(pattern, s);
    return rc < 0 ? -1 : rc;
}

bool scn_gen_check(const json_t *schema, const json_t *obj, char *why, size_t len)
{
    json_t *causes = NULL;
    if (why && len)
        why[0] = '\0';
    if (!json_is_object(schema) || !obj)
        return true; /* no schema constrains nothing */
    int rc = fakeapi_schema_validate(schema, obj, why && len ? &causes : NULL);
    if (rc == 0)
        return true;
    const json_t *first = json_array_get(causes, 0);
    const char *field = json_string_value(json_object_get(first, "field"));
    const char *message = json_string_value(json_object_get(first, "message"));
    if (why && len)
        snprintf(why, len, "%s: %s", field && *field ? field : "<root>",
                 message ? message : fakeapi_strerror(rc));
    json_decref(causes);
    return false;
}

void scn__gen_store(const json_t *schema, json_t *obj)
{
    if (json_is_object(schema))
        fakeapi_schema_store(schema, obj);
}

/* ---- JSON pointers ------------------------------------------------------- */

/* The next token of pointer *p (unescaped) into tok; false at the end. */
static bool next_token(const char **p, char *tok, size_t len)
{
    if (**p != '/')
        return false;
    const char *c = *p + 1;
    size_t o = 0;
    for (; *c && *c != '/'; c++) {
        char ch = *c;
        if (ch == '~' && (c[1] == '0' || c[1] == '1')) {
            ch = c[1] == '0' ? '~' : '/';
            c++;
        }
        if (o + 1 < len)
            tok[o++] = ch;
    }
    tok[o] = '\0';
    *p = c;
    return true;
}

static bool parse_index(const char *tok, size_t *out)
{
    char *end;
    if (!*tok || (tok[0] == '0' && tok[1]) || tok[0] < '0' || tok[0] > '9')
        return false;
    unsigned long long v = strtoull(tok, &end, 10);
    if (*end || v > 1000000000ULL)
        return false;
    *out = (size_t)v;
    return true;
}

static json_t *child_of(const json_t *c, const char *tok)
{
    size_t i;
    if (json_is_object(c))
        return json_object_get(c, tok);
    if (json_is_array(c) && parse_index(tok, &i))
        return json_array_get(c, i);
    return NULL;
}

json_t *scn__gen_pointer_get(const json_t *doc, const char *pointer)
{
    char tok[512];
    json_t *cur = (json_t *)doc;
    while (cur && next_token(&pointer, tok, sizeof tok))
        cur = child_of(cur, tok);
    return cur;
}

int scn__gen_pointer_set(json_t *doc, const char *pointer, const json_t *value)
{
    char tok[512], last[512] = "";
    json_t *parent = NULL, *cur = doc;
    const char *p = pointer;
    while (next_token(&p, tok, sizeof tok)) {
        if (*p == '\0') {
            parent = cur;
            memcpy(last, tok, sizeof last);
            break;
        }
        cur = child_of(cur, tok);
        if (!cur)
            return -1;
    }
    if (!parent)
        return -1;
    size_t i;
    if (json_is_object(parent)) {
        if (!value)
            return json_object_del(parent, last) == 0 ? 0 : -1;
        return json_object_set_new(parent, last, json_deep_copy(value)) == 0 ? 0 : -1;
    }
    if (!json_is_array(parent) || !parse_index(last, &i))
        return -1;
    if (!value)
        return i < json_array_size(parent) && json_array_remove(parent, i) == 0 ? 0 : -1;
    if (i < json_array_size(parent))
        return json_array_set_new(parent, i, json_deep_copy(value)) == 0 ? 0 : -1;
    if (i == json_array_size(parent))
        return json_array_append_new(parent, json_deep_copy(value)) == 0 ? 0 : -1;
    return -1;
}

int scn_gen_apply(const json_t *schema, const json_t *obj, const scn_gen_change *c, json_t **out,
                  bool *valid)
{
    json_t *o = json_deep_copy(obj);
    if (!o)
        return SCN_ERR_NOMEM;
    if (scn__gen_pointer_set(o, c->path, c->value) != 0) {
        json_decref(o);
        return SCN_ERR_INPUT;
    }
    scn__gen_store(schema, o);
    *valid = scn_gen_check(schema, o, NULL, 0);
    *out = o;
    return 0;
}
