/*
 * store.c - SQLite storage for objects, history and owner links.
 *
 * DESIGN: a single connection, opened SQLITE_OPEN_NOMUTEX, used only under
 * s->mu (the store lock, see store.h). Statements are prepared once and
 * reset after each use. The revision counter lives in memory while running
 * and in meta('rev') on disk, written in the same transaction as the
 * objects, so a crash never leaves the counter behind the data.
 *
 * An in-memory store is a database in SQLite's memdb VFS (one growable
 * buffer), not ":memory:". A ":memory:" database lives in its page cache,
 * and SQLite truncates the page cache on every commit by walking its hash
 * table: commits cost more as the store grows (a create took 2x longer at
 * 60,000 objects). With memdb the page cache is an ordinary bounded cache
 * in front of the buffer and commits cost the same at any size.
 */
#include "store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kh/jsonfast.h"

enum {
    Q_GET,
    Q_PUT,
    Q_PUT_IDS,
    Q_DEL,
    Q_EVENT,
    Q_SCAN_ALL,
    Q_SCAN_NS,
    Q_HIST_KEY,
    Q_HIST_ALL,
    Q_COMPACT,
    Q_SET_META,
    Q_OWN_DEL,
    Q_OWN_ADD,
    Q_OWN_LIST,
    Q_DEPS,
    Q_UID,
    Q_COUNT_ALL,
    Q_COUNT_NS,
    Q_HIST_LEN,
    Q_AGE_RV,
    Q_DELETING,
    Q_STATE,
    Q_ORPHANS,
    Q_UID_LIVE,
    Q_IS_DELETING,
    Q_BEGIN,
    Q_COMMIT,
    Q_ROLLBACK,
    Q_MAX
};

static const char *const queries[Q_MAX] = {
    [Q_GET] = "SELECT data FROM objects WHERE key=?1 AND ns=?2 AND name=?3",
    /* An update that keeps uid and deleting (most do) sets only what
     * changed: SQLite then leaves the indexes on them alone. Otherwise
     * nothing changes, and Q_PUT_IDS follows. */
    [Q_PUT] = "INSERT INTO objects(key,ns,name,uid,rv,labels,data,deleting) "
              "VALUES(?1,?2,?3,?4,?5,?6,?7,?8) "
              "ON CONFLICT(key,ns,name) DO UPDATE SET rv=?5,labels=?6,data=?7 "
              "WHERE uid=?4 AND deleting=?8",
    [Q_PUT_IDS] = "UPDATE objects SET uid=?4,rv=?5,labels=?6,data=?7,deleting=?8 "
                  "WHERE key=?1 AND ns=?2 AND name=?3",
    [Q_DEL] = "DELETE FROM objects WHERE key=?1 AND ns=?2 AND name=?3",
    [Q_EVENT] = "INSERT INTO events(rv,type,key,ns,name,data,prev,ts) "
                "VALUES(?1,?2,?3,?4,?5,?6,?7,?8)",
    [Q_SCAN_ALL] = "SELECT ns,name,labels,data FROM objects WHERE key=?1 AND (ns,name)>(?2,?3) "
                   "ORDER BY key,ns,name",
    [Q_SCAN_NS] = "SELECT ns,name,labels,data FROM objects WHERE key=?1 AND ns=?2 AND name>?3 "
                  "ORDER BY key,ns,name",
    [Q_HIST_KEY] = "SELECT rv,type,key,ns,name,data,prev FROM events WHERE key=?1 AND rv>?2 "
                   "ORDER BY rv",
    [Q_HIST_ALL] = "SELECT rv,type,key,ns,name,data,prev FROM events WHERE rv>?1 ORDER BY rv",
    [Q_COMPACT] = "DELETE FROM events WHERE rv<=?1",
    [Q_SET_META] = "INSERT INTO meta(k,v) VALUES(?1,?2) ON CONFLICT(k) DO UPDATE SET v=?2",
    [Q_OWN_DEL] = "DELETE FROM owners WHERE key=?1 AND ns=?2 AND name=?3",
    [Q_OWN_ADD] = "INSERT OR IGNORE INTO owners(owner,key,ns,name) VALUES(?1,?2,?3,?4)",
    [Q_OWN_LIST] = "SELECT owner FROM owners WHERE key=?1 AND ns=?2 AND name=?3",
    [Q_DEPS] = "SELECT key,ns,name FROM owners WHERE owner=?1 ORDER BY key,ns,name",
    [Q_UID] = "SELECT 1 FROM objects WHERE uid=?1",
    [Q_COUNT_ALL] = "SELECT count(*) FROM objects WHERE key=?1",
    [Q_COUNT_NS] = "SELECT count(*) FROM objects WHERE key=?1 AND ns=?2",
    [Q_HIST_LEN] = "SELECT count(*) FROM events",
    [Q_AGE_RV] = "SELECT max(rv) FROM events WHERE ts < ?1",
    [Q_STATE] = "SELECT deleting FROM objects WHERE key=?1 AND ns=?2 AND name=?3",
    /* INDEXED BY: left to itself, SQLite may walk the whole table in
     * primary key order, on every collector sweep, i.e. after every write. */
    [Q_DELETING] = "SELECT key,ns,name FROM objects INDEXED BY objects_dying WHERE deleting=1 "
                   "ORDER BY key,ns,name",
    [Q_ORPHANS] = "SELECT DISTINCT o.key,o.ns,o.name FROM owners o WHERE NOT EXISTS "
                  "(SELECT 1 FROM objects WHERE uid=o.owner) ORDER BY o.key,o.ns,o.name",
    [Q_UID_LIVE] = "SELECT 1 FROM objects WHERE uid=?1 AND deleting=0",
    [Q_IS_DELETING] = "SELECT json_extract(?1,'$.metadata.deletionTimestamp') IS NOT NULL",
    [Q_BEGIN] = "BEGIN IMMEDIATE",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
};

