/*
 * test_store.c - the SQLite store (store.h): put/get, scan order and
 * continuation, history, compaction, owners/dependents/orphans, the
 * deleting index, transactions, and the revision kept in a file.
 */
#include "store.h"

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static fakeapi__store *st;

static void open_mem(void)
{
    char err[256] = "";
    cr_assert_eq(fakeapi__store_open(NULL, &st, err, sizeof err), 0, "%s", err);
    fakeapi__store_lock(st);
}

static void close_mem(void)
{
    fakeapi__store_unlock(st);
    fakeapi__store_close(st);
    st = NULL;
}

TestSuite(store, .init = open_mem, .fini = close_mem);

/* Put an object {metadata:{name, namespace, uid, ...}} in its own transaction;
 * returns its revision. extra_meta is JSON members to add to metadata, or "". */
static uint64_t put(const char *key, const char *ns, const char *name, const char *uid,
                    const char *labels, const char *extra_meta)
{
    cr_assert_eq(fakeapi__store_begin(st), 0);
    uint64_t rv = fakeapi__store_next_rev(st);
    char text[1024];
    snprintf(text, sizeof text,
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s\","
             "\"resourceVersion\":\"%llu\"%s%s}}",
             name, ns, uid, (unsigned long long)rv, *extra_meta ? "," : "", extra_meta);
    cr_assert_eq(fakeapi__store_put(st, key, ns, name, uid, rv, labels, text), 0);
    cr_assert_eq(fakeapi__store_add_event(st, rv, FAKEAPI__EV_ADDED, key, ns, name, text, NULL), 0);
    cr_assert_eq(fakeapi__store_commit(st), 0);
    return rv;
}

/* Scan visitor: collect "ns/name" joined by ','; stop after ud->stop_after. */
typedef struct scan_out {
    char buf[2048];
    int n;
    int stop_after; /* 0 = never */
    int fail_at;    /* 0 = never; else return -7 at this item */
} scan_out;

static int collect(void *ud, const char *ns, const char *name, const char *labels, const char *text,
                   size_t len)
{
    scan_out *o = ud;
    (void)labels;
    cr_assert_eq(strlen(text), len);
    o->n++;
    if (o->fail_at && o->n == o->fail_at)
        return -7;
    size_t off = strlen(o->buf);
    snprintf(o->buf + off, sizeof o->buf - off, "%s%s/%s", off ? "," : "", ns, name);
    return o->stop_after && o->n >= o->stop_after ? 1 : 0;
}

static const char *scan(const char *key, const char *ns, const char *after_ns,
                        const char *after_name)
{
    static scan_out o;
    memset(&o, 0, sizeof o);
    cr_assert_eq(fakeapi__store_scan(st, key, ns, after_ns, after_name, collect, &o), 0);
    return o.buf;
}

Test(store, empty_store)
{
    cr_assert_eq(fakeapi__store_rev(st), 0);
    cr_assert_eq(fakeapi__store_compacted(st), 0);
    cr_assert_eq(fakeapi__store_history_len(st), 0);
    json_t *o = (json_t *)0x1;
    cr_assert_eq(fakeapi__store_get(st, "/configmaps", "default", "x", &o), 1);
    cr_assert_eq(o, (json_t *)0x1);
    cr_assert_str_eq(scan("/configmaps", NULL, NULL, NULL), "");
    cr_assert_eq(fakeapi__store_count(st, "/configmaps", NULL), 0);
    cr_assert_eq(fakeapi__store_uid_exists(st, "u"), 0);
}

