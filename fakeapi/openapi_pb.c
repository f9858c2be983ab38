/*
 * openapi_pb.c - the Swagger 2.0 document in its protobuf form: gnostic's
 * openapi.v2.Document, which client-go (kubectl explain
 * --output=plaintext-openapiv2, OpenAPISchema) asks for as
 * application/com.github.proto-openapi.spec.v2@v1.0+protobuf.
 *
 * The input is the JSON document openapi.c builds; each JSON object becomes
 * its message, field by field (numbers from gnostic's OpenAPIv2.proto).
 * Values gnostic keeps as an Any (vendor extensions, default, enum,
 * example) are carried in Any.yaml as compact JSON, which is YAML, and which
 * is what readers parse it from. Keys the messages have no field for are
 * left out.
 *
 * Thread-safety: pure functions of their input; any thread.
 */
#include "openapi_pb.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2 };

static void put_varint(fakeapi__strbuf *b, uint64_t v)
{
    unsigned char tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[n] |= 0x80;
        n++;
    } while (v);
    fakeapi__strbuf_add(b, tmp, n);
}

static void put_tag(fakeapi__strbuf *b, uint32_t field, int wt)
{
    put_varint(b, ((uint64_t)field << 3) | (uint64_t)wt);
}

static void put_bytes(fakeapi__strbuf *b, uint32_t field, const void *p, size_t n)
{
    put_tag(b, field, WT_LEN);
    put_varint(b, n);
    if (n)
        fakeapi__strbuf_add(b, p, n);
}

static void put_str(fakeapi__strbuf *b, uint32_t field, const char *s)
{
    if (s && *s)
        put_bytes(b, field, s, strlen(s));
}

/* A string-valued key of obj as field (proto3: empty strings are not written). */
static void put_key(fakeapi__strbuf *b, uint32_t field, const json_t *obj, const char *key)
{
    put_str(b, field, json_string_value(json_object_get(obj, key)));
}

static void put_bool(fakeapi__strbuf *b, uint32_t field, const json_t *v)
{
    if (json_is_true(v)) {
        put_tag(b, field, WT_VARINT);
        put_varint(b, 1);
    }
}

static void put_int(fakeapi__strbuf *b, uint32_t field, const json_t *v)
{
    if (json_is_integer(v) && json_integer_value(v) != 0) {
        put_tag(b, field, WT_VARINT);
        put_varint(b, (uint64_t)json_integer_value(v));
    }
}

static void put_double(fakeapi__strbuf *b, uint32_t field, const json_t *v)
{
    if (!json_is_number(v))
        return;
    double d = json_number_value(v);
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(bits >> (8 * i));
    put_tag(b, field, WT_FIXED64);
    fakeapi__strbuf_add(b, le, sizeof le);
}

/* A nested message: child's bytes as field. The child buffer is released. */
static void put_msg(fakeapi__strbuf *b, uint32_t field, fakeapi__strbuf *child)
{
    if (child->failed)
        b->failed = true;
    put_bytes(b, field, child->data ? child->data : "", child->len);
    fakeapi__strbuf_deinit(child);
}

static void put_strings(fakeapi__strbuf *b, uint32_t field, const json_t *arr)
{
    size_t i;
    json_t *s;
    json_array_foreach(arr, i, s) if (json_is_string(s))
        put_bytes(b, field, json_string_value(s), json_string_length(s));
}

/* gnostic Any {google.protobuf.Any value = 1; string yaml = 2}: v as JSON in yaml. */
static void put_any(fakeapi__strbuf *b, uint32_t field, const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text) {
        b->failed = true;
        return;
    }
    fakeapi__strbuf any = {0};
    put_str(&any, 2, text);
    free(text);
    put_msg(b, field, &any);
}

/* Every "x-" key of obj as a repeated NamedAny {name = 1; Any value = 2}. */
static void put_extensions(fakeapi__strbuf *b, uint32_t field, const json_t *obj)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (strncmp(k, "x-", 2) != 0)
            continue;
        fakeapi__strbuf named = {0};
        put_str(&named, 1, k);
        put_any(&named, 2, v);
        put_msg(b, field, &named);
    }
}