/*
 * objects.deleting is 1 when the object's metadata.deletionTimestamp is set
 * (not null), else 0: written with the object, so that neither the uid
 * lookups (owners_live, on every write of a dependent) nor the indexes
 * parse the stored JSON. A store written before the column existed gets it
 * on open (migrate_sql).
 */
static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS objects(key TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,"
    " uid TEXT NOT NULL, rv INTEGER NOT NULL, labels TEXT, data TEXT NOT NULL,"
    " deleting INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(key, ns, name));"
    "CREATE TABLE IF NOT EXISTS events(rv INTEGER PRIMARY KEY, type INTEGER NOT NULL,"
    " key TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL, prev TEXT,"
    " ts INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX IF NOT EXISTS events_key ON events(key, rv);"
    "CREATE TABLE IF NOT EXISTS owners(owner TEXT NOT NULL, key TEXT NOT NULL, ns TEXT NOT NULL,"
    " name TEXT NOT NULL, PRIMARY KEY(owner, key, ns, name)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS owners_dep ON owners(key, ns, name);";

static const char migrate_sql[] =
    "BEGIN;"
    "ALTER TABLE objects ADD COLUMN deleting INTEGER NOT NULL DEFAULT 0;"
    "UPDATE objects SET deleting=1 WHERE "
    " json_extract(data,'$.metadata.deletionTimestamp') IS NOT NULL;"
    "DROP INDEX IF EXISTS objects_uid;"
    "DROP INDEX IF EXISTS objects_deleting;"
    "COMMIT;";

/* After schema_sql and any migration. */
static const char index_sql[] =
    "CREATE INDEX IF NOT EXISTS objects_uid_live ON objects(uid, deleting);"
    "CREATE INDEX IF NOT EXISTS objects_dying ON objects(key, ns, name) WHERE deleting=1;";

#define KEPT_BUCKETS 1024
#define KEPT_MAX 512 /* entries; the one kept longest ago goes first */

typedef struct kept {
    struct kept *next;          /* in its bucket */
    struct kept *older, *newer; /* in the order they were kept */
    uint64_t hash;
    char *id; /* key, ns and name, each ended by '\0' */
    size_t id_len;
    json_t *obj; /* never modified while kept */
    char *text;  /* the stored text it parses from */
    size_t len;
} kept;

struct fakeapi__store {
    pthread_mutex_t mu;
    kept *kept[KEPT_BUCKETS];
    kept *oldest, *newest;
    size_t kept_n;
    sqlite3 *db;
    bool in_memory; /* never reopened: the revision need not be persisted */
    sqlite3_stmt *q[Q_MAX];
    uint64_t rev;       /* latest revision, committed or inside the open txn */
    uint64_t rev_begin; /* rev when the open transaction began */
    uint64_t compacted;
    uint64_t compacted_begin; /* compacted when the open transaction began */
    long hist_len;            /* events kept, maintained in memory */
    long hist_begin;          /* hist_len when the open transaction began */
    int64_t event_ts;         /* stamped on the next events (fakeapi__store_stamp) */
};

/* An object's identity as one byte string: key, ns and name, each ended by '\0'. */
static size_t kept_id(const char *key, const char *ns, const char *name, char *out, size_t cap)
{
    size_t a = strlen(key) + 1, b = strlen(ns ? ns : "") + 1, c = strlen(name) + 1;
    if (a + b + c > cap)
        return 0;
    memcpy(out, key, a);
    memcpy(out + a, ns ? ns : "", b);
    memcpy(out + a + b, name, c);
    return a + b + c;
}

static uint64_t kept_hash(const char *id, size_t len)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)id[i]) * 1099511628211ULL;
    return h;
}

