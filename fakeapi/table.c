/*
 * table.c - meta.k8s.io/v1 Table responses for `kubectl get`: the Table
 * document, the columns of custom resources (their additionalPrinterColumns,
 * evaluated with jsonpath.c), and Accept negotiation. The columns of built-in
 * kinds come from their printers (table_cols.h), chosen by group and kind.
 *
 * Failure handling: builders record allocation failures in a flag and the
 * whole table is dropped at the end.
 *
 * Thread-safety: reentrant; arguments are only read.
 */
#include "table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jsonpath.h"
#include "table_cols.h"

static void push(json_t *arr, json_t *v, bool *bad)
{
    if (!v || json_array_append_new(arr, v) != 0)
        *bad = true;
}

static void put(json_t *obj, const char *key, json_t *v, bool *bad)
{
    if (!v || json_object_set_new(obj, key, v) != 0)
        *bad = true;
}

/* ---- CRD printer columns --------------------------------------------------------- */

/* A JSON value as cell text: strings bare, others as compact JSON. */
static void value_text(const json_t *v, fakeapi__cellbuf *b)
{
    if (json_is_string(v)) {
        fakeapi__cb_add(b, json_string_value(v));
        return;
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (s)
        fakeapi__cb_add(b, s);
    free(s);
}

/* One CRD printer-column cell, typed like the CRD table convertor does it. */
static json_t *crd_cell(const json_t *obj, const json_t *col, int64_t now_ns)
{
    const char *type = json_string_value(json_object_get(col, "type"));
    json_t *res = fakeapi__jsonpath(obj, json_string_value(json_object_get(col, "jsonPath")));
    json_t *cell = NULL;
    const json_t *v = json_array_get(res, 0);
    if (!v || json_is_null(v)) {
        cell = json_null();
    } else if (!type || !strcmp(type, "string")) {
        fakeapi__cellbuf b;
        fakeapi__cb_init(&b);
        size_t i;
        const json_t *x;
        json_array_foreach(res, i, x)
        {
            if (i)
                fakeapi__cb_add(&b, ",");
            value_text(x, &b);
        }
        cell = json_string(b.s);
    } else if (!strcmp(type, "integer")) {
        cell = json_is_integer(v) ? json_integer(json_integer_value(v))
               : json_is_real(v)  ? json_integer((json_int_t)json_real_value(v))
                                  : json_null();
    } else if (!strcmp(type, "number")) {
        cell = json_is_number(v) ? json_real(json_number_value(v)) : json_null();
    } else if (!strcmp(type, "boolean")) {
        cell = json_is_boolean(v) ? json_boolean(json_is_true(v)) : json_null();
    } else if (!strcmp(type, "date")) {
        cell = json_is_string(v) ? fakeapi__since_cell(json_string_value(v), now_ns, "<unknown>")
                                 : json_null();
    } else {
        cell = json_null();
    }
    json_decref(res);
    return cell;
}

static json_t *coldef_json(const char *name, const char *type, const char *format,
                           json_int_t priority, const char *desc)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:I}", "name", name ? name : "", "type",
                     type ? type : "string", "format", format ? format : "", "description",
                     desc ? desc : "", "priority", priority);
}

/* A custom kind's column definitions and their cells; age_only: no columns declared. */
static void crd_defs(const json_t *cols, bool age_only, json_t *defs, bool *bad)
{
    push(defs, coldef_json("Name", "string", "name", 0, fakeapi__desc_name), bad);
    if (age_only) {
        push(defs, coldef_json("Age", "date", "", 0, fakeapi__desc_age), bad);
        return;
    }
    size_t i;
    const json_t *col;
    json_array_foreach(cols, i, col)
    {
        const char *path = json_string_value(json_object_get(col, "jsonPath"));
        const char *desc = json_string_value(json_object_get(col, "description"));
        char dflt[1100];
        if (!desc || !*desc) {
            snprintf(dflt, sizeof dflt,
                     "Custom resource definition column (in JSONPath format): %.1000s",
                     path ? path : "");
            desc = dflt;
        }
        push(defs,
             coldef_json(json_string_value(json_object_get(col, "name")),
                         json_string_value(json_object_get(col, "type")),
                         json_string_value(json_object_get(col, "format")),
                         json_integer_value(json_object_get(col, "priority")), desc),
             bad);
    }
}

/* ---- the table ------------------------------------------------------------------- */

/* Stable insertion sort of a (shallow-copied) array by cmp: lists are small, order is kept. */
static void sort_rows(json_t *arr, int (*cmp)(const json_t *, const json_t *))
{
    size_t n = json_array_size(arr);
    for (size_t i = 1; i < n; i++) {
        json_t *x = json_incref(json_array_get(arr, i));
        size_t j = i;
        while (j > 0 && cmp(json_array_get(arr, j - 1), x) > 0) {
            json_array_set(arr, j, json_array_get(arr, j - 1));
            j--;
        }
        json_array_set(arr, j, x);
        json_decref(x);
    }
}

static json_t *row_object(const json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    return json_pack("{s:s, s:s, s:O}", "kind", "PartialObjectMetadata", "apiVersion",
                     "meta.k8s.io/v1", "metadata", meta ? meta : json_object());
}

int fakeapi__table_include_parse(const char *v, fakeapi__table_include *out)
{
    static const struct {
        const char *name;
        fakeapi__table_include inc;
    } names[] = {{"", FAKEAPI__INCLUDE_METADATA},
                 {"Metadata", FAKEAPI__INCLUDE_METADATA},
                 {"None", FAKEAPI__INCLUDE_NONE},
                 {"Object", FAKEAPI__INCLUDE_OBJECT}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(v ? v : "", names[i].name)) {
            *out = names[i].inc;
            return 0;
        }
    return -1;
}

