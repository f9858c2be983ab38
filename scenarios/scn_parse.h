/*
 * scn_parse.h - the scenario parser's shared state and helpers (private):
 * scenario.c reads the top level and the steps, scenario_cond.c the
 * conditions, scn_parse.c holds what both use (errors with file, line and
 * field; typed getters; durations; manifests; object references).
 *
 * A parser is used by one thread, for one file.
 */
#ifndef SCN_PARSE_H
#define SCN_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "kh/yaml.h"
#include "scn/scenario.h"

#define MAX_LIST_DEPTH 8 /* a List inside a List ... */
#define FIELD_LEN 128

typedef struct scn__priv {
    json_t *doc;  /* the scenario document */
    json_t *pool; /* strings made while parsing */
} scn__priv;

typedef struct scn__parser {
    const char *file; /* as the caller named it, for messages */
    char *dir;        /* fixture paths are relative to it; "" for the cwd */
    kh_yaml_marks *marks;
    scn_error *err;
    scn_scenario *s;
    scn__priv *pv;
    int hint;       /* line of the innermost mapping being read */
    json_t *faults; /* names of the fault rules in force at this step */
    int n_replicas; /* manager replicas: the most any controller asks for */

    json_t *replica_names; /* the names earlier steps gave replicas ("as") */
    bool history_ok;       /* parsing a top-level invariant: singleLeader is allowed */
} scn__parser;

typedef struct scn__ref {
    const char *api_version, *kind, *ns, *name;
} scn__ref;

/* ---- errors and small helpers ---- */

__attribute__((format(printf, 3, 4))) void scn__sub(char *dst, size_t len, const char *fmt, ...);

int scn__line_of(const scn__parser *p, const json_t *v);

/* Makes v's line the one errors inside it fall back on; returns the old. */
int scn__enter(scn__parser *p, const json_t *v);

/* An input error at node (or the innermost mapping, for nodes without a line). */
__attribute__((format(printf, 4, 5))) int scn__fail(scn__parser *p, const json_t *node,
                                                    const char *field, const char *fmt, ...);

int scn__oom(scn__parser *p);

/* A string that lives as long as the scenario. */
const char *scn__keep(scn__parser *p, const char *s);

/* Compact JSON of v, kept; "" if it cannot be printed. */
const char *scn__keep_text(scn__parser *p, const json_t *v);

/* "a string", "an integer", ... for "expected X, found Y". */
const char *scn__type_name(const json_t *v);

int scn__join_keys(const char *const *keys, char *buf, size_t len);

bool scn__is_one_of(const char *s, const char *const *keys);

/* Every key of obj is one of allowed. */
int scn__check_keys(scn__parser *p, const json_t *obj, const char *field,
                    const char *const *allowed);

int scn__need_type(scn__parser *p, const json_t *v, const char *field, json_type type,
                   const char *what);

/* obj.key as a string into *out (untouched when absent and optional). */
int scn__get_string(scn__parser *p, const json_t *obj, const char *key, const char *field,
                    bool required, const char **out);

/* obj.key as an integer in [lo, hi] into *out (untouched when absent). */
int scn__get_int(scn__parser *p, const json_t *obj, const char *key, const char *field, long lo,
                 long hi, long *out);

int scn__get_duration(scn__parser *p, const json_t *v, const char *field, int64_t *out);

/*
 * Appends obj to into, expanding a List (kind List or FooList with items,
 * as kubectl does). where names it in messages: the field of an inline
 * object, or the file and document of a loaded one (then field and node
 * are where the file is named).
 */
int scn__add_object(scn__parser *p, json_t *obj, const json_t *node, const char *field,
                    const char *where, int depth, json_t *into);

/* Objects (an object, a List, or a list of them) inline at v. */
int scn__add_inline(scn__parser *p, json_t *v, const char *field, json_t *into);

/* The objects of the manifest file named by node (a string), YAML or JSON. */
int scn__add_file(scn__parser *p, const json_t *node, const char *field, json_t *into);

int scn__get_ref(scn__parser *p, const json_t *obj, const char *field, bool need_name, scn__ref *r);

/* ---- replay steps (scenario_replay.c) ---- */
int scn__step_request(scn__parser *p, json_t *body, const char *field, scn_step *st);
int scn__step_expect_write(scn__parser *p, json_t *body, const char *field, scn_step *st);
/* Does a traced request (verb, path without query, status) satisfy an
 * EXPECT_WRITE step? */
bool scn__write_matches(const scn_step *st, const char *verb, const char *path, int status);
/* Does the body have hold every field of want (NULL: yes)? If not, the
 * path of the first that differs ("spec.replicas") in at. */
bool scn__body_holds(const json_t *want, const json_t *have, char *at, size_t len);

/* ---- conditions ---- */
void scn__cond_free(scn_cond *c);

int scn__parse_cond(scn__parser *p, json_t *v, const char *field, scn_cond **out);

#endif
