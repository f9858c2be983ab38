/*
 * yaml.c - YAML streams to jansson values, on libyaml (yaml_dump.c goes the
 * other way; yaml_scalar.c says what plain scalars mean).
 *
 * Loading is a recursive descent over libyaml's parser events, one call per
 * node, so the C stack is bounded by KH_YAML_MAX_DEPTH. Every value built,
 * including every value an alias copies, is counted against
 * KH_YAML_MAX_NODES; that budget is what stops "billion laughs" alias bombs.
 *
 * Input that starts with '{' or '[' is first tried as a stream of JSON texts
 * with jansson, the way kubectl sniffs JSON; YAML cannot read "{...}{...}".
 * If that fails for any reason the YAML loader runs and reports the error.
 *
 * Numbers go through strtod/snprintf, so the process must use the C locale
 * for LC_NUMERIC (the default unless someone calls setlocale).
 */
#include "kh/yaml.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "yaml_scalar.h"

#define TAG_PREFIX "tag:yaml.org,2002:"

typedef struct anchor {
    char *name;
    json_t *value; /* own reference, so the copy source outlives edits */
    size_t nodes;  /* what one copy costs against the node budget */
} anchor;

/* kh_yaml_marks: open addressing on the node's address, at most half full.
 * Line 0 marks a value that was freed during the load (a repeated key's
 * earlier value), so that a later value at the same address reads as
 * unknown rather than inheriting a wrong line. */
typedef struct mark_slot {
    const json_t *node;
    int line;
} mark_slot;

struct kh_yaml_marks {
    mark_slot *slots;
    size_t cap; /* a power of two, or 0 */
    size_t used;
};

typedef struct loader {
    yaml_parser_t parser;
    kh_yaml_marks *marks; /* NULL: positions not wanted */
    const char *text;
    size_t len;
    anchor *anchors;
    size_t n_anchors;
    size_t cap_anchors;
    size_t nodes;
    kh_yaml_error *err;
} loader;

/* ---- errors ---- */

static void verror(kh_yaml_error *err, int line, int column, const char *fmt, va_list ap)
{
    if (!err)
        return;
    err->line = line;
    err->column = column;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
}

__attribute__((format(printf, 4, 5))) static int set_error(kh_yaml_error *err, int line, int column,
                                                           const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    verror(err, line, column, fmt, ap);
    va_end(ap);
    return -1;
}

__attribute__((format(printf, 3, 4))) static int fail_at(loader *ld, yaml_mark_t mark,
                                                         const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    verror(ld->err, (int)mark.line + 1, (int)mark.column + 1, fmt, ap);
    va_end(ap);
    return -1;
}

static int fail_oom(loader *ld)
{
    return set_error(ld->err, 0, 0, "out of memory");
}

/* The reader reports a byte offset rather than a mark. */
static yaml_mark_t mark_of_offset(const loader *ld, size_t offset)
{
    yaml_mark_t mark = {0, 0, 0};

    for (size_t i = 0; i < offset && i < ld->len; i++) {
        mark.column++;
        if (ld->text[i] == '\n') {
            mark.line++;
            mark.column = 0;
        }
    }
    return mark;
}

static int fail_parser(loader *ld)
{
    const yaml_parser_t *p = &ld->parser;
    yaml_mark_t mark = p->problem_mark;
    const char *problem = p->problem ? p->problem : "invalid YAML";

    if (p->error == YAML_MEMORY_ERROR)
        return fail_oom(ld);
    if (p->error == YAML_READER_ERROR)
        mark = mark_of_offset(ld, p->problem_offset);
    if (p->context)
        return fail_at(ld, mark, "%s: %s", p->context, problem);
    return fail_at(ld, mark, "%s", problem);
}

/* ---- positions ---- */

static size_t mark_hash(const json_t *node, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)node;

    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    return (size_t)h & (cap - 1);
}

static mark_slot *mark_find(const kh_yaml_marks *m, const json_t *node)
{
    size_t i = mark_hash(node, m->cap);

    while (m->slots[i].node && m->slots[i].node != node)
        i = (i + 1) & (m->cap - 1);
    return &m->slots[i];
}

