/*
 * verbs_read.c - get and list.
 *
 * Lists are served from stored JSON text: items are concatenated, never
 * parsed and re-serialised, unless a field selector or a Table asks for the
 * parsed object. Label selectors read only the stored labels column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discovery.h"
#include "kh/jsonfast.h"
#include "objmeta.h"
#include "selector.h"
#include "snapshot.h"
#include "strbuf.h"
#include "table.h"
#include "fault.h"
#include "verbs.h"
#include "watch.h"
#include "accept.h"
#include "convert.h"

#define LIST_MAX_BYTES ((size_t)1 << 31)

/* Answer with a Table for obj (array of items) when the client asked for one. */
static bool want_table(const fakeapi__ctx *c)
{
    return fakeapi__accept_pick(c->req->accept) == FAKEAPI__AS_TABLE;
}

/*
 * Answer a Table of items (borrowed) with the rows' objects as
 * ?includeObject= says (400 for a value the real server refuses).
 */
static void table_answer(fakeapi__ctx *c, json_t *items, const char *rv, const char *cont)
{
    fakeapi__table_include inc;
    const char *v = fakeapi__q(c->req, "includeObject");
    if (fakeapi__table_include_parse(v, &inc) < 0) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "Unsupported value: \"%s\": supported values: \"Metadata\", \"None\", "
                            "\"Object\"",
                            v);
        return;
    }
    fakeapi__resp_json(c->resp, 200,
                       fakeapi__table_new_incl(c->res, items, rv, cont, fakeapi__srv_now(c->srv),
                                               inc));
    c->resp->content_type = "application/json;as=Table;v=v1;g=meta.k8s.io";
}

/* Metadata only (client-go's metadata client): PartialObjectMetadata. */
static bool want_partial(const fakeapi__ctx *c)
{
    return fakeapi__accept_pick(c->req->accept) == FAKEAPI__AS_PARTIAL;
}


/* Objects are read through the version asked for (multi-version CRDs, HPA v1). */
static json_t *as_version(const fakeapi__ctx *c, json_t *obj)
{
    fakeapi__convert_out(c->res, obj);
    return obj;
}

/* The revision a stale-view fault serves this request at, or 0 for now.
 * Called with the store lock held. */
static uint64_t stale_rev(const fakeapi__ctx *c)
{
    const fakeapi__fault_plan *p = c->req->plan;
    return p && (p->stale_rv || p->stale_lag)
               ? fakeapi__stale_rev(c->srv->store, p->stale_rv, p->stale_lag)
               : 0;
}

void fakeapi__do_get(fakeapi__ctx *c)
{
    char *text = NULL;
    size_t len = 0;
    fakeapi__store_lock(c->srv->store);
    /* A stale-view fault serves the object as it was at an older revision. */
    uint64_t stale = stale_rev(c);
    int rc = stale ? fakeapi__snapshot_get(c->srv->store, c->res->store_key, c->ns, c->rt->name,
                                           stale, &text, &len)
                   : fakeapi__store_get_text(c->srv->store, c->res->store_key, c->ns, c->rt->name,
                                             &text, &len);
    fakeapi__store_unlock(c->srv->store);
    if (rc == 1) {
        fakeapi__not_found(c, c->rt->name);
        return;
    }
    if (rc < 0) {
        fakeapi__storage_error(c);
        return;
    }
    bool partial = want_partial(c);
    if (!want_table(c) && !partial && !c->res->custom && c->res->storage_version) {
        fakeapi__resp_take(c->resp, 200, text, len);
        return;
    }
    json_t *obj = kh_json_loadb(text, len, 0, NULL);
    free(text);
    if (!obj) {
        fakeapi__storage_error(c);
        return;
    }
    as_version(c, obj);
    if (partial) {
        fakeapi__resp_json(c->resp, 200, fakeapi__partial_of(obj));
        c->resp->content_type = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io";
        json_decref(obj);
        return;
    }
    if (want_table(c)) {
        json_t *items = json_pack("[o]", obj);
        table_answer(c, items, fakeapi__meta_str(obj, "resourceVersion"), NULL);
        json_decref(items);
        return;
    }
    fakeapi__resp_json(c->resp, 200, obj);
}

/* A continue token: hex of "<rv>\n<namespace>\n<name>". Opaque to clients. */
static char *token_encode(uint64_t rv, const char *ns, const char *name)
{
    char raw[1024];
    int n = snprintf(raw, sizeof raw, "%llu\n%s\n%s", (unsigned long long)rv, ns, name);
    if (n < 0 || (size_t)n >= sizeof raw)
        return NULL;
    char *out = malloc((size_t)n * 2 + 1);
    for (int i = 0; out && i < n; i++)
        sprintf(out + i * 2, "%02x", (unsigned char)raw[i]);
    return out;
}