static kept **kept_find(fakeapi__store *s, const char *id, size_t len, uint64_t h)
{
    kept **p = &s->kept[h % KEPT_BUCKETS];
    while (*p && ((*p)->hash != h || (*p)->id_len != len || memcmp((*p)->id, id, len)))
        p = &(*p)->next;
    return p;
}

static void kept_free(kept *k)
{
    json_decref(k->obj);
    free(k->text);
    free(k->id);
    free(k);
}

static void kept_clear(fakeapi__store *s)
{
    for (size_t i = 0; i < KEPT_BUCKETS; i++) {
        while (s->kept[i]) {
            kept *k = s->kept[i];
            s->kept[i] = k->next;
            kept_free(k);
        }
    }
    s->kept_n = 0;
    s->oldest = s->newest = NULL;
}

/* Remove the entry *p points to (its bucket's link) and free it. */
static void kept_unlink(fakeapi__store *s, kept **p)
{
    kept *k = *p;
    *p = k->next;
    if (k->older)
        k->older->newer = k->newer;
    else
        s->oldest = k->newer;
    if (k->newer)
        k->newer->older = k->older;
    else
        s->newest = k->older;
    kept_free(k);
    s->kept_n--;
}

/* Forget the entry kept longest ago. */
static void kept_evict(fakeapi__store *s)
{
    kept *k = s->oldest;
    kept **p = &s->kept[k->hash % KEPT_BUCKETS];
    while (*p != k)
        p = &(*p)->next;
    kept_unlink(s, p);
}

static void kept_drop(fakeapi__store *s, const char *key, const char *ns, const char *name)
{
    char id[1024];
    size_t len = kept_id(key, ns, name, id, sizeof id);
    if (!len || !s->kept_n)
        return;
    kept **p = kept_find(s, id, len, kept_hash(id, len));
    if (*p)
        kept_unlink(s, p);
}

void fakeapi__store_keep(fakeapi__store *s, const char *key, const char *ns, const char *name,
                         json_t *obj, const char *text, size_t text_len)
{
    char id[1024];
    size_t len = kept_id(key, ns, name, id, sizeof id);
    if (!len || !obj || !text)
        return;
    kept_drop(s, key, ns, name);
    if (s->kept_n >= KEPT_MAX)
        kept_evict(s);
    uint64_t h = kept_hash(id, len);
    kept *k = calloc(1, sizeof *k);
    char *copy = malloc(len);
    char *t = malloc(text_len + 1);
    if (!k || !copy || !t) {
        free(k);
        free(copy);
        free(t);
        return;
    }
    memcpy(copy, id, len);
    memcpy(t, text, text_len);
    t[text_len] = '\0';
    k->hash = h;
    k->id = copy;
    k->id_len = len;
    k->obj = json_incref(obj);
    k->text = t;
    k->len = text_len;
    kept **p = kept_find(s, id, len, h);
    *p = k;
    k->older = s->newest;
    if (s->newest)
        s->newest->newer = k;
    else
        s->oldest = k;
    s->newest = k;
    s->kept_n++;
}

/* The kept entry of an object, NULL if none is kept. */
static kept *kept_entry(fakeapi__store *s, const char *key, const char *ns, const char *name)
{
    char id[1024];
    size_t len = s->kept_n ? kept_id(key, ns, name, id, sizeof id) : 0;
    if (!len)
        return NULL;
    return *kept_find(s, id, len, kept_hash(id, len));
}

static json_t *kept_get(fakeapi__store *s, const char *key, const char *ns, const char *name)
{
    kept *k = kept_entry(s, key, ns, name);
    return k ? k->obj : NULL;
}