Test(store, put_get_and_revisions)
{
    uint64_t r1 = put("/configmaps", "default", "a", "u1", NULL, "");
    uint64_t r2 = put("/configmaps", "default", "b", "u2", NULL, "");
    cr_assert_eq(r1, 1);
    cr_assert_eq(r2, 2);
    cr_assert_eq(fakeapi__store_rev(st), 2);
    json_t *o = NULL;
    cr_assert_eq(fakeapi__store_get(st, "/configmaps", "default", "a", &o), 0);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "metadata"), "uid")),
                     "u1");
    json_decref(o);
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(fakeapi__store_get_text(st, "/configmaps", "default", "b", &text, &len), 0);
    cr_assert_eq(strlen(text), len);
    cr_assert(strstr(text, "\"u2\""));
    free(text);
    /* Keys, namespaces and names all matter. */
    cr_assert_eq(fakeapi__store_get(st, "/secrets", "default", "a", &o), 1);
    cr_assert_eq(fakeapi__store_get(st, "/configmaps", "other", "a", &o), 1);
    /* ns NULL means "" (cluster-scoped). */
    put("/nodes", "", "n1", "u3", NULL, "");
    cr_assert_eq(fakeapi__store_get(st, "/nodes", NULL, "n1", &o), 0);
    json_decref(o);
    cr_assert_eq(fakeapi__store_uid_exists(st, "u3"), 1);

    /* Replace in place. */
    uint64_t r4 = put("/configmaps", "default", "a", "u1", NULL, "\"labels\":{\"x\":\"y\"}");
    cr_assert_eq(r4, 4);
    cr_assert_eq(fakeapi__store_count(st, "/configmaps", "default"), 2);
    cr_assert_eq(fakeapi__store_get(st, "/configmaps", "default", "a", &o), 0);
    cr_assert_str_eq(
        json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion")), "4");
    json_decref(o);

    /* Delete. */
    cr_assert_eq(fakeapi__store_begin(st), 0);
    cr_assert_eq(fakeapi__store_del(st, "/configmaps", "default", "a"), 0);
    cr_assert_eq(fakeapi__store_commit(st), 0);
    cr_assert_eq(fakeapi__store_get(st, "/configmaps", "default", "a", &o), 1);
    cr_assert_eq(fakeapi__store_uid_exists(st, "u1"), 0);
    cr_assert_eq(fakeapi__store_count(st, "/configmaps", NULL), 1);
}

Test(store, scan_order_and_continuation)
{
    /* Inserted out of order, across namespaces and keys. */
    put("/configmaps", "b", "y", "1", NULL, "");
    put("/configmaps", "a", "z", "2", NULL, "");
    put("/configmaps", "b", "x", "3", NULL, "");
    put("/configmaps", "a", "a", "4", NULL, "");
    put("/secrets", "a", "s", "5", NULL, "");
    put("/configmaps", "c", "m", "6", NULL, "");
    cr_assert_str_eq(scan("/configmaps", NULL, NULL, NULL), "a/a,a/z,b/x,b/y,c/m");
    cr_assert_str_eq(scan("/configmaps", "b", NULL, NULL), "b/x,b/y");
    cr_assert_str_eq(scan("/secrets", NULL, NULL, NULL), "a/s");
    /* Strictly after a position. */
    cr_assert_str_eq(scan("/configmaps", NULL, "a", "z"), "b/x,b/y,c/m");
    cr_assert_str_eq(scan("/configmaps", NULL, "a", "a"), "a/z,b/x,b/y,c/m");
    cr_assert_str_eq(scan("/configmaps", NULL, "b", "y"), "c/m");
    cr_assert_str_eq(scan("/configmaps", NULL, "c", "m"), "");
    /* A position that no longer exists still continues after it. */
    cr_assert_str_eq(scan("/configmaps", NULL, "a", "q"), "a/z,b/x,b/y,c/m");
    cr_assert_str_eq(scan("/configmaps", "b", NULL, "x"), "b/y");
    cr_assert_eq(fakeapi__store_count(st, "/configmaps", NULL), 5);
    cr_assert_eq(fakeapi__store_count(st, "/configmaps", "a"), 2);

    /* Visitors stop (1) or abort (< 0, returned). */
    scan_out o = {.stop_after = 2};
    cr_assert_eq(fakeapi__store_scan(st, "/configmaps", NULL, NULL, NULL, collect, &o), 0);
    cr_assert_str_eq(o.buf, "a/a,a/z");
    scan_out f = {.fail_at = 3};
    cr_assert_eq(fakeapi__store_scan(st, "/configmaps", NULL, NULL, NULL, collect, &f), -7);
    cr_assert_eq(f.n, 3);

    json_t *arr = json_array();
    cr_assert_eq(fakeapi__store_load_all(st, "/configmaps", "a", arr), 0);
    cr_assert_eq(json_array_size(arr), 2);
    cr_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_array_get(arr, 1), "metadata"), "name")),
                     "z");
    json_decref(arr);
}

/* Scan visitor recording each item's labels text ("-" for none). */
static int collect_labels(void *ud, const char *ns, const char *name, const char *labels,
                          const char *text, size_t len)
{
    (void)ns, (void)name, (void)text, (void)len;
    char *buf = ud;
    size_t off = strlen(buf);
    snprintf(buf + off, 256 - off, "%s%s", off ? ";" : "", labels ? labels : "-");
    return 0;
}

Test(store, labels_column)
{
    put("/configmaps", "d", "l", "1", "{\"app\":\"web\"}", "");
    put("/configmaps", "d", "n", "2", NULL, "");
    char buf[256] = "";
    cr_assert_eq(fakeapi__store_scan(st, "/configmaps", "d", NULL, NULL, collect_labels, buf), 0);
    cr_assert_str_eq(buf, "{\"app\":\"web\"};-");
}