static void put_schema(fakeapi__strbuf *b, uint32_t field, const json_t *s, int depth);

/* A map of schemas as repeated NamedSchema {name = 1; Schema value = 2}, wrapped in field. */
static void put_named_schemas(fakeapi__strbuf *b, uint32_t field, const json_t *map, int depth)
{
    fakeapi__strbuf wrap = {0};
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)map, k, v)
    {
        fakeapi__strbuf named = {0};
        put_str(&named, 1, k);
        put_schema(&named, 2, v, depth + 1);
        put_msg(&wrap, 1, &named);
    }
    put_msg(b, field, &wrap);
}

static void put_schema(fakeapi__strbuf *b, uint32_t field, const json_t *s, int depth)
{
    fakeapi__strbuf m = {0};
    if (!json_is_object(s) || depth > 200) {
        put_msg(b, field, &m);
        return;
    }
    put_key(&m, 1, s, "$ref");
    put_key(&m, 2, s, "format");
    put_key(&m, 3, s, "title");
    put_key(&m, 4, s, "description");
    if (json_object_get(s, "default"))
        put_any(&m, 5, json_object_get(s, "default"));
    put_double(&m, 6, json_object_get(s, "multipleOf"));
    put_double(&m, 7, json_object_get(s, "maximum"));
    put_bool(&m, 8, json_object_get(s, "exclusiveMaximum"));
    put_double(&m, 9, json_object_get(s, "minimum"));
    put_bool(&m, 10, json_object_get(s, "exclusiveMinimum"));
    put_int(&m, 11, json_object_get(s, "maxLength"));
    put_int(&m, 12, json_object_get(s, "minLength"));
    put_key(&m, 13, s, "pattern");
    put_int(&m, 14, json_object_get(s, "maxItems"));
    put_int(&m, 15, json_object_get(s, "minItems"));
    put_bool(&m, 16, json_object_get(s, "uniqueItems"));
    put_int(&m, 17, json_object_get(s, "maxProperties"));
    put_int(&m, 18, json_object_get(s, "minProperties"));
    put_strings(&m, 19, json_object_get(s, "required"));
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(s, "enum"), i, e) put_any(&m, 20, e);
    const json_t *ap = json_object_get(s, "additionalProperties");
    if (ap) {
        /* AdditionalPropertiesItem: schema = 1 or boolean = 2 */
        fakeapi__strbuf item = {0};
        if (json_is_boolean(ap)) {
            put_tag(&item, 2, WT_VARINT);
            put_varint(&item, json_is_true(ap) ? 1 : 0);
        } else {
            put_schema(&item, 1, ap, depth + 1);
        }
        put_msg(&m, 21, &item);
    }
    const json_t *type = json_object_get(s, "type");
    if (type) {
        /* TypeItem: repeated string value = 1 */
        fakeapi__strbuf item = {0};
        if (json_is_string(type))
            put_str(&item, 1, json_string_value(type));
        else
            put_strings(&item, 1, type);
        put_msg(&m, 22, &item);
    }
    const json_t *items = json_object_get(s, "items");
    if (items) {
        /* ItemsItem: repeated Schema schema = 1 */
        fakeapi__strbuf item = {0};
        if (json_is_array(items)) {
            json_array_foreach(items, i, e) put_schema(&item, 1, e, depth + 1);
        } else {
            put_schema(&item, 1, items, depth + 1);
        }
        put_msg(&m, 23, &item);
    }
    json_array_foreach(json_object_get(s, "allOf"), i, e) put_schema(&m, 24, e, depth + 1);
    const json_t *props = json_object_get(s, "properties");
    if (json_is_object(props))
        put_named_schemas(&m, 25, props, depth);
    put_key(&m, 26, s, "discriminator");
    put_bool(&m, 27, json_object_get(s, "readOnly"));
    if (json_object_get(s, "example"))
        put_any(&m, 30, json_object_get(s, "example"));
    put_extensions(&m, 31, s);
    put_msg(b, field, &m);
}