static int marks_grow(kh_yaml_marks *m)
{
    kh_yaml_marks bigger = {NULL, m->cap ? m->cap * 2 : 64, 0};

    bigger.slots = calloc(bigger.cap, sizeof *bigger.slots);
    if (!bigger.slots)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].node)
            *mark_find(&bigger, m->slots[i].node) = m->slots[i];
    }
    bigger.used = m->used;
    free(m->slots);
    *m = bigger;
    return 0;
}

static int marks_set(kh_yaml_marks *m, const json_t *node, int line)
{
    mark_slot *slot;

    if ((m->used + 1) * 2 > m->cap && marks_grow(m) != 0)
        return -1;
    slot = mark_find(m, node);
    if (!slot->node)
        m->used++;
    slot->node = node;
    slot->line = line;
    return 0;
}

/* Records where v starts. The three singletons have no single place. */
static int mark_value(loader *ld, const json_t *v, yaml_mark_t mark)
{
    if (!ld->marks || json_is_null(v) || json_is_boolean(v))
        return 0;
    return marks_set(ld->marks, v, (int)mark.line + 1) == 0 ? 0 : fail_oom(ld);
}

/* A value dropped from the documents (with what it holds) has no line. */
static int marks_forget(kh_yaml_marks *m, json_t *v)
{
    size_t i;
    const char *key;
    json_t *item;

    if (!json_is_null(v) && !json_is_boolean(v) && marks_set(m, v, 0) != 0)
        return -1;
    json_array_foreach(v, i, item)
    {
        if (marks_forget(m, item) != 0)
            return -1;
    }
    json_object_foreach(v, key, item)
    {
        if (marks_forget(m, item) != 0)
            return -1;
    }
    return 0;
}

static int make_scalar(loader *ld, const yaml_event_t *ev, kh__yaml_kind k, json_t **out)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;

    switch (k) {
    case KH__YAML_NULL:
        *out = json_null();
        break;
    case KH__YAML_BOOL:
        *out = json_boolean(kh__yaml_is_one_of(s, n, kh__yaml_true_words));
        break;
    case KH__YAML_INT:
        *out = kh__yaml_make_int(s, 0);
        break;
    case KH__YAML_REAL:
        *out = kh__yaml_is_int(s, n) ? kh__yaml_make_int(s, 1) : kh__yaml_make_real(s, n);
        if (!*out) /* jansson refuses infinities and NaN, as JSON does */
            return fail_at(ld, ev->start_mark, "'%.*s' cannot be represented in JSON", (int)n, s);
        break;
    case KH__YAML_STRING:
        *out = json_stringn(s, n);
        break;
    }
    return *out ? 0 : fail_oom(ld);
}

/* The kind an explicitly tagged scalar asks for; unknown tags are ignored. */
static int tagged_kind(loader *ld, const yaml_event_t *ev, kh__yaml_kind *k)
{
    static const struct {
        const char *name;
        kh__yaml_kind k;
    } known[] = {{"str", KH__YAML_STRING},
                 {"null", KH__YAML_NULL},
                 {"bool", KH__YAML_BOOL},
                 {"int", KH__YAML_INT},
                 {"float", KH__YAML_REAL}};
    const char *tag = (const char *)ev->data.scalar.tag;
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    kh__yaml_kind got = kh__yaml_classify(s, n);

    *k = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? got : KH__YAML_STRING;
    if (strcmp(tag, "!") == 0) /* the non-specific tag: a string */
        *k = KH__YAML_STRING;
    if (strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) != 0)
        return 0;
    tag += strlen(TAG_PREFIX);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(tag, known[i].name) != 0)
            continue;
        *k = known[i].k;
        if (*k == KH__YAML_STRING || got == *k || (*k == KH__YAML_REAL && got == KH__YAML_INT))
            return 0;
        return fail_at(ld, ev->start_mark, "'%.*s' is not a valid !!%s", (int)n, s, tag);
    }
    return 0;
}

/* ---- anchors and the node budget ---- */