char *fakeapi__store_kept_text(fakeapi__store *s, const char *key, const char *ns, const char *name,
                               const json_t *obj, size_t *len)
{
    kept *k = kept_entry(s, key, ns, name);
    if (!k || k->obj != obj)
        return NULL;
    char *copy = malloc(k->len + 1);
    if (copy) {
        memcpy(copy, k->text, k->len + 1);
        *len = k->len;
    }
    return copy;
}

static sqlite3_stmt *stmt(fakeapi__store *s, int which)
{
    sqlite3_stmt *st = s->q[which];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return st;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

/* Run a statement that returns no rows: 0 or -1. */
static int run(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

static long count_rows(sqlite3_stmt *st)
{
    long n = sqlite3_step(st) == SQLITE_ROW ? (long)sqlite3_column_int64(st, 0) : -1;
    sqlite3_reset(st);
    return n;
}

static int set_meta(fakeapi__store *s, const char *k, uint64_t v)
{
    sqlite3_stmt *st = stmt(s, Q_SET_META);
    bind_text(st, 1, k);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)v);
    return run(st);
}

static uint64_t get_meta(fakeapi__store *s, const char *k)
{
    sqlite3_stmt *st;
    uint64_t v = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT v FROM meta WHERE k=?1", -1, &st, NULL) != SQLITE_OK)
        return 0;
    bind_text(st, 1, k);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Add objects.deleting to a store written before it existed. 0 or -1. */
static int migrate(fakeapi__store *s)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT deleting FROM objects LIMIT 0", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_finalize(st);
        return 0;
    }
    if (sqlite3_exec(s->db, migrate_sql, NULL, NULL, NULL) == SQLITE_OK)
        return 0;
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

/* An in-memory store's first buffer: a 1,000-pod Deployment run ends at 35 MB. */
#define STORE_ROOM ((sqlite3_int64)64 << 20)

/* Open the connection: the file at path, or a private memdb database. */
static int open_db(fakeapi__store *s, const char *path)
{
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (path)
        return sqlite3_open_v2(path, &s->db, flags, NULL) == SQLITE_OK ? 0 : -1;
    /* No leading '/' in the name: the database is private to this connection. */
    if (sqlite3_open_v2("file:fakeapi?vfs=memdb", &s->db, flags | SQLITE_OPEN_URI, NULL) ==
        SQLITE_OK) {
        /* Room to grow into: memdb doubles its buffer by realloc, and every
         * doubling copied the whole store into new memory that was then
         * faulted in again (a tenth of a 1,000-pod run). Address space
         * only: a page is touched when the store first writes it. Without
         * the room (no memory for it) memdb grows as before. */
        sqlite3_int64 room = STORE_ROOM;
        unsigned char *buf = sqlite3_malloc64((sqlite3_uint64)room);
        if (buf)
            sqlite3_deserialize(s->db, "main", buf, 0, room,
                                SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE);
        /* memdb stops at 1 GiB by default; a ":memory:" store had no limit. */
        sqlite3_int64 limit = (sqlite3_int64)1 << 40;
        sqlite3_file_control(s->db, "main", SQLITE_FCNTL_SIZE_LIMIT, &limit);
        return 0;
    }
    /* An SQLite built without memdb (SQLITE_OMIT_DESERIALIZE). */
    sqlite3_close(s->db);
    s->db = NULL;
    return sqlite3_open_v2(":memory:", &s->db, flags, NULL) == SQLITE_OK ? 0 : -1;
}

/* The in-memory store a close kept for the next open (NULL: none), as the
 * close left it: the next open empties it. Emptying it at close cost a run
 * that opens no other store (a scenario, a benchmark) a walk of every page
 * and a free of every kept tree for nothing, in its teardown. */
static pthread_mutex_t parked_mu = PTHREAD_MUTEX_INITIALIZER;
static fakeapi__store *parked;

static int empty_store(fakeapi__store *s);
static void free_store(fakeapi__store *s);

static fakeapi__store *take_parked(void)
{
    pthread_mutex_lock(&parked_mu);
    fakeapi__store *s = parked;
    parked = NULL;
    pthread_mutex_unlock(&parked_mu);
    if (s && empty_store(s) < 0) {
        free_store(s);
        s = NULL;
    }
    return s;
}

/* Empty an in-memory store as a new one would be: 0, or -1 if it cannot
 * be (then it is closed instead). */