static int token_decode(const char *tok, uint64_t *rv, char *ns, char *name, size_t cap)
{
    size_t n = strlen(tok);
    char raw[1024];
    if (n % 2 || n / 2 >= sizeof raw)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(tok + i * 2, "%2x", &v) != 1)
            return -1;
        raw[i] = (char)v;
    }
    raw[n / 2] = '\0';
    char *a = strchr(raw, '\n'), *b = a ? strchr(a + 1, '\n') : NULL;
    if (!a || !b || (size_t)(b - a) > cap || strlen(b + 1) >= cap)
        return -1;
    *a = *b = '\0';
    char *end;
    *rv = strtoull(raw, &end, 10);
    if (*end || !*raw)
        return -1;
    strcpy(ns, a + 1);
    strcpy(name, b + 1);
    return 0;
}

typedef struct list_state {
    fakeapi__ctx *c;
    fakeapi__labelsel *lsel;
    fakeapi__fieldsel *fsel;
    long long limit; /* 0 = no limit */
    long long count;
    bool more; /* one more item exists past the limit */
    char last_ns[256], last_name[256];
    fakeapi__strbuf buf; /* items joined by ',' */
    json_t *parsed;      /* items as objects, when a Table was asked for */
    bool partial;        /* items as PartialObjectMetadata */
} list_state;

static int list_visit(void *ud, const char *ns, const char *name, const char *labels,
                      const char *text, size_t len)
{
    list_state *ls = ud;
    if (!fakeapi__labelsel_empty(ls->lsel)) {
        json_t *l = labels ? json_loads(labels, 0, NULL) : NULL;
        bool ok = fakeapi__labelsel_match(ls->lsel, l);
        json_decref(l);
        if (!ok)
            return 0;
    }
    json_t *obj = NULL;
    if (!fakeapi__fieldsel_empty(ls->fsel) || ls->parsed || ls->partial || ls->c->res->custom ||
        !ls->c->res->storage_version) {
        obj = kh_json_loadb(text, len, 0, NULL);
        if (!obj)
            return -1;
        if (!fakeapi__fieldsel_match(ls->fsel, obj)) {
            json_decref(obj);
            return 0;
        }
    }
    if (ls->limit && ls->count == ls->limit) {
        json_decref(obj);
        ls->more = true;
        return 1;
    }
    ls->count++;
    snprintf(ls->last_ns, sizeof ls->last_ns, "%s", ns);
    snprintf(ls->last_name, sizeof ls->last_name, "%s", name);
    if (ls->parsed) {
        json_array_append_new(ls->parsed, as_version(ls->c, obj));
        return 0;
    }
    if (ls->buf.len)
        fakeapi__strbuf_add(&ls->buf, ",", 1);
    if (obj && ls->partial) {
        json_t *p = fakeapi__partial_of(obj);
        json_decref(obj);
        obj = p;
    }
    if (obj) {
        char *t = json_dumps(ls->partial ? obj : as_version(ls->c, obj), JSON_COMPACT);
        json_decref(obj);
        if (!t)
            return -1;
        fakeapi__strbuf_adds(&ls->buf, t);
        free(t);
    } else {
        fakeapi__strbuf_add(&ls->buf, text, len);
    }
    return ls->buf.failed ? -1 : 0;
}

/* Parse selectors and paging; answers 400 itself. */
static int list_options(fakeapi__ctx *c, list_state *ls)
{
    char err[512];
    if (fakeapi__labelsel_parse(fakeapi__q(c->req, "labelSelector"), &ls->lsel, err, sizeof err) <
        0) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "%s", err);
        return -1;
    }
    if (fakeapi__fieldsel_parse(fakeapi__q(c->req, "fieldSelector"), &ls->fsel, err, sizeof err) <
        0) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "%s", err);
        return -1;
    }
    if (fakeapi__fieldsel_check_res(c->res, ls->fsel, err, sizeof err) < 0) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "%s", err);
        return -1;
    }
    ls->limit = fakeapi__q_int(c->req, "limit", 0);
    if (ls->limit < 0) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "invalid limit: %s",
                            fakeapi__q(c->req, "limit"));
        return -1;
    }
    return 0;
}

/* resourceVersion on a list: "", "0", or N (not older than N). */
/* The revision a list is served at: the store's, or the one asked for
 * exactly (0 = now). Returns -1 having answered an error. */
static int check_list_rv(fakeapi__ctx *c, uint64_t now, const char *cont, uint64_t *at)
{
    *at = 0;
    const char *rv = fakeapi__q(c->req, "resourceVersion");
    if (!rv || !*rv || !strcmp(rv, "0"))
        return 0;
    char *end;
    unsigned long long n = strtoull(rv, &end, 10);
    if (*end) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "invalid resource version: %s", rv);
        return -1;
    }
    if (cont) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "specifying resource version is not allowed when using continue");
        return -1;
    }
    const char *match = fakeapi__q(c->req, "resourceVersionMatch");
    if (match && !strcmp(match, "Exact") && n != now) {
        *at = n;
        if (n < fakeapi__store_compacted(c->srv->store)) {
            fakeapi__resp_error(c->resp, 410, "Expired", NULL,
                                "too old resource version: %llu (%llu)", n,
                                (unsigned long long)fakeapi__store_compacted(c->srv->store) + 1);
            return -1;
        }
    }
    if (n > now) {
        fakeapi__resp_error(
            c->resp, 504, "Timeout",
            json_pack("{s:[{s:s, s:s}], s:i}", "causes", "reason", "ResourceVersionTooLarge",
                      "message", "Too large resource version", "retryAfterSeconds", 1),
            "Too large resource version: %llu, current: %llu", n, (unsigned long long)now);
        return -1;
    }
    return 0;
}