/* History visitor: "rv:type:ns/name[:prev]" joined by ','. */
static int collect_hist(void *ud, uint64_t rv, int type, const char *key, const char *ns,
                        const char *name, const char *text, const char *prev)
{
    char *buf = ud;
    (void)key;
    cr_assert_not_null(text);
    size_t off = strlen(buf);
    snprintf(buf + off, 1024 - off, "%s%llu:%d:%s/%s%s", off ? "," : "", (unsigned long long)rv,
             type, ns, name, prev ? ":p" : "");
    return 0;
}

static const char *hist(const char *key, uint64_t after)
{
    static char buf[1024];
    buf[0] = '\0';
    cr_assert_eq(fakeapi__store_history(st, key, after, collect_hist, buf), 0);
    return buf;
}

Test(store, history)
{
    put("/configmaps", "d", "a", "1", NULL, "");
    put("/secrets", "d", "s", "2", NULL, "");
    /* A modification with its previous state, and a deletion. */
    cr_assert_eq(fakeapi__store_begin(st), 0);
    uint64_t rv = fakeapi__store_next_rev(st);
    cr_assert_eq(rv, 3);
    cr_assert_eq(fakeapi__store_add_event(st, rv, FAKEAPI__EV_MODIFIED, "/configmaps", "d", "a",
                                          "{\"v\":2}", "{\"v\":1}"),
                 0);
    rv = fakeapi__store_next_rev(st);
    cr_assert_eq(fakeapi__store_del(st, "/configmaps", "d", "a"), 0);
    cr_assert_eq(fakeapi__store_add_event(st, rv, FAKEAPI__EV_DELETED, "/configmaps", "d", "a",
                                          "{\"v\":2}", NULL),
                 0);
    cr_assert_eq(fakeapi__store_commit(st), 0);

    cr_assert_str_eq(hist(NULL, 0), "1:1:d/a,2:1:d/s,3:2:d/a:p,4:3:d/a");
    cr_assert_str_eq(hist("/configmaps", 0), "1:1:d/a,3:2:d/a:p,4:3:d/a");
    cr_assert_str_eq(hist("/configmaps", 1), "3:2:d/a:p,4:3:d/a");
    cr_assert_str_eq(hist("/secrets", 2), "");
    cr_assert_str_eq(hist(NULL, 4), "");
    cr_assert_eq(fakeapi__store_history_len(st), 4);
}

Test(store, compaction)
{
    for (int i = 0; i < 6; i++)
        put("/configmaps", "d", i % 2 ? "odd" : "even", "u", NULL, "");
    cr_assert_eq(fakeapi__store_rev(st), 6);
    cr_assert_eq(fakeapi__store_compact(st, 4), 0);
    cr_assert_eq(fakeapi__store_compacted(st), 4);
    cr_assert_eq(fakeapi__store_history_len(st), 2);
    cr_assert_str_eq(hist(NULL, 0), "5:1:d/even,6:1:d/odd");
    /* Objects are untouched: compaction only drops history. */
    cr_assert_eq(fakeapi__store_count(st, "/configmaps", NULL), 2);
    /* Compacting backwards does nothing. */
    cr_assert_eq(fakeapi__store_compact(st, 2), 0);
    cr_assert_eq(fakeapi__store_compacted(st), 4);
    /* Past the current revision is clipped to it. */
    cr_assert_eq(fakeapi__store_compact(st, 100), 0);
    cr_assert_eq(fakeapi__store_compacted(st), 6);
    cr_assert_eq(fakeapi__store_history_len(st), 0);
    /* The revision goes on. */
    cr_assert_eq(put("/configmaps", "d", "new", "u", NULL, ""), 7);
    cr_assert_str_eq(hist(NULL, 0), "7:1:d/new");
}

static int collect_refs(void *ud, const char *key, const char *ns, const char *name)
{
    char *buf = ud;
    size_t off = strlen(buf);
    snprintf(buf + off, 512 - off, "%s%s:%s/%s", off ? "," : "", key, ns, name);
    return 0;
}

static const char *deps(const char *owner)
{
    static char buf[512];
    buf[0] = '\0';
    cr_assert_eq(fakeapi__store_dependents(st, owner, collect_refs, buf), 0);
    return buf;
}

static const char *orphans(void)
{
    static char buf[512];
    buf[0] = '\0';
    cr_assert_eq(fakeapi__store_orphans(st, collect_refs, buf), 0);
    return buf;
}

static void set_owners(const char *key, const char *ns, const char *name, const char *uids_json)
{
    json_t *uids = uids_json ? json_loads(uids_json, 0, NULL) : NULL;
    cr_assert_eq(fakeapi__store_begin(st), 0);
    cr_assert_eq(fakeapi__store_set_owners(st, key, ns, name, uids), 0);
    cr_assert_eq(fakeapi__store_commit(st), 0);
    json_decref(uids);
}

