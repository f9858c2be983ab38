/*
 * typed.c - values under a schema, as structured-merge-diff's typed package
 * handles them: merge (an apply configuration into a live object, lists by
 * their type and in upstream's order), compare (the paths added, modified
 * and removed between two objects) and removal of a set's paths. See
 * typed.h. Pure functions: any thread.
 */
#include "typed.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 128

/* ---- list items ---- */

/* The elements of a list's items (lenient); NULL on ENOMEM. Free with free_pes. */
static fakeapi__pe *item_pes(const fakeapi__fptype *t, const fakeapi__fpnode *node,
                             const json_t *list, size_t *n)
{
    *n = json_array_size(list);
    fakeapi__pe *pes = calloc(*n ? *n : 1, sizeof *pes);
    char err[64];
    for (size_t i = 0; pes && i < *n; i++) {
        if (fakeapi__fp_list_item_pe(t, node, json_array_get(list, i), 0, &pes[i], err,
                                     sizeof err) < 0)
            fakeapi__pe_index(&pes[i], (long long)i); /* a non-object in a map list */
    }
    return pes;
}

static void free_pes(fakeapi__pe *pes, size_t n)
{
    for (size_t i = 0; pes && i < n; i++)
        fakeapi__pe_deinit(&pes[i]);
    free(pes);
}

static long find_pe(const fakeapi__pe *pes, size_t n, const fakeapi__pe *pe)
{
    for (size_t i = 0; i < n; i++)
        if (!fakeapi__pe_compare(&pes[i], pe))
            return (long)i;
    return -1;
}

static bool is_granular(const fakeapi__fpnode *node, const json_t *a, const json_t *b)
{
    if (node->kind == FAKEAPI__FPK_STRUCT || node->kind == FAKEAPI__FPK_MAP)
        return !node->atomic && (!a || json_is_object(a)) && (!b || json_is_object(b));
    if (node->kind == FAKEAPI__FPK_LIST)
        return node->list != FAKEAPI__FPL_ATOMIC && (!a || json_is_array(a)) &&
               (!b || json_is_array(b));
    return false;
}

/* ---- merge (typed.Merge) ---- */

static json_t *merge(const fakeapi__fptype *t, const json_t *lhs, const json_t *rhs, int depth);

static json_t *merge_list(const fakeapi__fptype *t, const fakeapi__fpnode *node, const json_t *lhs,
                          const json_t *rhs, int depth)
{
    size_t ln, rn;
    fakeapi__pe *lp = item_pes(t, node, lhs, &ln);
    fakeapi__pe *rp = item_pes(t, node, rhs, &rn);
    bool *done = calloc(rn ? rn : 1, sizeof *done);
    long *shared = calloc(rn ? rn : 1, sizeof *shared);
    json_t *out = json_array();
    fakeapi__fptype et;
    fakeapi__fptype_elem(t, &et);
    if (!lp || !rp || !done || !shared || !out)
        goto fail;
    /* The rhs items lhs has too, in rhs order: shared items follow that order. */
    size_t ns = 0, next = 0;
    for (size_t j = 0; j < rn; j++)
        if (find_pe(lp, ln, &rp[j]) >= 0)
            shared[ns++] = (long)j;
    const fakeapi__pe *want = ns ? &rp[shared[0]] : NULL;
    size_t li = 0, ri = 0;
    while (li < ln || ri < rn) {
        json_t *item = NULL;
        bool took = false;
        if (li < ln && ri < rn) {
            if (!fakeapi__pe_compare(&lp[li], &rp[ri])) {
                done[ri] = true;
                item = merge(&et, json_array_get(lhs, li), json_array_get(rhs, ri), depth + 1);
                li++;
                ri++;
                next++;
                want = next < ns ? &rp[shared[next]] : NULL;
                if (!item || json_array_append_new(out, item) < 0)
                    goto fail;
                continue;
            }
            long j = find_pe(rp, rn, &lp[li]);
            if (j >= 0 && want && fakeapi__pe_compare(want, &lp[li])) {
                li++; /* shared, but not the one whose turn it is */
                continue;
            }
        }
        if (li < ln) {
            long j = find_pe(rp, rn, &lp[li]);
            if (j < 0) {
                item = json_deep_copy(json_array_get(lhs, li));
                took = true;
            } else if (done[j]) {
                li++;
                continue;
            }
            if (took) {
                li++;
                if (!item || json_array_append_new(out, item) < 0)
                    goto fail;
                continue;
            }
        }
        if (ri < rn) {
            done[ri] = true;
            long l = find_pe(lp, ln, &rp[ri]);
            item = merge(&et, l >= 0 ? json_array_get(lhs, (size_t)l) : NULL,
                         json_array_get(rhs, ri), depth + 1);
            if (want && !fakeapi__pe_compare(want, &rp[ri])) {
                next++;
                want = next < ns ? &rp[shared[next]] : NULL;
            }
            ri++;
            if (!item || json_array_append_new(out, item) < 0)
                goto fail;
        }
    }
    free_pes(lp, ln);
    free_pes(rp, rn);
    free(done);
    free(shared);
    return out;
fail:
    free_pes(lp, ln);
    free_pes(rp, rn);
    free(done);
    free(shared);
    json_decref(out);
    return NULL;
}