static void list_answer(fakeapi__ctx *c, list_state *ls, uint64_t rv)
{
    char *cont = ls->more ? token_encode(rv, ls->last_ns, ls->last_name) : NULL;
    char rvs[24];
    snprintf(rvs, sizeof rvs, "%llu", (unsigned long long)rv);
    if (ls->parsed) {
        table_answer(c, ls->parsed, rvs, cont);
        free(cont);
        return;
    }
    fakeapi__strbuf out = {.max = LIST_MAX_BYTES};
    fakeapi__strbuf_addf(&out,
                         "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":"
                         "\"%s\"",
                         ls->partial ? "PartialObjectMetadataList" : c->res->list_kind,
                         ls->partial ? "meta.k8s.io/v1" : c->res->group_version, rvs);
    if (cont)
        fakeapi__strbuf_addf(&out, ",\"continue\":\"%s\"", cont);
    fakeapi__strbuf_adds(&out, "},\"items\":[");
    free(cont);
    /*
     * Put the header in front of the items in place rather than copying the
     * items after it: a list of 10,000 objects is 11 MB, and a second buffer
     * that size costs a copy and ~2,800 page faults (half the list's time).
     */
    size_t hlen = out.len;
    if (!out.failed) {
        fakeapi__strbuf_add(&ls->buf, "]}", 2);
        fakeapi__strbuf_add(&ls->buf, out.data, hlen); /* room for the header */
    }
    if (out.failed || ls->buf.failed) {
        fakeapi__strbuf_deinit(&out);
        fakeapi__resp_error(c->resp, 500, "InternalError", NULL, "list too large");
        return;
    }
    memmove(ls->buf.data + hlen, ls->buf.data, ls->buf.len - hlen);
    memcpy(ls->buf.data, out.data, hlen);
    fakeapi__strbuf_deinit(&out);
    size_t len;
    char *body = fakeapi__strbuf_take(&ls->buf, &len);
    fakeapi__resp_take(c->resp, 200, body, len);
    if (ls->partial)
        c->resp->content_type = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io";
}

void fakeapi__do_list(fakeapi__ctx *c)
{
    if (fakeapi__q_bool(c->req, "watch")) {
        fakeapi__watch_start(c->srv, c->req, c->res, c->ns, c->resp);
        return;
    }
    list_state ls = {.c = c, .buf = {.max = LIST_MAX_BYTES}};
    const char *cont = fakeapi__q(c->req, "continue");
    if (cont && !*cont)
        cont = NULL;
    if (list_options(c, &ls) < 0)
        goto out;
    if (want_table(c))
        ls.parsed = json_array();
    ls.partial = want_partial(c);
    uint64_t tok_rv = 0;
    char after_ns[256] = "", after_name[256] = "";
    if (cont && token_decode(cont, &tok_rv, after_ns, after_name, sizeof after_ns) < 0) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "continue key is not valid");
        goto out;
    }
    fakeapi__store_lock(c->srv->store);
    uint64_t now = fakeapi__store_rev(c->srv->store);
    uint64_t at = 0;
    if (check_list_rv(c, now, cont, &at) < 0) {
        fakeapi__store_unlock(c->srv->store);
        goto out;
    }
    if (cont && tok_rv < fakeapi__store_compacted(c->srv->store)) {
        fakeapi__store_unlock(c->srv->store);
        fakeapi__resp_error(c->resp, 410, "Expired", NULL,
                            "The provided continue parameter is too old to display a consistent "
                            "list result. You can start a new list without the continue "
                            "parameter.");
        goto out;
    }
    const char *ns = c->ns && *c->ns ? c->ns : (c->res->namespaced ? NULL : "");
    /* A stale-view fault: a fresh list (not an exact one, not a later page)
     * is served, and labelled, as of the older revision. */
    if (!cont && !at)
        at = stale_rev(c);
    /* An exact revision, or a later page of a list begun at an older one, is
     * served as of that revision, rebuilt from the history. */
    uint64_t as_of = cont ? tok_rv : at;
    int rc = as_of && as_of < now
                 ? fakeapi__snapshot_scan(c->srv->store, c->res->store_key, ns, as_of,
                                          cont ? after_ns : NULL, cont ? after_name : NULL,
                                          list_visit, &ls)
                 : fakeapi__store_scan(c->srv->store, c->res->store_key, ns, cont ? after_ns : NULL,
                                       cont ? after_name : NULL, list_visit, &ls);
    fakeapi__store_unlock(c->srv->store);
    if (rc < 0) {
        fakeapi__storage_error(c);
        goto out;
    }
    list_answer(c, &ls, cont ? tok_rv : (at ? at : now));
out:
    fakeapi__labelsel_free(ls.lsel);
    fakeapi__fieldsel_free(ls.fsel);
    fakeapi__strbuf_deinit(&ls.buf);
    json_decref(ls.parsed);
}