Test(store, owners_dependents_orphans)
{
    put("/deployments", "d", "web", "owner-1", NULL, "");
    put("/configmaps", "d", "o2", "owner-2", NULL, "");
    put("/replicasets", "d", "web-1", "rs-1", NULL, "");
    put("/replicasets", "d", "web-2", "rs-2", NULL, "");
    put("/pods", "d", "p", "pod-1", NULL, "");
    set_owners("/replicasets", "d", "web-1", "[\"owner-1\"]");
    set_owners("/replicasets", "d", "web-2", "[\"owner-1\",\"owner-2\"]");
    set_owners("/pods", "d", "p", "[\"rs-1\"]");
    cr_assert_str_eq(deps("owner-1"), "/replicasets:d/web-1,/replicasets:d/web-2");
    cr_assert_str_eq(deps("owner-2"), "/replicasets:d/web-2");
    cr_assert_str_eq(deps("rs-1"), "/pods:d/p");
    cr_assert_str_eq(deps("nobody"), "");
    cr_assert_str_eq(orphans(), "", "every owner exists");

    /* The owner goes: its dependents are candidates (once each). */
    cr_assert_eq(fakeapi__store_begin(st), 0);
    cr_assert_eq(fakeapi__store_del(st, "/deployments", "d", "web"), 0);
    cr_assert_eq(fakeapi__store_commit(st), 0);
    cr_assert_str_eq(orphans(), "/replicasets:d/web-1,/replicasets:d/web-2");

    /* The same owners again, in another order or repeated, change nothing;
     * one more, or one fewer, does. */
    set_owners("/replicasets", "d", "web-2", "[\"owner-2\",\"owner-1\",\"owner-2\"]");
    cr_assert_str_eq(deps("owner-1"), "/replicasets:d/web-1,/replicasets:d/web-2");
    cr_assert_str_eq(deps("owner-2"), "/replicasets:d/web-2");
    set_owners("/replicasets", "d", "web-2", "[\"owner-2\",\"owner-1\",\"rs-2\"]");
    cr_assert_str_eq(deps("rs-2"), "/replicasets:d/web-2");
    set_owners("/replicasets", "d", "web-2", "[\"owner-1\",\"owner-1\",\"owner-2\"]");
    cr_assert_str_eq(deps("rs-2"), "");
    cr_assert_str_eq(deps("owner-2"), "/replicasets:d/web-2");
    set_owners("/replicasets", "d", "web-1", "[\"owner-1\",\"owner-2\"]");
    set_owners("/replicasets", "d", "web-1", "[\"owner-1\"]");
    cr_assert_str_eq(deps("owner-2"), "/replicasets:d/web-2");

    /* Replacing the owners replaces the links. */
    set_owners("/replicasets", "d", "web-2", "[\"owner-2\"]");
    cr_assert_str_eq(deps("owner-1"), "/replicasets:d/web-1");
    cr_assert_str_eq(orphans(), "/replicasets:d/web-1");
    /* NULL clears them; so does deleting the dependent. */
    set_owners("/replicasets", "d", "web-2", NULL);
    cr_assert_str_eq(deps("owner-2"), "");
    cr_assert_eq(fakeapi__store_begin(st), 0);
    cr_assert_eq(fakeapi__store_del(st, "/replicasets", "d", "web-1"), 0);
    cr_assert_eq(fakeapi__store_commit(st), 0);
    cr_assert_str_eq(deps("owner-1"), "");
    /* rs-1 is gone now, so the pod is an orphan. */
    cr_assert_str_eq(orphans(), "/pods:d/p");
}