static json_t *merge(const fakeapi__fptype *t, const json_t *lhs, const json_t *rhs, int depth)
{
    if (!rhs)
        return json_deep_copy(lhs);
    if (depth > MAX_DEPTH)
        return json_deep_copy(rhs);
    fakeapi__fpnode node;
    fakeapi__fptype_describe(t, rhs, &node);
    if (!is_granular(&node, lhs, rhs))
        return json_deep_copy(rhs);
    if (!lhs && json_is_object(rhs)) {
        /* A new granular object: merged into nothing, so its nulls go too. */
        json_t *none = json_object();
        json_t *out = none ? merge(t, none, rhs, depth) : NULL;
        json_decref(none);
        return out;
    }
    if (!lhs)
        return json_deep_copy(rhs);
    if (node.kind == FAKEAPI__FPK_LIST)
        return merge_list(t, &node, lhs, rhs, depth);
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)lhs, k, v)
    {
        json_t *r = json_object_get(rhs, k);
        json_t *m;
        if (json_is_null(r))
            continue; /* null in a configuration clears the field */
        if (r) {
            fakeapi__fptype ct;
            fakeapi__fptype_child(t, k, &ct);
            m = merge(&ct, v, r, depth + 1);
        } else {
            m = json_deep_copy(v);
        }
        if (!m || json_object_set_new(out, k, m) < 0)
            goto fail;
    }
    json_object_foreach((json_t *)rhs, k, v)
    {
        if (json_object_get(lhs, k) || json_is_null(v))
            continue;
        fakeapi__fptype ct;
        fakeapi__fptype_child(t, k, &ct);
        json_t *m = merge(&ct, NULL, v, depth + 1);
        if (!m || json_object_set_new(out, k, m) < 0)
            goto fail;
    }
    return out;
fail:
    json_decref(out);
    return NULL;
}

/* ---- compare (typed.Compare) ---- */

typedef struct cmp {
    fakeapi__pe path[MAX_DEPTH];
    size_t n;
    fakeapi__fpset *added, *modified, *removed;
    int rc;
    const fakeapi__typed_part *part; /* NULL: all of it */
} cmp;

/* Whether member k of the object at c->path is left out of the comparison. */
static bool cmp_skips(const cmp *c, const char *k)
{
    const fakeapi__typed_part *p = c->part;
    if (!p)
        return false;
    if (c->n == 0)
        return (p->only && strcmp(k, p->only)) || (p->skip && !strcmp(k, p->skip));
    return c->n == 1 && p->no_managed && c->path[0].kind == FAKEAPI__PE_FIELD &&
           !strcmp(c->path[0].name, "metadata") && !strcmp(k, "managedFields");
}

static void cmp_insert(cmp *c, fakeapi__fpset *s)
{
    if (c->n && fakeapi__fpset_insert(s, c->path, c->n) < 0)
        c->rc = -1;
}

/*
 * Compare a and b at c->path. add_always / remove_always: the parent itself
 * is absent from a / from b (or this is a list item), so even an implicit
 * container appearing or going is recorded.
 */
static void compare(cmp *c, const fakeapi__fptype *t, const json_t *a, const json_t *b,
                    bool add_always, bool remove_always);