json_t *fakeapi__table_new(const fakeapi__resource *r, json_t *items, const char *list_rv,
                           const char *cont, int64_t now_ns)
{
    return fakeapi__table_new_incl(r, items, list_rv, cont, now_ns, FAKEAPI__INCLUDE_METADATA);
}

json_t *fakeapi__table_new_incl(const fakeapi__resource *r, json_t *items, const char *list_rv,
                                const char *cont, int64_t now_ns, fakeapi__table_include include)
{
    if (!r || !json_is_array(items))
        return NULL;
    bool bad = false;
    /* A CRD kind prints its declared columns; with none declared, Age alone. */
    const json_t *crd_cols = r->custom ? r->printer_columns : NULL;
    bool use_crd = json_array_size(crd_cols) > 0;
    const fakeapi__printer *pr = r->custom ? NULL : fakeapi__printer_find(r->group, r->kind);

    json_t *defs = json_array();
    if (!defs)
        return NULL;
    if (r->custom) {
        crd_defs(crd_cols, !use_crd, defs, &bad);
    } else {
        for (size_t c = 0; c < pr->ncols; c++)
            push(defs,
                 coldef_json(pr->cols[c].name, pr->cols[c].type, pr->cols[c].format,
                             pr->cols[c].priority, pr->cols[c].desc),
                 &bad);
    }

    /* Some printers order a list's rows (FlowSchemas by precedence); sort a copy. */
    json_t *order = NULL;
    if (pr && pr->row_order && json_array_size(items) > 1) {
        order = json_copy(items);
        if (!order)
            bad = true;
        else
            sort_rows(order, pr->row_order);
    }
    json_t *rows = json_array();
    size_t i;
    const json_t *obj;
    json_array_foreach(order ? order : items, i, obj)
    {
        json_t *cells = json_array();
        if (!cells) {
            bad = true;
            break;
        }
        if (r->custom) {
            push(cells, fakeapi__cell_name(obj, now_ns, NULL), &bad);
            size_t c;
            const json_t *col;
            if (use_crd)
                json_array_foreach(crd_cols, c, col) push(cells, crd_cell(obj, col, now_ns), &bad);
            else
                push(cells, fakeapi__cell_age(obj, now_ns, NULL), &bad);
        } else {
            for (size_t c = 0; c < pr->ncols; c++)
                push(cells, pr->cols[c].cell(obj, now_ns, pr->cols[c].arg), &bad);
        }
        json_t *row = json_pack("{s:o}", "cells", cells);
        if (row && include == FAKEAPI__INCLUDE_METADATA)
            put(row, "object", row_object(obj), &bad);
        else if (row && include == FAKEAPI__INCLUDE_OBJECT)
            put(row, "object", json_deep_copy(obj), &bad);
        json_t *conds = pr && pr->conditions ? pr->conditions(obj) : NULL;
        if (row && conds)
            put(row, "conditions", conds, &bad);
        else
            json_decref(conds);
        push(rows, row, &bad);
    }

    json_decref(order);
    json_t *meta = json_object();
    if (meta && list_rv)
        put(meta, "resourceVersion", json_string(list_rv), &bad);
    if (meta && cont && *cont)
        put(meta, "continue", json_string(cont), &bad);
    json_t *table =
        json_pack("{s:s, s:s, s:o, s:o, s:o}", "kind", "Table", "apiVersion", "meta.k8s.io/v1",
                  "metadata", meta, "columnDefinitions", defs, "rows", rows);
    if (bad || !table) {
        json_decref(table);
        return NULL;
    }
    return table;
}

/* ---- content negotiation ------------------------------------------------------------ */

static bool span_ieq(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && !strncasecmp(s, lit, n);
}

/* Trim spaces and tabs around [*s, *s + *n). */
static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

bool fakeapi__table_wanted(const char *accept)
{
    const char *p = accept;
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *range = p;
        p = end ? end + 1 : NULL;

        size_t tlen = strcspn(range, ";");
        if (tlen > len)
            tlen = len;
        const char *type = range;
        size_t tl = tlen;
        trim(&type, &tl);
        bool json_like = span_ieq(type, tl, "application/json") || span_ieq(type, tl, "*/*") ||
                         span_ieq(type, tl, "application/*");
        const char *as = NULL, *g = NULL, *v = NULL;
        size_t asl = 0, gl = 0, vl = 0;
        const char *q = range + tlen;
        const char *rend = range + len;
        while (q < rend) {
            q++; /* the ';' */
            const char *pe = memchr(q, ';', (size_t)(rend - q));
            size_t plen = pe ? (size_t)(pe - q) : (size_t)(rend - q);
            const char *eq = memchr(q, '=', plen);
            if (eq) {
                const char *key = q, *val = eq + 1;
                size_t kl = (size_t)(eq - q), vll = plen - kl - 1;
                trim(&key, &kl);
                trim(&val, &vll);
                if (span_ieq(key, kl, "as")) {
                    as = val;
                    asl = vll;
                } else if (span_ieq(key, kl, "g")) {
                    g = val;
                    gl = vll;
                } else if (span_ieq(key, kl, "v")) {
                    v = val;
                    vl = vll;
                }
            }
            q += plen;
        }
        if (!json_like)
            continue; /* protobuf, yaml, ...: not served, look further */
        if (!as)
            return false; /* plain JSON comes first */
        if (asl == 5 && !strncmp(as, "Table", 5) && g && span_ieq(g, gl, "meta.k8s.io") &&
            (!v || span_ieq(v, vl, "v1")))
            return true;
        /* v1beta1 Tables and other "as=" kinds: not produced here. */
    }
    return false;
}