static int empty_store(fakeapi__store *s)
{
    for (int i = 0; i < Q_MAX; i++)
        sqlite3_reset(s->q[i]);
    if (!sqlite3_get_autocommit(s->db) && run(s->q[Q_ROLLBACK]) < 0)
        return -1;
    if (sqlite3_exec(s->db,
                     "DELETE FROM meta; DELETE FROM objects; DELETE FROM events;"
                     " DELETE FROM owners;",
                     NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    s->rev = s->rev_begin = 0;
    s->compacted = s->compacted_begin = 0;
    s->hist_len = s->hist_begin = 0;
    s->event_ts = 0;
    kept_clear(s);
    return 0;
}

int fakeapi__store_open(const char *path, fakeapi__store **out, char *err, size_t errlen)
{
    if (!path && (*out = take_parked()))
        return 0;
    fakeapi__store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pthread_mutex_init(&s->mu, NULL);
    s->in_memory = !path;
    if (open_db(s, path) < 0)
        goto fail;
    /* In memory: journal_mode=MEMORY, not OFF, which would make ROLLBACK (dry
     * runs, failed transactions) a no-op that keeps half-written changes.
     * Pages of 2 KiB, not 4: a write copies every page it touches into the
     * journal first, and a smaller page is less to copy; it cost 15k fewer
     * instructions a write, though most objects (2-4 KB) now spill into an
     * overflow page. */
    const char *pragmas =
        path ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
             : "PRAGMA page_size=2048; PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;";
    if (sqlite3_exec(s->db, pragmas, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(s->db, schema_sql, NULL, NULL, NULL) != SQLITE_OK || migrate(s) < 0 ||
        sqlite3_exec(s->db, index_sql, NULL, NULL, NULL) != SQLITE_OK)
        goto fail;
    for (int i = 0; i < Q_MAX; i++)
        if (sqlite3_prepare_v3(s->db, queries[i], -1, SQLITE_PREPARE_PERSISTENT, &s->q[i], NULL) !=
            SQLITE_OK)
            goto fail;
    s->rev = get_meta(s, "rev");
    s->compacted = get_meta(s, "compacted");
    s->hist_len = count_rows(stmt(s, Q_HIST_LEN));
    *out = s;
    return 0;
fail:
    snprintf(err, errlen, "sqlite: %s: %s",
             path ? path : ":memory:", s->db ? sqlite3_errmsg(s->db) : "cannot open");
    fakeapi__store_close(s);
    return -1;
}

void fakeapi__store_close(fakeapi__store *s)
{
    if (!s)
        return;
    if (s->in_memory && s->q[Q_MAX - 1]) {
        pthread_mutex_lock(&parked_mu);
        fakeapi__store *old = parked;
        parked = old ? old : s;
        pthread_mutex_unlock(&parked_mu);
        if (!old)
            return;
    }
    free_store(s);
}

static void free_store(fakeapi__store *s)
{
    for (int i = 0; i < Q_MAX; i++)
        sqlite3_finalize(s->q[i]);
    sqlite3_close(s->db);
    kept_clear(s);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

void fakeapi__store_lock(fakeapi__store *s)
{
    pthread_mutex_lock(&s->mu);
}

void fakeapi__store_unlock(fakeapi__store *s)
{
    pthread_mutex_unlock(&s->mu);
}

uint64_t fakeapi__store_rev(fakeapi__store *s)
{
    return s->rev;
}

uint64_t fakeapi__store_compacted(fakeapi__store *s)
{
    return s->compacted;
}

int fakeapi__store_begin(fakeapi__store *s)
{
    s->rev_begin = s->rev;
    s->hist_begin = s->hist_len;
    s->compacted_begin = s->compacted;
    return run(stmt(s, Q_BEGIN));
}

int fakeapi__store_commit(fakeapi__store *s)
{
    if (!s->in_memory && s->rev != s->rev_begin && set_meta(s, "rev", s->rev) < 0) {
        fakeapi__store_rollback(s);
        return -1;
    }
    if (run(stmt(s, Q_COMMIT)) < 0) {
        fakeapi__store_rollback(s);
        return -1;
    }
    return 0;
}

void fakeapi__store_rollback(fakeapi__store *s)
{
    run(stmt(s, Q_ROLLBACK));
    /* Nothing was kept inside the transaction (keep comes after a commit)
     * and its writes dropped what they replaced: what stays kept is what
     * the table holds again. */
    s->rev = s->rev_begin;
    s->hist_len = s->hist_begin;
    s->compacted = s->compacted_begin; /* a compaction inside it is undone too */
}

uint64_t fakeapi__store_next_rev(fakeapi__store *s)
{
    return ++s->rev;
}

static void bind_key(sqlite3_stmt *st, const char *key, const char *ns, const char *name)
{
    bind_text(st, 1, key);
    bind_text(st, 2, ns ? ns : "");
    bind_text(st, 3, name);
}

int fakeapi__store_get_text(fakeapi__store *s, const char *key, const char *ns, const char *name,
                            char **text, size_t *len)
{
    sqlite3_stmt *st = stmt(s, Q_GET);
    bind_key(st, key, ns, name);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(st);
        return 1;
    }
    if (rc != SQLITE_ROW) {
        sqlite3_reset(st);
        return -1;
    }
    size_t n = (size_t)sqlite3_column_bytes(st, 0);
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, sqlite3_column_text(st, 0), n);
        p[n] = '\0';
    }
    sqlite3_reset(st);
    if (!p)
        return -1;
    *text = p;
    if (len)
        *len = n;
    return 0;
}

int fakeapi__store_state(fakeapi__store *s, const char *key, const char *ns, const char *name)
{
    sqlite3_stmt *st = stmt(s, Q_STATE);
    bind_key(st, key, ns, name);
    int rc = sqlite3_step(st);
    int out = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : rc == SQLITE_DONE ? 2 : -1;
    sqlite3_reset(st);
    return out;
}

int fakeapi__store_get(fakeapi__store *s, const char *key, const char *ns, const char *name,
                       json_t **out)
{
    json_t *k = kept_get(s, key, ns, name);
    if (k) {
        json_t *copy = json_deep_copy(k);
        if (!copy)
            return -1;
        *out = copy;
        return 0;
    }
    char *text;
    size_t len;
    int rc = fakeapi__store_get_text(s, key, ns, name, &text, &len);
    if (rc != 0)
        return rc;
    json_t *v = kh_json_loadb(text, len, 0, NULL);
    free(text);
    if (!v)
        return -1;
    *out = v;
    return 0;
}

int fakeapi__store_get_shared(fakeapi__store *s, const char *key, const char *ns, const char *name,
                              json_t **out)
{
    json_t *k = kept_get(s, key, ns, name);
    if (k) {
        *out = json_incref(k);
        return 0;
    }
    return fakeapi__store_get(s, key, ns, name, out);
}

/* Whether text's metadata.deletionTimestamp is set: 1, 0, or -1 on error.
 * Most objects do not name it at all, which saves parsing them. */
static int text_deleting(fakeapi__store *s, const char *text)
{
    if (!strstr(text, "\"deletionTimestamp\""))
        return 0;
    sqlite3_stmt *st = stmt(s, Q_IS_DELETING);
    bind_text(st, 1, text);
    int rc = sqlite3_step(st);
    int out = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_reset(st);
    return out;
}

int fakeapi__store_put(fakeapi__store *s, const char *key, const char *ns, const char *name,
                       const char *uid, uint64_t rv, const char *labels, const char *text)
{
    kept_drop(s, key, ns, name);
    int deleting = text ? text_deleting(s, text) : 0;
    if (deleting < 0)
        return -1;
    for (int q = Q_PUT; q <= Q_PUT_IDS; q++) {
        sqlite3_stmt *st = stmt(s, q);
        bind_key(st, key, ns, name);
        bind_text(st, 4, uid ? uid : "");
        sqlite3_bind_int64(st, 5, (sqlite3_int64)rv);
        bind_text(st, 6, labels);
        bind_text(st, 7, text);
        sqlite3_bind_int(st, 8, deleting);
        if (run(st) < 0)
            return -1;
        if (sqlite3_changes(s->db) > 0)
            return 0;
    }
    return -1;
}

int fakeapi__store_del(fakeapi__store *s, const char *key, const char *ns, const char *name)
{
    kept_drop(s, key, ns, name);
    sqlite3_stmt *st = stmt(s, Q_DEL);
    bind_key(st, key, ns, name);
    if (run(st) < 0)
        return -1;
    return fakeapi__store_set_owners(s, key, ns, name, NULL);
}

int fakeapi__store_add_event(fakeapi__store *s, uint64_t rv, int type, const char *key,
                             const char *ns, const char *name, const char *text, const char *prev)
{
    sqlite3_stmt *st = stmt(s, Q_EVENT);
    sqlite3_bind_int64(st, 1, (sqlite3_int64)rv);
    sqlite3_bind_int(st, 2, type);
    bind_text(st, 3, key);
    bind_text(st, 4, ns ? ns : "");
    bind_text(st, 5, name);
    bind_text(st, 6, text);
    bind_text(st, 7, prev);
    sqlite3_bind_int64(st, 8, s->event_ts);
    if (run(st) < 0)
        return -1;
    s->hist_len++;
    return 0;
}

void fakeapi__store_stamp(fakeapi__store *s, int64_t ts)
{
    s->event_ts = ts;
}

uint64_t fakeapi__store_rev_before(fakeapi__store *s, int64_t ts)
{
    sqlite3_stmt *st = stmt(s, Q_AGE_RV);
    sqlite3_bind_int64(st, 1, ts);
    uint64_t rv = sqlite3_step(st) == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return rv;
}

int fakeapi__store_scan(fakeapi__store *s, const char *key, const char *ns, const char *after_ns,
                        const char *after_name, fakeapi__store_scan_fn cb, void *ud)
{
    sqlite3_stmt *st;
    if (ns) {
        st = stmt(s, Q_SCAN_NS);
        bind_key(st, key, ns, after_name ? after_name : "");
    } else {
        st = stmt(s, Q_SCAN_ALL);
        bind_key(st, key, after_ns ? after_ns : "", after_name ? after_name : "");
        /* (ns,name) > ("", "") would skip cluster-scoped name ""; names are never empty. */
    }
    int rc, ret = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ret = cb(ud, (const char *)sqlite3_column_text(st, 0),
                 (const char *)sqlite3_column_text(st, 1), (const char *)sqlite3_column_text(st, 2),
                 (const char *)sqlite3_column_text(st, 3), (size_t)sqlite3_column_bytes(st, 3));
        if (ret != 0)
            break;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        ret = -1;
    sqlite3_reset(st);
    return ret < 0 ? ret : 0;
}

static int load_visit(void *ud, const char *ns, const char *name, const char *labels,
                      const char *text, size_t len)
{
    (void)ns, (void)name, (void)labels;
    json_t *obj = kh_json_loadb(text, len, 0, NULL);
    return obj && json_array_append_new(ud, obj) == 0 ? 0 : -1;
}

int fakeapi__store_load_all(fakeapi__store *s, const char *key, const char *ns, json_t *arr)
{
    return fakeapi__store_scan(s, key, ns, NULL, NULL, load_visit, arr);
}

long fakeapi__store_count(fakeapi__store *s, const char *key, const char *ns)
{
    sqlite3_stmt *st = stmt(s, ns ? Q_COUNT_NS : Q_COUNT_ALL);
    bind_text(st, 1, key);
    if (ns)
        bind_text(st, 2, ns);
    return count_rows(st);
}

long fakeapi__store_history_len(fakeapi__store *s)
{
    return s->hist_len;
}

int fakeapi__store_history(fakeapi__store *s, const char *key, uint64_t after,
                           fakeapi__store_hist_fn cb, void *ud)
{
    sqlite3_stmt *st;
    if (key) {
        st = stmt(s, Q_HIST_KEY);
        bind_text(st, 1, key);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)after);
    } else {
        st = stmt(s, Q_HIST_ALL);
        sqlite3_bind_int64(st, 1, (sqlite3_int64)after);
    }
    int rc, ret = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ret = cb(ud, (uint64_t)sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1),
                 (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3),
                 (const char *)sqlite3_column_text(st, 4), (const char *)sqlite3_column_text(st, 5),
                 (const char *)sqlite3_column_text(st, 6));
        if (ret != 0)
            break;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        ret = -1;
    sqlite3_reset(st);
    return ret < 0 ? ret : 0;
}

