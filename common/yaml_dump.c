/*
 * yaml_dump.c - a jansson value as a YAML document, on libyaml's emitter:
 * block style, two-space indent, lines never folded, and every string that
 * a YAML 1.1 or 1.2 reader could take for something else double-quoted, so
 * that the text loads back (here, with kubectl or go-yaml) as the same
 * values.
 */
#include "kh/yaml.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "yaml_scalar.h"

#define MAX_DUMP ((size_t)1 << 30)

typedef struct outbuf {
    char *data;
    size_t len;
    size_t cap;
} outbuf;

static int write_out(void *data, unsigned char *bytes, size_t size)
{
    outbuf *out = data;

    if (size > MAX_DUMP - out->len)
        return 0;
    if (out->len + size + 1 > out->cap) {
        size_t cap = out->cap ? out->cap : 256;
        char *p;
        while (cap < out->len + size + 1)
            cap *= 2;
        p = realloc(out->data, cap);
        if (!p)
            return 0;
        out->data = p;
        out->cap = cap;
    }
    memcpy(out->data + out->len, bytes, size);
    out->len += size;
    out->data[out->len] = '\0';
    return 1;
}

/* Plain text that a YAML reader (this one, or a YAML 1.1 one such as
 * go-yaml v2) could take for something other than this string. */
static int needs_quotes(const char *s, size_t n)
{
    static const char *const yaml11_words[] = {"y", "Y", "n", "N", "<<", NULL};
    size_t i = 0;

    if (kh__yaml_classify(s, n) != KH__YAML_STRING || kh__yaml_is_one_of(s, n, yaml11_words))
        return 1;
    if (n > 1 && (s[0] == '+' || s[0] == '-' || s[0] == '.'))
        i = 1;
    /* 1_000, 0b101, 1:30, 2024-01-01: numbers or timestamps to YAML 1.1. */
    return i < n && s[i] >= '0' && s[i] <= '9';
}

static int emit_scalar(yaml_emitter_t *em, const char *s, size_t n, yaml_scalar_style_t style)
{
    yaml_event_t ev;

    if (n > INT_MAX ||
        !yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)n, 1, 1, style))
        return 0;
    return yaml_emitter_emit(em, &ev);
}

static int emit_string(yaml_emitter_t *em, const char *s, size_t n)
{
    yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;

    if (needs_quotes(s, n))
        style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    else if (memchr(s, '\n', n))
        style = YAML_LITERAL_SCALAR_STYLE; /* the emitter falls back if it must */
    return emit_scalar(em, s, n, style);
}

static int emit_value(yaml_emitter_t *em, const json_t *v, int depth);

/* jansson's iterators take non-const pointers though they do not modify. */
static int emit_object(yaml_emitter_t *em, const json_t *v, int depth)
{
    json_t *obj = (json_t *)v;
    yaml_event_t ev;

    if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
        !yaml_emitter_emit(em, &ev))
        return 0;
    for (void *it = json_object_iter(obj); it; it = json_object_iter_next(obj, it)) {
        if (!emit_string(em, json_object_iter_key(it), json_object_iter_key_len(it)) ||
            !emit_value(em, json_object_iter_value(it), depth + 1))
            return 0;
    }
    return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev);
}

static int emit_array(yaml_emitter_t *em, const json_t *v, int depth)
{
    yaml_event_t ev;

    if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
        !yaml_emitter_emit(em, &ev))
        return 0;
    for (size_t i = 0; i < json_array_size(v); i++) {
        if (!emit_value(em, json_array_get(v, i), depth + 1))
            return 0;
    }
    return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev);
}

static int emit_value(yaml_emitter_t *em, const json_t *v, int depth)
{
    char buf[64];

    if (depth > KH_YAML_MAX_DEPTH)
        return 0;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return emit_object(em, v, depth);
    case JSON_ARRAY:
        return emit_array(em, v, depth);
    case JSON_STRING:
        return emit_string(em, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        kh__yaml_format_real(json_real_value(v), buf, sizeof buf);
        break;
    case JSON_TRUE:
        return emit_scalar(em, "true", 4, YAML_PLAIN_SCALAR_STYLE);
    case JSON_FALSE:
        return emit_scalar(em, "false", 5, YAML_PLAIN_SCALAR_STYLE);
    default:
        return emit_scalar(em, "null", 4, YAML_PLAIN_SCALAR_STYLE);
    }
    return emit_scalar(em, buf, strlen(buf), YAML_PLAIN_SCALAR_STYLE);
}

static int emit_document(yaml_emitter_t *em, const json_t *value)
{
    yaml_event_t ev;

    if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) || !yaml_emitter_emit(em, &ev))
        return 0;
    if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) ||
        !yaml_emitter_emit(em, &ev))
        return 0;
    if (!emit_value(em, value, 0))
        return 0;
    if (!yaml_document_end_event_initialize(&ev, 1) || !yaml_emitter_emit(em, &ev))
        return 0;
    if (!yaml_stream_end_event_initialize(&ev) || !yaml_emitter_emit(em, &ev))
        return 0;
    return yaml_emitter_flush(em);
}

char *kh_yaml_dump(const json_t *value)
{
    yaml_emitter_t em;
    outbuf out = {NULL, 0, 0};
    int ok;

    if (!value || !yaml_emitter_initialize(&em))
        return NULL;
    yaml_emitter_set_output(&em, write_out, &out);
    yaml_emitter_set_indent(&em, 2);
    yaml_emitter_set_width(&em, -1); /* never fold long lines */
    yaml_emitter_set_unicode(&em, 1);
    ok = emit_document(&em, value);
    yaml_emitter_delete(&em);
    if (!ok) {
        free(out.data);
        return NULL;
    }
    return out.data ? out.data : strdup("");
}