static int count_nodes(loader *ld, size_t n, yaml_mark_t mark)
{
    if (n > KH_YAML_MAX_NODES - ld->nodes)
        return fail_at(ld, mark, "more than %d values (alias bomb?)", KH_YAML_MAX_NODES);
    ld->nodes += n;
    return 0;
}

static void anchors_clear(loader *ld)
{
    for (size_t i = 0; i < ld->n_anchors; i++) {
        free(ld->anchors[i].name);
        json_decref(ld->anchors[i].value);
    }
    ld->n_anchors = 0;
}

/* The array cannot outgrow the node budget: every anchor names a node. */
static int anchor_add(loader *ld, const char *name, json_t *value, size_t nodes)
{
    anchor *a;

    if (ld->n_anchors == ld->cap_anchors) {
        size_t cap = ld->cap_anchors ? ld->cap_anchors * 2 : 16;
        anchor *grown = realloc(ld->anchors, cap * sizeof *grown);
        if (!grown)
            return fail_oom(ld);
        ld->anchors = grown;
        ld->cap_anchors = cap;
    }
    a = &ld->anchors[ld->n_anchors];
    a->name = strdup(name);
    if (!a->name)
        return fail_oom(ld);
    a->value = json_incref(value);
    a->nodes = nodes;
    ld->n_anchors++;
    return 0;
}

/* A later anchor of the same name replaces an earlier one. */
static const anchor *anchor_find(const loader *ld, const char *name)
{
    for (size_t i = ld->n_anchors; i > 0; i--) {
        if (strcmp(ld->anchors[i - 1].name, name) == 0)
            return &ld->anchors[i - 1];
    }
    return NULL;
}

static const char *event_anchor(const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        return (const char *)ev->data.scalar.anchor;
    case YAML_SEQUENCE_START_EVENT:
        return (const char *)ev->data.sequence_start.anchor;
    case YAML_MAPPING_START_EVENT:
        return (const char *)ev->data.mapping_start.anchor;
    default:
        return NULL;
    }
}

/* ---- nodes ---- */

static int build_node(loader *ld, const yaml_event_t *ev, int depth, json_t **out);

static int next_event(loader *ld, yaml_event_t *ev)
{
    return yaml_parser_parse(&ld->parser, ev) ? 0 : fail_parser(ld);
}

/* Reads the next event of a collection: 1 (and nothing to free) at its end
 * event, 0 with *ev to delete, -1 on error. */
static int next_item(loader *ld, yaml_event_type_t end, yaml_event_t *ev)
{
    if (next_event(ld, ev) != 0)
        return -1;
    if (ev->type != end)
        return 0;
    yaml_event_delete(ev);
    return 1;
}

/* Reads and builds the next node; *mark (if set) gets where it starts. */
static int build_next(loader *ld, int depth, json_t **out, yaml_mark_t *mark)
{
    yaml_event_t ev;
    int rc;

    if (next_event(ld, &ev) != 0)
        return -1;
    if (mark)
        *mark = ev.start_mark;
    rc = build_node(ld, &ev, depth, out);
    yaml_event_delete(&ev);
    return rc;
}

static int build_scalar(loader *ld, const yaml_event_t *ev, json_t **out)
{
    kh__yaml_kind k = KH__YAML_STRING;

    if (count_nodes(ld, 1, ev->start_mark) != 0)
        return -1;
    if (ev->data.scalar.tag) {
        if (tagged_kind(ld, ev, &k) != 0)
            return -1;
    } else if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        k = kh__yaml_classify((const char *)ev->data.scalar.value, ev->data.scalar.length);
    }
    return make_scalar(ld, ev, k, out);
}

static int build_alias(loader *ld, const yaml_event_t *ev, json_t **out)
{
    const char *name = (const char *)ev->data.alias.anchor;
    const anchor *a = anchor_find(ld, name);

    /* An alias inside its own anchor's node also lands here: the anchor is
     * only registered once its node is complete, so no cycles. */
    if (!a)
        return fail_at(ld, ev->start_mark, "unknown anchor '%s'", name);
    if (count_nodes(ld, a->nodes, ev->start_mark) != 0)
        return -1;
    *out = json_deep_copy(a->value);
    return *out ? 0 : fail_oom(ld);
}