int fakeapi__store_compact(fakeapi__store *s, uint64_t upto)
{
    if (upto > s->rev)
        upto = s->rev;
    if (upto <= s->compacted)
        return 0;
    sqlite3_stmt *st = stmt(s, Q_COMPACT);
    sqlite3_bind_int64(st, 1, (sqlite3_int64)upto);
    if (run(st) < 0)
        return -1;
    /* Events are counted, not recounted: count(*) reads the whole history,
     * and a store at its bound compacts on every write. */
    long dropped = (long)sqlite3_changes(s->db);
    if (set_meta(s, "compacted", upto) < 0)
        return -1;
    s->compacted = upto;
    s->hist_len -= dropped;
    return 0;
}

/* Whether uids (an array of strings, may be NULL) names exactly the owners
 * recorded for an object, as a set: 1 or 0, -1 on error. */
static int owners_same(fakeapi__store *s, const char *key, const char *ns, const char *name,
                       const json_t *uids)
{
    size_t n = json_array_size(uids), distinct = 0;
    for (size_t i = 0; i < n; i++) {
        const char *u = json_string_value(json_array_get(uids, i));
        if (!u)
            return 0; /* the write reports it */
        size_t j = 0;
        while (j < i && strcmp(json_string_value(json_array_get(uids, j)), u))
            j++;
        distinct += j == i;
    }
    sqlite3_stmt *st = stmt(s, Q_OWN_LIST);
    bind_key(st, key, ns, name);
    size_t rows = 0;
    int rc = SQLITE_DONE, same = 1;
    while (same && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *owner = (const char *)sqlite3_column_text(st, 0);
        size_t i = 0;
        while (i < n && strcmp(json_string_value(json_array_get(uids, i)), owner))
            i++;
        same = i < n;
        rows++;
    }
    if (same && rc != SQLITE_DONE)
        same = -1;
    sqlite3_reset(st);
    return same == 1 && rows != distinct ? 0 : same;
}