Test(store, deleting_index)
{
    put("/configmaps", "d", "live", "1", NULL, "");
    put("/configmaps", "d", "dying", "2", NULL, "\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"");
    put("/namespaces", "", "gone-ns", "3", NULL, "\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"");
    char buf[512] = "";
    cr_assert_eq(fakeapi__store_deleting(st, collect_refs, buf), 0);
    cr_assert_str_eq(buf, "/configmaps:d/dying,/namespaces:/gone-ns");
    /* Finished: it leaves the index. */
    put("/configmaps", "d", "dying", "2", NULL, "");
    buf[0] = '\0';
    cr_assert_eq(fakeapi__store_deleting(st, collect_refs, buf), 0);
    cr_assert_str_eq(buf, "/namespaces:/gone-ns");
}

/* The uid lookups and the state follow deletionTimestamp as the object's
 * text has it: set (not null) is being deleted; null, absent, or the word
 * only in a value is not. */
Test(store, uid_lookups_and_state_follow_the_deletion_timestamp)
{
    put("/configmaps", "d", "live", "u1", NULL, "");
    put("/configmaps", "d", "dying", "u2", NULL, "\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"");
    put("/configmaps", "d", "nulled", "u3", NULL, "\"deletionTimestamp\":null");
    put("/configmaps", "d", "named", "u4", NULL,
        "\"annotations\":{\"a\":\"\\\"deletionTimestamp\\\"\"}");
    cr_assert_eq(fakeapi__store_uid_live(st, "u1"), 1);
    cr_assert_eq(fakeapi__store_uid_live(st, "u2"), 0);
    cr_assert_eq(fakeapi__store_uid_live(st, "u3"), 1);
    cr_assert_eq(fakeapi__store_uid_live(st, "u4"), 1);
    cr_assert_eq(fakeapi__store_uid_live(st, "nobody"), 0);
    cr_assert_eq(fakeapi__store_uid_exists(st, "u2"), 1);
    cr_assert_eq(fakeapi__store_uid_exists(st, "nobody"), 0);
    cr_assert_eq(fakeapi__store_state(st, "/configmaps", "d", "live"), 0);
    cr_assert_eq(fakeapi__store_state(st, "/configmaps", "d", "dying"), 1);
    cr_assert_eq(fakeapi__store_state(st, "/configmaps", "d", "nulled"), 0);
    cr_assert_eq(fakeapi__store_state(st, "/configmaps", "d", "named"), 0);
    cr_assert_eq(fakeapi__store_state(st, "/configmaps", "d", "absent"), 2);
    /* An update sets it, another clears it; a delete drops the uid. */
    put("/configmaps", "d", "live", "u1", NULL, "\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"");
    cr_assert_eq(fakeapi__store_uid_live(st, "u1"), 0);
    cr_assert_eq(fakeapi__store_state(st, "/configmaps", "d", "live"), 1);
    put("/configmaps", "d", "live", "u1", NULL, "");
    cr_assert_eq(fakeapi__store_uid_live(st, "u1"), 1);
    /* A put under the same name with another uid replaces it. */
    put("/configmaps", "d", "nulled", "u5", NULL, "");
    cr_assert_eq(fakeapi__store_uid_exists(st, "u3"), 0);
    cr_assert_eq(fakeapi__store_uid_live(st, "u5"), 1);
    cr_assert_eq(fakeapi__store_begin(st), 0);
    cr_assert_eq(fakeapi__store_del(st, "/configmaps", "d", "live"), 0);
    cr_assert_eq(fakeapi__store_commit(st), 0);
    cr_assert_eq(fakeapi__store_uid_live(st, "u1"), 0);
    cr_assert_eq(fakeapi__store_uid_exists(st, "u1"), 0);
}

/* A store file written before objects had their deleting column gets it
 * on open, from the stored texts, and its lookups answer as before. */
Test(store, an_older_store_file_is_migrated)
{
    char dir[] = "/tmp/fakeapi-store-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/old.db", dir);
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    const char *old =
        "CREATE TABLE meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
        "CREATE TABLE objects(key TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,"
        " uid TEXT NOT NULL, rv INTEGER NOT NULL, labels TEXT, data TEXT NOT NULL,"
        " PRIMARY KEY(key, ns, name));"
        "CREATE INDEX objects_uid ON objects(uid);"
        "CREATE INDEX objects_deleting ON objects(key) WHERE "
        " json_extract(data,'$.metadata.deletionTimestamp') IS NOT NULL;"
        "INSERT INTO meta VALUES('rev', 2);"
        "INSERT INTO objects VALUES('/configmaps','d','a','ua',1,NULL,"
        " '{\"metadata\":{\"name\":\"a\"}}');"
        "INSERT INTO objects VALUES('/configmaps','d','b','ub',2,NULL,"
        " '{\"metadata\":{\"name\":\"b\",\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"}}');";
    cr_assert_eq(sqlite3_exec(db, old, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    sqlite3_close(db);

    char err[256] = "";
    fakeapi__store *mem = st;
    cr_assert_eq(fakeapi__store_open(path, &st, err, sizeof err), 0, "%s", err);
    fakeapi__store_lock(st);
    cr_assert_eq(fakeapi__store_rev(st), 2);
    cr_assert_eq(fakeapi__store_uid_live(st, "ua"), 1);
    cr_assert_eq(fakeapi__store_uid_live(st, "ub"), 0);
    cr_assert_eq(fakeapi__store_state(st, "/configmaps", "d", "b"), 1);
    char buf[256] = "";
    cr_assert_eq(fakeapi__store_deleting(st, collect_refs, buf), 0);
    cr_assert_str_eq(buf, "/configmaps:d/b");
    put("/configmaps", "d", "c", "uc", NULL, "\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"");
    buf[0] = '\0';
    cr_assert_eq(fakeapi__store_deleting(st, collect_refs, buf), 0);
    cr_assert_str_eq(buf, "/configmaps:d/b,/configmaps:d/c");
    fakeapi__store_unlock(st);
    fakeapi__store_close(st);
    /* Opened again, it is not migrated twice. */
    cr_assert_eq(fakeapi__store_open(path, &st, err, sizeof err), 0, "%s", err);
    fakeapi__store_lock(st);
    cr_assert_eq(fakeapi__store_uid_live(st, "uc"), 0);
    fakeapi__store_unlock(st);
    fakeapi__store_close(st);
    st = mem;

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(store, rollback_restores_everything)
{
    put("/configmaps", "d", "keep", "1", NULL, "");
    cr_assert_eq(fakeapi__store_begin(st), 0);
    uint64_t rv = fakeapi__store_next_rev(st);
    cr_assert_eq(rv, 2);
    cr_assert_eq(fakeapi__store_put(st, "/configmaps", "d", "temp", "2", rv, NULL, "{}"), 0);
    cr_assert_eq(
        fakeapi__store_add_event(st, rv, FAKEAPI__EV_ADDED, "/configmaps", "d", "temp", "{}", NULL),
        0);
    cr_assert_eq(fakeapi__store_del(st, "/configmaps", "d", "keep"), 0);
    fakeapi__store_rollback(st);
    cr_assert_eq(fakeapi__store_rev(st), 1, "the revision counter is restored");
    json_t *o = NULL;
    cr_assert_eq(fakeapi__store_get(st, "/configmaps", "d", "temp", &o), 1, "the put is undone");
    cr_assert_eq(fakeapi__store_get(st, "/configmaps", "d", "keep", &o), 0, "the delete too");
    json_decref(o);
    cr_assert_eq(fakeapi__store_history_len(st), 1, "and the event");
    /* The next revision is the one rolled back. */
    cr_assert_eq(put("/configmaps", "d", "next", "3", NULL, ""), 2);

    /* A compaction inside a transaction that rolls back is undone, the
     * compacted revision with it (a watch from rev 1 must not get 410). */
    cr_assert_eq(fakeapi__store_begin(st), 0);
    cr_assert_eq(fakeapi__store_compact(st, 2), 0);
    cr_assert_eq(fakeapi__store_compacted(st), 2);
    fakeapi__store_rollback(st);
    cr_assert_eq(fakeapi__store_compacted(st), 0);
    cr_assert_eq(fakeapi__store_history_len(st), 2, "both events are back");
}

Test(store, open_failure)
{
    fakeapi__store *s = (fakeapi__store *)0x1;
    char err[256] = "";
    cr_assert_eq(fakeapi__store_open("/nonexistent-dir/x/y.db", &s, err, sizeof err), -1);
    cr_assert_eq(s, (fakeapi__store *)0x1);
    cr_assert(strstr(err, "/nonexistent-dir/x/y.db"), "%s", err);
}

Test(store, revision_persists_in_a_file)
{
    char dir[] = "/tmp/fakeapi-store-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/s.db", dir);
    char err[256] = "";
    fakeapi__store *mem = st;
    cr_assert_eq(fakeapi__store_open(path, &st, err, sizeof err), 0, "%s", err);
    fakeapi__store_lock(st);
    put("/configmaps", "d", "a", "1", NULL, "");
    put("/configmaps", "d", "b", "2", NULL, "");
    put("/configmaps", "d", "c", "3", "{\"x\":\"1\"}", "");
    set_owners("/configmaps", "d", "c", "[\"1\"]");
    cr_assert_eq(fakeapi__store_compact(st, 1), 0);
    /* A rolled-back transaction leaves no trace on disk either. */
    cr_assert_eq(fakeapi__store_begin(st), 0);
    fakeapi__store_next_rev(st);
    fakeapi__store_rollback(st);
    fakeapi__store_unlock(st);
    fakeapi__store_close(st);

    cr_assert_eq(fakeapi__store_open(path, &st, err, sizeof err), 0, "%s", err);
    fakeapi__store_lock(st);
    cr_assert_eq(fakeapi__store_rev(st), 3);
    cr_assert_eq(fakeapi__store_compacted(st), 1);
    cr_assert_eq(fakeapi__store_history_len(st), 2);
    cr_assert_str_eq(scan("/configmaps", NULL, NULL, NULL), "d/a,d/b,d/c");
    cr_assert_str_eq(deps("1"), "/configmaps:d/c");
    char buf[256] = "";
    cr_assert_eq(fakeapi__store_scan(st, "/configmaps", "d", "d", "b", collect_labels, buf), 0);
    cr_assert_str_eq(buf, "{\"x\":\"1\"}");
    cr_assert_eq(put("/configmaps", "d", "e", "5", NULL, ""), 4, "the counter continues");
    fakeapi__store_unlock(st);
    fakeapi__store_close(st);
    st = mem;

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* An in-memory store that closes is kept and emptied for the next in-memory
 * open: that one must be what a new store is, whatever the last one held
 * (objects, history, owners, a compaction, an open transaction). */
Test(store, a_closed_memory_store_comes_back_empty)
{
    put("/pods", "d", "a", "uid-a", "{\"app\":\"x\"}", "\"deletionTimestamp\":\"2026\"");
    put("/pods", "d", "b", "uid-b", NULL, "");
    set_owners("/pods", "d", "b", "[\"uid-gone\"]");
    cr_assert_eq(fakeapi__store_compact(st, 1), 0);
    cr_assert_eq(fakeapi__store_begin(st), 0);
    fakeapi__store_next_rev(st); /* left open: the close must not keep it */
    fakeapi__store *first = st;
    close_mem();
    open_mem();
    cr_assert_eq(st, first, "the store was not kept for the next open");
    cr_assert_eq(fakeapi__store_rev(st), 0);
    cr_assert_eq(fakeapi__store_compacted(st), 0);
    cr_assert_eq(fakeapi__store_history_len(st), 0);
    cr_assert_str_eq(scan("/pods", NULL, NULL, NULL), "");
    cr_assert_str_eq(orphans(), "");
    cr_assert_str_eq(deps("uid-gone"), "");
    cr_assert_eq(fakeapi__store_uid_exists(st, "uid-a"), 0);
    /* Revisions start again at 1, and the history holds only the new. */
    cr_assert_eq(put("/pods", "d", "c", "uid-c", NULL, ""), 1);
    cr_assert_eq(fakeapi__store_history_len(st), 1);
    cr_assert_str_eq(scan("/pods", NULL, NULL, NULL), "d/c");

    /* Two open at once: the second is a store of its own. */
    fakeapi__store *other = NULL;
    char err[256] = "";
    cr_assert_eq(fakeapi__store_open(NULL, &other, err, sizeof err), 0, "%s", err);
    cr_assert_neq(other, st);
    fakeapi__store_lock(other);
    cr_assert_eq(fakeapi__store_rev(other), 0);
    fakeapi__store_unlock(other);
    fakeapi__store_close(other);
}

/* The stored object's data.v as the store's get reads it (kept or parsed). */
static const char *get_v(const char *name, char *buf, size_t len)
{
    json_t *o = NULL;
    int rc = fakeapi__store_get(st, "/configmaps", "default", name, &o);
    if (rc != 0) {
        snprintf(buf, len, "<%d>", rc);
        return buf;
    }
    snprintf(buf, len, "%s", json_string_value(json_object_get(json_object_get(o, "data"), "v")));
    json_decref(o);
    return buf;
}

/* Write {data:{v}} as name's new state in its own transaction, committed or
 * rolled back, and (if keep) keep the written tree parsed after the commit,
 * as txn.c does. */
static void write_v(const char *name, const char *v, bool commit, bool keep)
{
    cr_assert_eq(fakeapi__store_begin(st), 0);
    uint64_t rv = fakeapi__store_next_rev(st);
    json_t *o = json_pack("{s:{s:s,s:s,s:s},s:{s:s}}", "metadata", "name", name, "namespace",
                          "default", "uid", name, "data", "v", v);
    char *text = json_dumps(o, JSON_COMPACT);
    cr_assert_eq(fakeapi__store_put(st, "/configmaps", "default", name, name, rv, NULL, text), 0);
    if (commit) {
        cr_assert_eq(fakeapi__store_commit(st), 0);
        if (keep)
            fakeapi__store_keep(st, "/configmaps", "default", name, o, text, strlen(text));
    } else {
        fakeapi__store_rollback(st);
    }
    free(text);
    json_decref(o);
}

Test(store, a_kept_object_is_never_staler_than_the_table)
{
    char b[64];
    write_v("a", "1", true, true);
    cr_assert_str_eq(get_v("a", b, sizeof b), "1");
    /* A read hands out a copy: changing it changes nothing kept. */
    json_t *o = NULL;
    cr_assert_eq(fakeapi__store_get(st, "/configmaps", "default", "a", &o), 0);
    json_object_set_new(json_object_get(o, "data"), "v", json_string("scribbled"));
    json_decref(o);
    cr_assert_str_eq(get_v("a", b, sizeof b), "1");
    /* A write that is not kept replaces what was. */
    write_v("a", "2", true, false);
    cr_assert_str_eq(get_v("a", b, sizeof b), "2");
    write_v("a", "3", true, true);
    /* Inside a transaction, a put of the object is read back at once... */
    cr_assert_eq(fakeapi__store_begin(st), 0);
    cr_assert_eq(fakeapi__store_put(st, "/configmaps", "default", "a", "a", 9, NULL,
                                    "{\"data\":{\"v\":\"in-txn\"}}"),
                 0);
    cr_assert_str_eq(get_v("a", b, sizeof b), "in-txn");
    /* ...and after its rollback the committed state is back. */
    fakeapi__store_rollback(st);
    cr_assert_str_eq(get_v("a", b, sizeof b), "3");
    /* A rolled-back write of another object, then of this one. */
    write_v("a", "4", true, true);
    write_v("b", "x", false, false);
    cr_assert_str_eq(get_v("a", b, sizeof b), "4");
    write_v("a", "5", false, false);
    cr_assert_str_eq(get_v("a", b, sizeof b), "4");
    /* Deleted, then created again under the same name. */
    cr_assert_eq(fakeapi__store_begin(st), 0);
    cr_assert_eq(fakeapi__store_del(st, "/configmaps", "default", "a"), 0);
    cr_assert_eq(fakeapi__store_commit(st), 0);
    cr_assert_str_eq(get_v("a", b, sizeof b), "<1>");
    write_v("a", "again", true, false);
    cr_assert_str_eq(get_v("a", b, sizeof b), "again");
    /* The same name in another namespace or kind is another object. */
    write_v("c", "c1", true, true);
    json_t *other = NULL;
    cr_assert_eq(fakeapi__store_get(st, "/secrets", "default", "c", &other), 1);
    cr_assert_eq(fakeapi__store_get(st, "/configmaps", "kube-system", "c", &other), 1);
}

Test(store, a_shared_read_and_the_kept_text)
{
    write_v("s", "1", true, true);
    json_t *a = NULL, *b = NULL, *copy = NULL;
    cr_assert_eq(fakeapi__store_get_shared(st, "/configmaps", "default", "s", &a), 0);
    cr_assert_eq(fakeapi__store_get_shared(st, "/configmaps", "default", "s", &b), 0);
    cr_assert_eq(a, b, "both readers share the kept tree");
    cr_assert_eq(fakeapi__store_get(st, "/configmaps", "default", "s", &copy), 0);
    cr_assert_neq(copy, a, "get hands out a copy");
    cr_assert(json_equal(copy, a));
    size_t len = 0;
    char *text = fakeapi__store_kept_text(st, "/configmaps", "default", "s", a, &len);
    cr_assert_not_null(text);
    char *want = json_dumps(a, JSON_COMPACT);
    cr_assert_str_eq(text, want);
    cr_assert_eq(len, strlen(want));
    cr_assert_null(fakeapi__store_kept_text(st, "/configmaps", "default", "s", copy, &len),
                   "only the kept tree itself has the kept text");
    free(want);
    free(text);
    /* A write drops both; the old tree stays the reader's, unchanged. */
    write_v("s", "2", true, false);
    cr_assert_null(fakeapi__store_kept_text(st, "/configmaps", "default", "s", a, &len));
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(a, "data"), "v")), "1");
    json_t *c = NULL;
    cr_assert_eq(fakeapi__store_get_shared(st, "/configmaps", "default", "s", &c), 0);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(c, "data"), "v")), "2");
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(copy);
}