static int enter_collection(loader *ld, const yaml_event_t *ev, int depth, json_t *coll)
{
    if (!coll)
        return fail_oom(ld);
    if (depth > KH_YAML_MAX_DEPTH)
        return fail_at(ld, ev->start_mark, "nesting deeper than %d", KH_YAML_MAX_DEPTH);
    return count_nodes(ld, 1, ev->start_mark);
}

static int build_sequence(loader *ld, const yaml_event_t *ev, int depth, json_t **out)
{
    json_t *arr = json_array();
    yaml_event_t item;
    int r;

    if (enter_collection(ld, ev, depth, arr) != 0)
        goto fail;
    while ((r = next_item(ld, YAML_SEQUENCE_END_EVENT, &item)) == 0) {
        json_t *v = NULL;
        int rc = build_node(ld, &item, depth, &v);
        if (rc == 0 && mark_value(ld, v, item.start_mark) != 0) {
            json_decref(v);
            rc = -1;
        }
        yaml_event_delete(&item);
        if (rc != 0)
            goto fail;
        if (json_array_append_new(arr, v) != 0) {
            fail_oom(ld);
            goto fail;
        }
    }
    if (r < 0)
        goto fail;
    *out = arr;
    return 0;
fail:
    json_decref(arr);
    return -1;
}

static int is_merge_key(const yaml_event_t *ev)
{
    const char *tag;

    if (ev->type != YAML_SCALAR_EVENT)
        return 0;
    tag = (const char *)ev->data.scalar.tag;
    if (tag)
        return strcmp(tag, TAG_PREFIX "merge") == 0;
    return ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && ev->data.scalar.length == 2 &&
           memcmp(ev->data.scalar.value, "<<", 2) == 0;
}

/* Queues the value of a '<<' key: a mapping or a sequence of mappings. */
static int add_merge(loader *ld, json_t *merges, json_t *v, yaml_mark_t mark)
{
    size_t i;
    json_t *item;

    if (json_is_object(v))
        return json_array_append(merges, v) == 0 ? 0 : fail_oom(ld);
    if (!json_is_array(v))
        goto bad;
    json_array_foreach(v, i, item)
    {
        if (!json_is_object(item))
            goto bad;
    }
    return json_array_extend(merges, v) == 0 ? 0 : fail_oom(ld);
bad:
    return fail_at(ld, mark, "'<<' needs a mapping or a sequence of mappings");
}

/* Keys of the mapping itself win over merged ones, and earlier merged
 * mappings over later ones, whatever the order in the text. */
static int apply_merges(loader *ld, json_t *obj, json_t *merges)
{
    size_t i;
    json_t *src;

    json_array_foreach(merges, i, src)
    {
        for (void *it = json_object_iter(src); it; it = json_object_iter_next(src, it)) {
            const char *k = json_object_iter_key(it);
            size_t klen = json_object_iter_key_len(it);
            if (json_object_getn(obj, k, klen))
                continue;
            if (json_object_setn(obj, k, klen, json_object_iter_value(it)) != 0)
                return fail_oom(ld);
        }
    }
    return 0;
}

/* JSON keys are strings: scalar keys are written out the way sigs.k8s.io/yaml
 * does (1 -> "1", true -> "true"). key is a scalar. */
static json_t *key_string(json_t *key)
{
    char buf[32];

    switch (json_typeof(key)) {
    case JSON_STRING:
        return json_incref(key);
    case JSON_INTEGER:
        return json_sprintf("%" JSON_INTEGER_FORMAT, json_integer_value(key));
    case JSON_REAL:
        kh__yaml_format_real(json_real_value(key), buf, sizeof buf);
        return json_string(buf);
    case JSON_TRUE:
        return json_string("true");
    case JSON_FALSE:
        return json_string("false");
    default:
        return json_string("null");
    }
}