int fakeapi__store_set_owners(fakeapi__store *s, const char *key, const char *ns, const char *name,
                              const json_t *owner_uids)
{
    /* Most updates keep their owners: reading the rows costs less than
     * replacing them. */
    int same = owners_same(s, key, ns, name, owner_uids);
    if (same != 0)
        return same < 0 ? -1 : 0;
    sqlite3_stmt *st = stmt(s, Q_OWN_DEL);
    bind_key(st, key, ns, name);
    if (run(st) < 0)
        return -1;
    size_t i;
    json_t *uid;
    json_array_foreach(owner_uids, i, uid)
    {
        st = stmt(s, Q_OWN_ADD);
        bind_text(st, 1, json_string_value(uid));
        bind_text(st, 2, key);
        bind_text(st, 3, ns ? ns : "");
        bind_text(st, 4, name);
        if (!json_string_value(uid) || run(st) < 0)
            return -1;
    }
    return 0;
}

static int visit_keys(sqlite3_stmt *st, fakeapi__store_dep_fn cb, void *ud)
{
    int rc, ret = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ret =
            cb(ud, (const char *)sqlite3_column_text(st, 0),
               (const char *)sqlite3_column_text(st, 1), (const char *)sqlite3_column_text(st, 2));
        if (ret != 0)
            break;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        ret = -1;
    sqlite3_reset(st);
    return ret < 0 ? ret : 0;
}

