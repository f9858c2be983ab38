/*
 * table_cells.h - what the Table printers share: the column spec and printer
 * types, reading fields out of an object's JSON, and the cell formats the real
 * server's printers use over and over (ages, label maps, label selectors,
 * container names and images).
 *
 * A printer (table_cols.c and its table_cols_*.c files) is data: one column
 * spec per column, each with a cell function that reads the object and makes
 * that one cell. table.c turns a printer into a Table document.
 *
 * Thread-safety: every function is reentrant and only reads its arguments.
 */
#ifndef FAKEAPI_TABLE_CELLS_H
#define FAKEAPI_TABLE_CELLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define FAKEAPI__MAX_CELL 4096 /* longest cell text (images, ports, ...); longer truncates */

/*
 * One cell of obj: a new JSON value the caller owns (a string, integer or
 * boolean, as the real printer's Go value would encode), or NULL on
 * allocation failure. arg is the column spec's arg (a path, a field table).
 */
typedef json_t *(*fakeapi__cell_fn)(const json_t *obj, int64_t now_ns, const void *arg);

typedef struct fakeapi__colspec {
    const char *name;   /* "Ready" */
    const char *type;   /* "string", "integer", "boolean", "date" */
    const char *format; /* "name" for the Name column, else "" */
    int priority;       /* 0 always shown; 1 only with `-o wide` */
    const char *desc;
    fakeapi__cell_fn cell;
    const void *arg;
} fakeapi__colspec;

/* The printer of one built-in kind: its columns in the real server's order. */
typedef struct fakeapi__printer {
    const char *group; /* "" for core */
    const char *kind;  /* "Pod" */
    const fakeapi__colspec *cols;
    size_t ncols;
    /* Optional: the row's conditions (a new array), or NULL for none. */
    json_t *(*conditions)(const json_t *obj);
    /* Optional: the order of a list's rows (qsort-style on two objects); NULL keeps the list's. */
    int (*row_order)(const json_t *a, const json_t *b);
} fakeapi__printer;

#define FAKEAPI__COLS(a) a, sizeof a / sizeof a[0]

/* A field argument: a dotted path and the text or number used when it is absent. */
typedef struct fakeapi__field {
    const char *path;
    const char *dflt;
    json_int_t idflt;
} fakeapi__field;

extern const char fakeapi__desc_name[];
extern const char fakeapi__desc_age[];

/* ---- reading JSON ---- */

/* obj.a.b.c for a dotted path of plain keys; NULL when absent. Borrowed. */
const json_t *fakeapi__dig(const json_t *obj, const char *path);
const char *fakeapi__dig_str(const json_t *obj, const char *path);
/* An integer (a real is truncated) at path, or dflt. */
json_int_t fakeapi__dig_int(const json_t *obj, const char *path, json_int_t dflt);
/* True if obj's conditions array at path has type with status "True". */
bool fakeapi__has_condition(const json_t *obj, const char *path, const char *type);

/* ---- bounded cell text ---- */

typedef struct fakeapi__cellbuf {
    char s[FAKEAPI__MAX_CELL];
    size_t len;
} fakeapi__cellbuf;

void fakeapi__cb_init(fakeapi__cellbuf *b);
void fakeapi__cb_add(fakeapi__cellbuf *b, const char *s);
void fakeapi__cb_addf(fakeapi__cellbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append s, preceded by sep unless the buffer is empty. */
void fakeapi__cb_join(fakeapi__cellbuf *b, const char *sep, const char *s);
/* The text, or dflt when empty, as a new JSON string. */
json_t *fakeapi__cb_or(const fakeapi__cellbuf *b, const char *dflt);
/* s, or dflt when s is NULL or "", as a new JSON string. */
json_t *fakeapi__str_or(const char *s, const char *dflt);

/* ---- formats ---- */

/* translateTimestampSince: the human age of an RFC 3339 ts, absent when ts is NULL/"". */
json_t *fakeapi__since_cell(const char *ts, int64_t now_ns, const char *absent);
/* labels.FormatLabels of a string map: "a=1,b=2" sorted by key, "<none>" when empty. */
void fakeapi__label_map_text(const json_t *map, fakeapi__cellbuf *b);
/* metav1 LabelSelector as selector.String(): requirements sorted by key. */
void fakeapi__selector_text(const json_t *sel, fakeapi__cellbuf *b);
/* layoutContainerCells: "a,b" of field ("name"/"image") over podspec.containers. */
json_t *fakeapi__containers_cell(const json_t *podspec, const char *field);

/* ---- generic cells (arg in brackets) ---- */

json_t *fakeapi__cell_name(const json_t *o, int64_t now_ns, const void *arg);       /* - */
json_t *fakeapi__cell_age(const json_t *o, int64_t now_ns, const void *arg);        /* - */
json_t *fakeapi__cell_created_at(const json_t *o, int64_t now_ns, const void *arg); /* - */
json_t *fakeapi__cell_str(const json_t *o, int64_t now_ns, const void *arg);        /* field */
json_t *fakeapi__cell_int(const json_t *o, int64_t now_ns, const void *arg);        /* field */
json_t *fakeapi__cell_bool(const json_t *o, int64_t now_ns, const void *arg);       /* field */
json_t *fakeapi__cell_count(const json_t *o, int64_t now_ns, const void *arg);      /* field */
json_t *fakeapi__cell_since(const json_t *o, int64_t now_ns, const void *arg);      /* field */
json_t *fakeapi__cell_labels(const json_t *o, int64_t now_ns, const void *arg);     /* path */
json_t *fakeapi__cell_selector(const json_t *o, int64_t now_ns, const void *arg);   /* path */
json_t *fakeapi__cell_names(const json_t *o, int64_t now_ns, const void *arg);  /* podspec path */
json_t *fakeapi__cell_images(const json_t *o, int64_t now_ns, const void *arg); /* podspec path */

/* Column specs every workload shares. */
#define FAKEAPI__COL_NAME                                                                          \
    {                                                                                              \
        "Name", "string", "name", 0, fakeapi__desc_name, fakeapi__cell_name, NULL                  \
    }
#define FAKEAPI__COL_AGE                                                                           \
    {                                                                                              \
        "Age", "string", "", 0, fakeapi__desc_age, fakeapi__cell_age, NULL                         \
    }
#define FAKEAPI__COL_CONTAINERS(podspec)                                                           \
    {                                                                                              \
        "Containers", "string", "", 1, "Names of each container in the template.",                 \
            fakeapi__cell_names, podspec                                                           \
    }
#define FAKEAPI__COL_IMAGES(podspec)                                                               \
    {                                                                                              \
        "Images", "string", "", 1, "Images referenced by each container in the template.",         \
            fakeapi__cell_images, podspec                                                          \
    }

#endif