/* Builds the key that starts with *kev and the value after it into obj. */
static int build_pair(loader *ld, const yaml_event_t *kev, int depth, json_t *obj)
{
    json_t *key = NULL, *text = NULL, *v = NULL, *old;
    yaml_mark_t mark;
    int rc = -1;

    if (build_node(ld, kev, depth, &key) != 0)
        return -1;
    if (json_is_object(key) || json_is_array(key)) {
        fail_at(ld, kev->start_mark, "mapping keys must be scalars");
        goto out;
    }
    text = key_string(key);
    if (!text) {
        fail_oom(ld);
        goto out;
    }
    if (build_next(ld, depth, &v, &mark) != 0)
        goto out;
    if (mark_value(ld, v, mark) != 0) {
        json_decref(v);
        goto out;
    }
    /* A repeated key replaces the earlier value, as in go-yaml v2. */
    old = json_object_getn(obj, json_string_value(text), json_string_length(text));
    if (ld->marks && old && marks_forget(ld->marks, old) != 0) {
        json_decref(v);
        fail_oom(ld);
        goto out;
    }
    rc = json_object_setn_new(obj, json_string_value(text), json_string_length(text), v);
    if (rc != 0)
        fail_oom(ld);
out:
    json_decref(key);
    json_decref(text);
    return rc;
}

static int build_entry(loader *ld, const yaml_event_t *kev, int depth, json_t *obj, json_t *merges)
{
    json_t *v = NULL;
    yaml_mark_t mark;
    int rc;

    if (!is_merge_key(kev))
        return build_pair(ld, kev, depth, obj);
    if (build_next(ld, depth, &v, &mark) != 0)
        return -1;
    rc = add_merge(ld, merges, v, mark);
    json_decref(v);
    return rc;
}

static int build_mapping(loader *ld, const yaml_event_t *ev, int depth, json_t **out)
{
    json_t *obj = json_object(), *merges = json_array();
    yaml_event_t kev;
    int r;

    if (!merges) {
        fail_oom(ld);
        goto fail;
    }
    if (enter_collection(ld, ev, depth, obj) != 0)
        goto fail;
    while ((r = next_item(ld, YAML_MAPPING_END_EVENT, &kev)) == 0) {
        int rc = build_entry(ld, &kev, depth, obj, merges);
        yaml_event_delete(&kev);
        if (rc != 0)
            goto fail;
    }
    if (r < 0 || apply_merges(ld, obj, merges) != 0)
        goto fail;
    json_decref(merges);
    *out = obj;
    return 0;
fail:
    json_decref(merges);
    json_decref(obj);
    return -1;
}

static int build_kind(loader *ld, const yaml_event_t *ev, int depth, json_t **out)
{
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        return build_alias(ld, ev, out);
    case YAML_SCALAR_EVENT:
        return build_scalar(ld, ev, out);
    case YAML_SEQUENCE_START_EVENT:
        return build_sequence(ld, ev, depth + 1, out);
    case YAML_MAPPING_START_EVENT:
        return build_mapping(ld, ev, depth + 1, out);
    default:
        return fail_at(ld, ev->start_mark, "unexpected YAML event %d", (int)ev->type);
    }
}

/* Builds the node that starts with *ev (still the caller's to delete) and
 * the nodes after it that belong to it; registers its anchor. */