/*
 * A parameter as ParametersItem {Parameter parameter = 1}: a body parameter
 * (Parameter.body_parameter = 1) or a query/path one inside
 * Parameter.non_body_parameter = 2 (query = 3, path = 4, header = 1).
 */
static void put_parameter(fakeapi__strbuf *b, uint32_t field, const json_t *p)
{
    const char *in = json_string_value(json_object_get(p, "in"));
    fakeapi__strbuf param = {0};
    fakeapi__strbuf sub = {0};
    if (in && !strcmp(in, "body")) {
        put_key(&sub, 1, p, "description");
        put_key(&sub, 2, p, "name");
        put_key(&sub, 3, p, "in");
        put_bool(&sub, 4, json_object_get(p, "required"));
        if (json_object_get(p, "schema"))
            put_schema(&sub, 5, json_object_get(p, "schema"), 0);
        put_extensions(&sub, 6, p);
        put_msg(&param, 1, &sub);
    } else {
        bool query = in && !strcmp(in, "query");
        bool path = in && !strcmp(in, "path");
        /* The query sub-schema has allow_empty_value at 5, so its later fields sit one higher. */
        uint32_t shift = query ? 1 : 0;
        put_bool(&sub, 1, json_object_get(p, "required"));
        put_key(&sub, 2, p, "in");
        put_key(&sub, 3, p, "description");
        put_key(&sub, 4, p, "name");
        put_key(&sub, 5 + shift, p, "type");
        put_key(&sub, 6 + shift, p, "format");
        put_bool(&sub, 19 + shift, json_object_get(p, "uniqueItems"));
        fakeapi__strbuf nonbody = {0};
        put_msg(&nonbody, query ? 3 : path ? 4 : 1, &sub);
        put_msg(&param, 2, &nonbody);
    }
    fakeapi__strbuf item = {0};
    put_msg(&item, 1, &param);
    put_msg(b, field, &item);
}

static void put_parameters(fakeapi__strbuf *b, uint32_t field, const json_t *arr)
{
    size_t i;
    json_t *p;
    json_array_foreach(arr, i, p) put_parameter(b, field, p);
}

static void put_operation(fakeapi__strbuf *b, uint32_t field, const json_t *op)
{
    fakeapi__strbuf m = {0};
    put_strings(&m, 1, json_object_get(op, "tags"));
    put_key(&m, 2, op, "summary");
    put_key(&m, 3, op, "description");
    put_key(&m, 5, op, "operationId");
    put_strings(&m, 6, json_object_get(op, "produces"));
    put_strings(&m, 7, json_object_get(op, "consumes"));
    put_parameters(&m, 8, json_object_get(op, "parameters"));
    /* Responses {repeated NamedResponseValue response_code = 1} */
    fakeapi__strbuf rs = {0};
    const char *code;
    json_t *r;
    json_object_foreach(json_object_get(op, "responses"), code, r)
    {
        fakeapi__strbuf resp = {0};
        put_key(&resp, 1, r, "description");
        if (json_object_get(r, "schema")) {
            fakeapi__strbuf item = {0}; /* SchemaItem {Schema schema = 1} */
            put_schema(&item, 1, json_object_get(r, "schema"), 0);
            put_msg(&resp, 2, &item);
        }
        fakeapi__strbuf value = {0}; /* ResponseValue {Response response = 1} */
        put_msg(&value, 1, &resp);
        fakeapi__strbuf named = {0};
        put_str(&named, 1, code);
        put_msg(&named, 2, &value);
        put_msg(&rs, 1, &named);
    }
    put_msg(&m, 9, &rs);
    put_strings(&m, 10, json_object_get(op, "schemes"));
    put_bool(&m, 11, json_object_get(op, "deprecated"));
    put_extensions(&m, 13, op);
    put_msg(b, field, &m);
}