Test(store, kept_objects_past_the_bound_and_an_emptied_store)
{
    char b[64], name[32], v[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "cm-%d", i);
        snprintf(v, sizeof v, "v-%d", i);
        write_v(name, v, true, true);
    }
    /* The last ones written are kept, the first ones were let go. */
    json_t *first = NULL, *last = NULL;
    size_t len = 0;
    cr_assert_eq(fakeapi__store_get_shared(st, "/configmaps", "default", "cm-0", &first), 0);
    cr_assert_eq(fakeapi__store_get_shared(st, "/configmaps", "default", "cm-4999", &last), 0);
    cr_assert_null(fakeapi__store_kept_text(st, "/configmaps", "default", "cm-0", first, &len));
    char *text = fakeapi__store_kept_text(st, "/configmaps", "default", "cm-4999", last, &len);
    cr_assert_not_null(text);
    free(text);
    json_decref(first);
    json_decref(last);
    for (int i = 0; i < 5000; i += 7) {
        snprintf(name, sizeof name, "cm-%d", i);
        snprintf(v, sizeof v, "v-%d", i);
        cr_assert_str_eq(get_v(name, b, sizeof b), v);
    }
    /* A closed in-memory store comes back empty: nothing kept survives. */
    close_mem();
    open_mem();
    cr_assert_str_eq(get_v("cm-4999", b, sizeof b), "<1>");
}