static int build_node(loader *ld, const yaml_event_t *ev, int depth, json_t **out)
{
    size_t before = ld->nodes;
    const char *name = event_anchor(ev);

    if (build_kind(ld, ev, depth, out) != 0)
        return -1;
    if (name && anchor_add(ld, name, *out, ld->nodes - before) != 0) {
        json_decref(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* ---- streams ---- */

static int is_empty_document(const yaml_event_t *root)
{
    return root->type == YAML_SCALAR_EVENT && !root->data.scalar.tag &&
           root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && root->data.scalar.length == 0;
}

/* Called after DOCUMENT_START; reads the root node, leaves DOCUMENT_END. */
static int load_document(loader *ld, json_t *docs)
{
    yaml_event_t root;
    json_t *v = NULL;
    int rc, empty;

    anchors_clear(ld); /* anchors never reach across documents */
    if (next_event(ld, &root) != 0)
        return -1;
    empty = is_empty_document(&root);
    rc = build_node(ld, &root, 0, &v);
    if (rc == 0 && !empty && mark_value(ld, v, root.start_mark) != 0) {
        json_decref(v);
        rc = -1;
    }
    yaml_event_delete(&root);
    if (rc != 0)
        return -1;
    if (empty) {
        json_decref(v);
        return 0;
    }
    return json_array_append_new(docs, v) == 0 ? 0 : fail_oom(ld);
}

static int load_stream(loader *ld, json_t *docs)
{
    for (;;) {
        yaml_event_t ev;
        yaml_event_type_t type;

        if (next_event(ld, &ev) != 0)
            return -1;
        type = ev.type;
        yaml_event_delete(&ev);
        if (type == YAML_STREAM_END_EVENT)
            return 0;
        if (type == YAML_DOCUMENT_START_EVENT && load_document(ld, docs) != 0)
            return -1;
    }
}

static int load_yaml(const char *text, size_t len, json_t **docs, kh_yaml_marks *marks,
                     kh_yaml_error *err)
{
    loader ld = {.text = text, .len = len, .err = err, .marks = marks};
    json_t *out = json_array();
    int rc = -1;

    if (!out || !yaml_parser_initialize(&ld.parser)) {
        json_decref(out);
        return set_error(err, 0, 0, "out of memory");
    }
    yaml_parser_set_input_string(&ld.parser, (const unsigned char *)text, len);
    rc = load_stream(&ld, out);
    anchors_clear(&ld);
    free(ld.anchors);
    yaml_parser_delete(&ld.parser);
    if (rc != 0) {
        json_decref(out);
        return -1;
    }
    *docs = out;
    return 0;
}

/* ---- JSON streams ---- */

static size_t skip_space(const char *text, size_t len, size_t pos)
{
    while (pos < len && strchr(" \t\r\n", text[pos]) && text[pos] != '\0')
        pos++;
    return pos;
}

/* Holds JSON to the limits YAML input has; 0 if beyond them. */
static int within_limits(json_t *v, int depth, size_t *nodes)
{
    size_t i;
    json_t *item;
    const char *key;

    if (++*nodes > KH_YAML_MAX_NODES || depth > KH_YAML_MAX_DEPTH)
        return 0;
    json_array_foreach(v, i, item)
    {
        if (!within_limits(item, depth + 1, nodes))
            return 0;
    }
    json_object_foreach(v, key, item)
    {
        if (!within_limits(item, depth + 1, nodes))
            return 0;
    }
    return 1;
}

/* One or more JSON objects or arrays, with only whitespace between them. */
static int load_json_stream(const char *text, size_t len, json_t **docs)
{
    json_t *out = json_array();
    size_t pos = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    size_t nodes = 0;

    pos = skip_space(text, len, pos);
    if (!out || len > INT_MAX || pos == len)
        goto fail;
    while (pos < len) {
        json_error_t jerr;
        json_t *v = NULL;
        if (text[pos] == '{' || text[pos] == '[')
            v = json_loadb(text + pos, len - pos, JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL, &jerr);
        if (v && !within_limits(v, 1, &nodes)) {
            json_decref(v);
            v = NULL;
        }
        if (!v || json_array_append_new(out, v) != 0)
            goto fail;
        /* With JSON_DISABLE_EOF_CHECK jansson reports the bytes it used. */
        pos = skip_space(text, len, pos + (size_t)jerr.position);
    }
    *docs = out;
    return 0;
fail:
    json_decref(out);
    return -1;
}

/* ---- public: loading ---- */

int kh_yaml_load(const char *text, size_t len, json_t **docs, kh_yaml_error *err)
{
    return kh_yaml_load_marked(text, len, docs, NULL, err);
}

/* JSON input, read again by the YAML loader for positions; keeps the YAML
 * values only when they are the JSON ones. Takes json_docs. */
static int with_positions(const char *text, size_t len, json_t *json_docs, json_t **docs,
                          kh_yaml_marks *marks)
{
    json_t *yaml_docs = NULL;

    if (load_yaml(text, len, &yaml_docs, marks, NULL) == 0 && json_equal(yaml_docs, json_docs)) {
        json_decref(json_docs);
        *docs = yaml_docs;
        return 0;
    }
    json_decref(yaml_docs);
    free(marks->slots); /* nothing in it is valid for json_docs */
    *marks = (kh_yaml_marks){NULL, 0, 0};
    *docs = json_docs;
    return 0;
}

int kh_yaml_load_marked(const char *text, size_t len, json_t **docs, kh_yaml_marks **marks,
                        kh_yaml_error *err)
{
    kh_yaml_marks *m = NULL;
    json_t *out = NULL;
    int rc;

    if (!docs || (!text && len > 0))
        return set_error(err, 0, 0, "invalid argument");
    if (!text)
        text = "";
    if (marks) {
        m = calloc(1, sizeof *m);
        if (!m)
            return set_error(err, 0, 0, "out of memory");
    }
    if (load_json_stream(text, len, &out) == 0)
        rc = m ? with_positions(text, len, out, &out, m) : 0;
    else
        rc = load_yaml(text, len, &out, m, err);
    if (rc != 0) {
        kh_yaml_marks_free(m);
        return -1;
    }
    *docs = out;
    if (marks)
        *marks = m;
    return 0;
}

int kh_yaml_mark_line(const kh_yaml_marks *m, const json_t *node)
{
    if (!m || !node || m->cap == 0)
        return 0;
    return mark_find(m, node)->line;
}

void kh_yaml_marks_free(kh_yaml_marks *m)
{
    if (!m)
        return;
    free(m->slots);
    free(m);
}

static int errno_error(kh_yaml_error *err, const char *path, int errnum)
{
    char buf[128];

    return set_error(err, 0, 0, "%s: %s", path, strerror_r(errnum, buf, sizeof buf));
}

static int too_big(kh_yaml_error *err, const char *path)
{
    return set_error(err, 0, 0, "%s: larger than %d bytes", path, KH_YAML_MAX_FILE_SIZE);
}

/* Grows *buf for more bytes; the cap is one past the limit so a file of
 * exactly the limit still reads to EOF. */
static int grow(char **buf, size_t *cap)
{
    size_t want = *cap ? *cap * 2 : 64 * 1024;
    char *p;

    if (want > (size_t)KH_YAML_MAX_FILE_SIZE + 1)
        want = (size_t)KH_YAML_MAX_FILE_SIZE + 1;
    p = realloc(*buf, want);
    if (!p)
        return -1;
    *buf = p;
    *cap = want;
    return 0;
}

static int read_stream(FILE *f, const char *path, char **out, size_t *out_len, kh_yaml_error *err)
{
    char *buf = NULL;
    size_t len = 0, cap = 0, n;

    do {
        if (len == cap && len > (size_t)KH_YAML_MAX_FILE_SIZE) {
            free(buf);
            return too_big(err, path);
        }
        if (len == cap && grow(&buf, &cap) != 0) {
            free(buf);
            return set_error(err, 0, 0, "out of memory");
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    if (ferror(f)) {
        free(buf);
        return errno_error(err, path, errno ? errno : EIO);
    }
    *out = buf;
    *out_len = len;
    return 0;
}

int kh_yaml_load_file(const char *path, json_t **docs, kh_yaml_error *err)
{
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    int rc;

    if (!path || !docs)
        return set_error(err, 0, 0, "invalid argument");
    f = fopen(path, "rbe"); /* e: close-on-exec, for servers that fork */
    if (!f)
        return errno_error(err, path, errno);
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > KH_YAML_MAX_FILE_SIZE)
        rc = too_big(err, path);
    else
        rc = read_stream(f, path, &buf, &len, err);
    fclose(f);
    if (rc != 0)
        return -1;
    rc = kh_yaml_load(buf ? buf : "", len, docs, err);
    free(buf);
    return rc;
}