static void put_path_item(fakeapi__strbuf *b, uint32_t field, const json_t *item)
{
    static const struct {
        const char *method;
        uint32_t field;
    } ops[] = {{"get", 2},     {"put", 3},  {"post", 4}, {"delete", 5},
               {"options", 6}, {"head", 7}, {"patch", 8}};
    fakeapi__strbuf m = {0};
    put_key(&m, 1, item, "$ref");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const json_t *op = json_object_get(item, ops[i].method);
        if (json_is_object(op))
            put_operation(&m, ops[i].field, op);
    }
    put_parameters(&m, 9, json_object_get(item, "parameters"));
    put_extensions(&m, 10, item);
    put_msg(b, field, &m);
}

char *fakeapi__openapi_v2_protobuf(const json_t *doc, size_t *len)
{
    fakeapi__strbuf d = {0};
    *len = 0;
    if (!json_is_object(doc))
        return NULL;
    put_key(&d, 1, doc, "swagger");
    const json_t *info = json_object_get(doc, "info");
    if (info) {
        fakeapi__strbuf m = {0};
        put_key(&m, 1, info, "title");
        put_key(&m, 2, info, "version");
        put_key(&m, 3, info, "description");
        put_msg(&d, 2, &m);
    }
    put_key(&d, 3, doc, "host");
    put_key(&d, 4, doc, "basePath");
    put_strings(&d, 5, json_object_get(doc, "schemes"));
    put_strings(&d, 6, json_object_get(doc, "consumes"));
    put_strings(&d, 7, json_object_get(doc, "produces"));
    /* Paths {repeated NamedPathItem path = 2} */
    fakeapi__strbuf paths = {0};
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(doc, "paths"), k, v)
    {
        fakeapi__strbuf named = {0};
        put_str(&named, 1, k);
        put_path_item(&named, 2, v);
        put_msg(&paths, 2, &named);
    }
    put_msg(&d, 8, &paths);
    /* Definitions {repeated NamedSchema additional_properties = 1} */
    const json_t *defs = json_object_get(doc, "definitions");
    if (json_is_object(defs))
        put_named_schemas(&d, 9, defs, 0);
    /* security: repeated SecurityRequirement {repeated NamedStringArray = 1} */
    size_t i;
    json_t *req;
    json_array_foreach(json_object_get(doc, "security"), i, req)
    {
        fakeapi__strbuf sr = {0};
        json_object_foreach(req, k, v)
        {
            fakeapi__strbuf named = {0}, arr = {0};
            put_str(&named, 1, k);
            put_strings(&arr, 1, v);
            put_msg(&named, 2, &arr);
            put_msg(&sr, 1, &named);
        }
        put_msg(&d, 12, &sr);
    }
    /* securityDefinitions: api keys only (SecurityDefinitionsItem.api_key_security = 2) */
    const json_t *sd = json_object_get(doc, "securityDefinitions");
    if (json_is_object(sd)) {
        fakeapi__strbuf defsm = {0};
        json_object_foreach((json_t *)sd, k, v)
        {
            const char *type = json_string_value(json_object_get(v, "type"));
            if (!type || strcmp(type, "apiKey") != 0)
                continue;
            fakeapi__strbuf key = {0}, item = {0}, named = {0};
            put_key(&key, 1, v, "type");
            put_key(&key, 2, v, "name");
            put_key(&key, 3, v, "in");
            put_key(&key, 4, v, "description");
            put_msg(&item, 2, &key);
            put_str(&named, 1, k);
            put_msg(&named, 2, &item);
            put_msg(&defsm, 1, &named);
        }
        put_msg(&d, 13, &defsm);
    }
    put_extensions(&d, 16, doc);
    if (d.failed) {
        fakeapi__strbuf_deinit(&d);
        return NULL;
    }
    char *out = fakeapi__strbuf_take(&d, len);
    if (!out) {
        /* An empty document still needs a buffer the caller can free. */
        out = malloc(1);
        *len = 0;
    }
    return out;
}