static void compare_list(cmp *c, const fakeapi__fptype *t, const fakeapi__fpnode *node,
                         const json_t *a, const json_t *b)
{
    size_t an, bn;
    fakeapi__pe *ap = item_pes(t, node, a, &an);
    fakeapi__pe *bp = item_pes(t, node, b, &bn);
    fakeapi__fptype et;
    fakeapi__fptype_elem(t, &et);
    if (!ap || !bp) {
        c->rc = -1;
        goto out;
    }
    /* Every distinct element once: a's first, then b's new ones. */
    for (int side = 0; side < 2 && !c->rc; side++) {
        const fakeapi__pe *pes = side ? bp : ap;
        size_t n = side ? bn : an;
        for (size_t i = 0; i < n && !c->rc; i++) {
            if (find_pe(pes, i, &pes[i]) >= 0)
                continue; /* seen on this side */
            if (side && find_pe(ap, an, &pes[i]) >= 0)
                continue; /* handled with a's */
            long ia = find_pe(ap, an, &pes[i]), ib = find_pe(bp, bn, &pes[i]);
            size_t ca = 0, cb = 0;
            for (size_t k = 0; k < an; k++)
                ca += !fakeapi__pe_compare(&ap[k], &pes[i]);
            for (size_t k = 0; k < bn; k++)
                cb += !fakeapi__pe_compare(&bp[k], &pes[i]);
            if (c->n >= MAX_DEPTH)
                break;
            c->path[c->n++] = pes[i];
            const json_t *va = ia >= 0 ? json_array_get(a, (size_t)ia) : NULL;
            const json_t *vb = ib >= 0 ? json_array_get(b, (size_t)ib) : NULL;
            if (ca > 1 || cb > 1) {
                /* Duplicated items are compared whole. */
                if (!va)
                    cmp_insert(c, c->added);
                else if (!vb)
                    cmp_insert(c, c->removed);
                else if (ca != cb || !json_equal((json_t *)va, (json_t *)vb))
                    cmp_insert(c, c->modified);
            } else {
                compare(c, &et, va, vb, true, true);
            }
            c->n--;
        }
    }
out:
    free_pes(ap, an);
    free_pes(bp, bn);
}

static void compare(cmp *c, const fakeapi__fptype *t, const json_t *a, const json_t *b,
                    bool add_always, bool remove_always)
{
    if ((!a && !b) || c->rc)
        return;
    /* (A part of the root is compared whether or not the rest differs.) */
    if (a && b && !(c->part && c->n == 0) && json_equal((json_t *)a, (json_t *)b))
        return;
    fakeapi__fpnode node;
    fakeapi__fptype_describe(t, b ? b : a, &node);
    bool empty_a = !a || (json_is_object(a) && !json_object_size(a)) ||
                   (json_is_array(a) && !json_array_size(a)) || json_is_null(a);
    bool empty_b = !b || (json_is_object(b) && !json_object_size(b)) ||
                   (json_is_array(b) && !json_array_size(b)) || json_is_null(b);
    /*
     * An implicit value missing from a side whose parent is there (a Go value
     * struct, a list or map without omitempty) was there, empty: it is not
     * itself added or removed, and what is inside it is compared as usual.
     */
    bool a_there = a || (node.implicit && !add_always);
    bool b_there = b || (node.implicit && !remove_always);
    if (empty_a && empty_b && a_there && b_there)
        return;
    if (!is_granular(&node, a, b) || (empty_a && empty_b)) {
        if (!a)
            cmp_insert(c, c->added);
        else if (!b)
            cmp_insert(c, c->removed);
        else
            cmp_insert(c, c->modified);
        return;
    }
    if (node.kind == FAKEAPI__FPK_LIST) {
        compare_list(c, t, &node, a, b);
    } else {
        /* Keys of a, then keys only b has. */
        for (int side = 0; side < 2 && !c->rc; side++) {
            const json_t *o = side ? b : a;
            const char *k;
            json_t *v;
            json_object_foreach((json_t *)o, k, v)
            {
                if (side && a && json_object_get(a, k))
                    continue;
                if (cmp_skips(c, k))
                    continue;
                if (c->n >= MAX_DEPTH)
                    break;
                fakeapi__fptype ct;
                fakeapi__fptype_child(t, k, &ct);
                fakeapi__pe *pe = &c->path[c->n++];
                memset(pe, 0, sizeof *pe);
                pe->kind = FAKEAPI__PE_FIELD;
                pe->name = (char *)k; /* borrowed: copied on insert */
                compare(c, &ct, a ? json_object_get(a, k) : NULL, b ? json_object_get(b, k) : NULL,
                        !a_there, !b_there);
                c->n--;
            }
        }
    }
    /* A container that appeared or went is itself added or removed. */
    if (!a_there)
        cmp_insert(c, c->added);
    else if (!b_there)
        cmp_insert(c, c->removed);
}