int fakeapi__store_dependents(fakeapi__store *s, const char *owner_uid, fakeapi__store_dep_fn cb,
                              void *ud)
{
    sqlite3_stmt *st = stmt(s, Q_DEPS);
    bind_text(st, 1, owner_uid);
    return visit_keys(st, cb, ud);
}

int fakeapi__store_deleting(fakeapi__store *s, fakeapi__store_dep_fn cb, void *ud)
{
    return visit_keys(stmt(s, Q_DELETING), cb, ud);
}

int fakeapi__store_orphans(fakeapi__store *s, fakeapi__store_dep_fn cb, void *ud)
{
    return visit_keys(stmt(s, Q_ORPHANS), cb, ud);
}

int fakeapi__store_uid_exists(fakeapi__store *s, const char *uid)
{
    sqlite3_stmt *st = stmt(s, Q_UID);
    bind_text(st, 1, uid);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int fakeapi__store_uid_live(fakeapi__store *s, const char *uid)
{
    sqlite3_stmt *st = stmt(s, Q_UID_LIVE);
    bind_text(st, 1, uid);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

const char *fakeapi__store_errmsg(fakeapi__store *s)
{
    return sqlite3_errmsg(s->db);
}

int fakeapi__store_compact_locking(fakeapi__store *s, uint64_t upto)
{
    fakeapi__store_lock(s);
    int rc = fakeapi__store_compact(s, upto ? upto : fakeapi__store_rev(s));
    fakeapi__store_unlock(s);
    return rc;
}

uint64_t fakeapi__store_rev_locking(fakeapi__store *s)
{
    fakeapi__store_lock(s);
    uint64_t rv = fakeapi__store_rev(s);
    fakeapi__store_unlock(s);
    return rv;
}