/* ---- removal (TypedValue.RemoveItems) ---- */

static void remove_items(const fakeapi__fptype *t, json_t *v, const fakeapi__fpset *s, int depth)
{
    if (fakeapi__fpset_empty(s) || depth > MAX_DEPTH)
        return;
    fakeapi__fpnode node;
    fakeapi__fptype_describe(t, v, &node);
    if (json_is_object(v)) {
        const char *k;
        json_t *cv;
        void *tmp;
        json_object_foreach_safe(v, tmp, k, cv)
        {
            fakeapi__pe pe = {.kind = FAKEAPI__PE_FIELD, .name = (char *)k};
            if (fakeapi__fpset_member(s, &pe)) {
                json_object_del(v, k);
                continue;
            }
            const fakeapi__fpset *below = fakeapi__fpset_child(s, &pe);
            if (below) {
                fakeapi__fptype ct;
                fakeapi__fptype_child(t, k, &ct);
                remove_items(&ct, cv, below, depth + 1);
            }
        }
    } else if (json_is_array(v) && node.kind == FAKEAPI__FPK_LIST &&
               node.list != FAKEAPI__FPL_ATOMIC) {
        size_t n;
        fakeapi__pe *pes = item_pes(t, &node, v, &n);
        fakeapi__fptype et;
        fakeapi__fptype_elem(t, &et);
        for (size_t i = n; pes && i-- > 0;) {
            if (fakeapi__fpset_member(s, &pes[i])) {
                json_array_remove(v, i);
                continue;
            }
            const fakeapi__fpset *below = fakeapi__fpset_child(s, &pes[i]);
            if (below)
                remove_items(&et, json_array_get(v, i), below, depth + 1);
        }
        free_pes(pes, n);
    }
}

json_t *fakeapi__typed_merge(const fakeapi__fptype *t, const json_t *lhs, const json_t *rhs)
{
    return merge(t, lhs, rhs, 0);
}

int fakeapi__typed_compare(const fakeapi__fptype *t, const json_t *a, const json_t *b,
                           fakeapi__fpset **added, fakeapi__fpset **modified,
                           fakeapi__fpset **removed)
{
    return fakeapi__typed_compare_part(t, a, b, NULL, added, modified, removed);
}

int fakeapi__typed_compare_part(const fakeapi__fptype *t, const json_t *a, const json_t *b,
                                const fakeapi__typed_part *part, fakeapi__fpset **added,
                                fakeapi__fpset **modified, fakeapi__fpset **removed)
{
    /* The path buffer needs no clearing: entries are set as they are used. */
    cmp *c = malloc(sizeof *c);
    if (!c)
        return -1;
    c->n = 0;
    c->rc = 0;
    c->part = part;
    c->added = fakeapi__fpset_new();
    c->modified = fakeapi__fpset_new();
    c->removed = fakeapi__fpset_new();
    if (!c->added || !c->modified || !c->removed)
        c->rc = -1;
    else
        compare(c, t, a, b, false, false);
    int rc = c->rc;
    if (rc) {
        fakeapi__fpset_free(c->added);
        fakeapi__fpset_free(c->modified);
        fakeapi__fpset_free(c->removed);
    } else {
        *added = c->added;
        *modified = c->modified;
        *removed = c->removed;
    }
    free(c);
    return rc;
}

void fakeapi__typed_remove(const fakeapi__fptype *t, json_t *v, const fakeapi__fpset *s)
{
    remove_items(t, v, s, 0);
}
