/*
 * scenario.c - scenario files (YAML or JSON) into a checked scn_scenario.
 *
 * Everything is checked before anything runs: field names and types, paths,
 * regular expressions, durations, replica indexes, fault names, and the
 * fixture and manifest files, which are read here (relative to the
 * scenario's directory), so a run never meets a malformed input half way.
 * Every error names the file, the line (from kh_yaml's position table) and
 * the field ("steps[3].wait.timeout").
 *
 * Ownership: the parsed document stays alive in the scenario (priv->doc);
 * names and paths point into it. Strings made here (texts, selectors, file
 * names) live in priv->pool. Every json_t a step or condition holds is its
 * own reference.
 */
#include "scn/scenario.h"
#include "scn/state_mask.h"
#include "scenario_int.h"
#include "scn_parse.h"

#include "kc/cluster.h"
#include "kh/yaml.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_WAIT_NS (5 * 60 * INT64_C(1000000000))
#define DEFAULT_MAX_VIRTUAL_NS (24 * 3600 * INT64_C(1000000000))
#define MAX_REPLICAS 16

const char *scn_strerror(int code)
{
    switch (code) {
    case SCN_OK:
        return "ok";
    case SCN_ERR_NOMEM:
        return "out of memory";
    case SCN_ERR_INPUT:
        return "malformed scenario";
    case SCN_ERR_IO:
        return "cannot read file";
    case SCN_ERR_FAILED:
        return "scenario failed";
    case SCN_ERR_SETUP:
        return "cannot start the server or a manager";
    case SCN_ERR_INTERNAL:
        return "internal error";
    default:
        return "unknown error";
    }
}

int scn_error_format(const scn_error *e, char *buf, size_t len)
{
    int n;

    if (!e || !buf || len == 0)
        return -1;
    n = snprintf(buf, len, "%s", e->file[0] ? e->file : "<input>");
    if (e->line > 0 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ":%d", e->line);
    if (e->field[0] && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ": %s", e->field);
    if (n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ": %s", e->message);
    return n;
}

/* ---- steps ---- */

static const char *const step_kinds[] = {
    "apply",  "patch", "delete",  "scale",     "fault", "compact", "advance",     "wait",
    "expect", "crash", "restart", "partition", "heal",  "request", "expectWrite", NULL};

/* How many controllers run leader-elected (more than one replica). */
static size_t n_elected(const scn__parser *p)
{
    size_t n = 0;

    for (size_t i = 0; i < p->s->n_controllers; i++)
        n += p->s->controllers[i].replicas > 1;
    return n;
}

/* replica: leader, controller: NAME: NAME must be a leader-elected
 * controller of the scenario. */
static int parse_leader_of(scn__parser *p, const json_t *body, scn_step *st, const char *field)
{
    json_t *v = json_object_get(body, "controller");
    char f[FIELD_LEN];
    size_t i;

    scn__sub(f, sizeof f, "%s.controller", field);
    for (i = 0; i < p->s->n_controllers; i++)
        if (strcmp(p->s->controllers[i].name, st->replica_controller) == 0)
            break;
    if (i == p->s->n_controllers)
        return scn__fail(p, v, f, "the scenario runs no controller \"%s\"", st->replica_controller);
    if (p->s->controllers[i].replicas < 2)
        return scn__fail(p, v, f,
                         "controller \"%s\" is not leader-elected (it runs in 1 replica; "
                         "a controller with replicas above 1 elects on kube-system/%s)",
                         st->replica_controller, st->replica_controller);
    return 0;
}

/* replica: N, leader, or a name bound by an earlier step's "as"; then
 * "controller" (with leader only) and "as". */
static int parse_replica(scn__parser *p, const json_t *body, scn_step *st, const char *field)
{
    json_t *v = json_object_get(body, "replica");
    long r = 0;
    int rc;
    char f[FIELD_LEN];

    if ((rc = scn__get_string(p, body, "controller", field, false, &st->replica_controller)) != 0)
        return rc;
    scn__sub(f, sizeof f, "%s.replica", field);
    if (json_is_string(v) && strcmp(json_string_value(v), "leader") == 0) {
        if (st->replica_controller) {
            if ((rc = parse_leader_of(p, body, st, field)) != 0)
                return rc;
        } else if (n_elected(p) != 1) {
            return scn__fail(p, v, f,
                             "replica: leader needs exactly one leader-elected controller (one "
                             "with replicas above 1), or controller: NAME to say whose Lease; "
                             "the scenario has %zu",
                             n_elected(p));
        }
        st->replica_ref = json_string_value(v);
    } else if (json_is_string(v)) {
        if (!json_object_get(p->replica_names, json_string_value(v)))
            return scn__fail(p, v, f,
                             "no replica is named \"%s\" (expected N, leader, or a name given "
                             "by an earlier step's as)",
                             json_string_value(v));
        st->replica_ref = json_string_value(v);
    } else {
        if ((rc = scn__get_int(p, body, "replica", field, 0, MAX_REPLICAS - 1, &r)) != 0)
            return rc;
        if (r >= p->n_replicas)
            return scn__fail(p, v, f,
                             "replica %ld does not exist: the controllers run %d manager "
                             "replica%s (0..%d; replica i runs every controller whose replicas "
                             "is above i, the most replicas of any controller sets the count)",
                             r, p->n_replicas, p->n_replicas == 1 ? "" : "s", p->n_replicas - 1);
        st->replica = (int)r;
    }
    if (st->replica_controller && (!st->replica_ref || strcmp(st->replica_ref, "leader") != 0)) {
        scn__sub(f, sizeof f, "%s.controller", field);
        return scn__fail(p, json_object_get(body, "controller"), f,
                         "controller goes with replica: leader (it says whose Lease)");
    }
    if ((rc = scn__get_string(p, body, "as", field, false, &st->replica_as)) != 0)
        return rc;
    v = json_object_get(body, "as");
    scn__sub(f, sizeof f, "%s.as", field);
    if (st->replica_as && (!st->replica_as[0] || strcmp(st->replica_as, "leader") == 0))
        return scn__fail(p, v, f, "a replica's name cannot be empty or \"leader\"");
    if (st->replica_as && json_object_set(p->replica_names, st->replica_as, json_true()) != 0)
        return scn__oom(p);
    return 0;
}

static int step_apply(scn__parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const keys[] = {"file", "manifest", "fieldManager", "force", NULL};
    json_t *file, *manifest, *force;
    char f[FIELD_LEN];
    int rc;

    st->manifest = json_array();
    if (!st->manifest)
        return scn__oom(p);
    if (json_is_array(body) || (json_is_object(body) && json_object_get(body, "kind")))
        return scn__add_inline(p, body, field, st->manifest);
    if (!json_is_object(body))
        return scn__fail(p, body, field,
                         "expected {file: PATH}, {manifest: ...} or a list of objects, found %s",
                         scn__type_name(body));
    if ((rc = scn__check_keys(p, body, field, keys)) != 0 ||
        (rc = scn__get_string(p, body, "fieldManager", field, false, &st->field_manager)) != 0)
        return rc;
    force = json_object_get(body, "force");
    if (force && !json_is_boolean(force)) {
        scn__sub(f, sizeof f, "%s.force", field);
        return scn__fail(p, force, f, "expected true or false, found %s", scn__type_name(force));
    }
    if (force && !st->field_manager) {
        scn__sub(f, sizeof f, "%s.force", field);
        return scn__fail(p, force, f, "force needs fieldManager (a server-side apply)");
    }
    st->force = json_is_true(force);
    file = json_object_get(body, "file");
    manifest = json_object_get(body, "manifest");
    if (!file == !manifest)
        return scn__fail(p, body, field, "expected exactly one of file and manifest");
    if (file) {
        scn__sub(f, sizeof f, "%s.file", field);
        return scn__add_file(p, file, f, st->manifest);
    }
    scn__sub(f, sizeof f, "%s.manifest", field);
    rc = scn__add_inline(p, manifest, f, st->manifest);
    if (rc == 0 && json_array_size(st->manifest) == 0)
        rc = scn__fail(p, manifest, f, "no objects");
    return rc;
}

static int step_patch(scn__parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const keys[] = {"apiVersion", "kind",  "namespace",   "name",
                                       "type",       "patch", "subresource", NULL};
    static const char *const types[] = {"merge", "json", "strategic", NULL};
    static const char *const subresources[] = {"status", "scale", NULL};
    scn__ref r = {0};
    json_t *patch;
    char f[FIELD_LEN];
    int rc;

    st->patch_type = "merge";
    if ((rc = scn__check_keys(p, body, field, keys)) != 0 ||
        (rc = scn__get_ref(p, body, field, true, &r)) ||
        (rc = scn__get_string(p, body, "type", field, false, &st->patch_type)) != 0 ||
        (rc = scn__get_string(p, body, "subresource", field, false, &st->subresource)) != 0)
        return rc;
    if (st->subresource && !scn__is_one_of(st->subresource, subresources)) {
        scn__sub(f, sizeof f, "%s.subresource", field);
        return scn__fail(p, json_object_get(body, "subresource"), f,
                         "unknown subresource \"%s\"; expected status or scale", st->subresource);
    }
    if (!scn__is_one_of(st->patch_type, types)) {
        scn__sub(f, sizeof f, "%s.type", field);
        return scn__fail(p, json_object_get(body, "type"), f,
                         "unknown patch type \"%s\"; expected merge, json or strategic",
                         st->patch_type);
    }
    scn__sub(f, sizeof f, "%s.patch", field);
    patch = json_object_get(body, "patch");
    if (!patch)
        return scn__fail(p, body, f, "required field is missing");
    if (strcmp(st->patch_type, "json") == 0) {
        json_t *op;
        size_t i;
        if ((rc = scn__need_type(p, patch, f, JSON_ARRAY, "a list of JSON patch operations")) != 0)
            return rc;
        json_array_foreach(patch, i, op)
        {
            if (!json_is_string(json_object_get(op, "op")) ||
                !json_is_string(json_object_get(op, "path"))) {
                char fi[FIELD_LEN];
                scn__sub(fi, sizeof fi, "%s[%zu]", f, i);
                return scn__fail(p, op, fi, "a JSON patch operation needs op and path");
            }
        }
    } else if ((rc = scn__need_type(p, patch, f, JSON_OBJECT, "a mapping")) != 0) {
        return rc;
    }
    st->manifest = json_incref(patch);
    st->api_version = r.api_version;
    st->kind_name = r.kind;
    st->ns = r.ns;
    st->name = r.name;
    return 0;
}

static int step_target(scn__parser *p, json_t *body, const char *field, scn_step *st, bool scale)
{
    static const char *const del_keys[] = {"apiVersion", "kind", "namespace", "name", NULL};
    static const char *const scale_keys[] = {"apiVersion", "kind",     "namespace",
                                             "name",       "replicas", NULL};
    scn__ref r = {0};
    char f[FIELD_LEN];
    int rc;

    if ((rc = scn__check_keys(p, body, field, scale ? scale_keys : del_keys)) != 0 ||
        (rc = scn__get_ref(p, body, field, true, &r)) != 0)
        return rc;
    if (scale) {
        st->replicas = -1;
        if ((rc = scn__get_int(p, body, "replicas", field, 0, 1000000, &st->replicas)) != 0)
            return rc;
        scn__sub(f, sizeof f, "%s.replicas", field);
        if (st->replicas < 0)
            return scn__fail(p, body, f, "required field is missing");
    }
    st->api_version = r.api_version;
    st->kind_name = r.kind;
    st->ns = r.ns;
    st->name = r.name;
    return 0;
}

static int step_fault(scn__parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const add_keys[] = {"name", "rule", NULL};
    static const char *const remove_keys[] = {"remove", NULL};
    json_t *rule;
    char f[FIELD_LEN];
    int rc;

    if (json_object_get(body, "remove")) {
        if ((rc = scn__check_keys(p, body, field, remove_keys)) != 0 ||
            (rc = scn__get_string(p, body, "remove", field, true, &st->fault_name)) != 0)
            return rc;
        st->fault_remove = true;
        if (!json_object_get(p->faults, st->fault_name)) {
            scn__sub(f, sizeof f, "%s.remove", field);
            return scn__fail(p, json_object_get(body, "remove"), f,
                             "no fault named \"%s\" is in force here", st->fault_name);
        }
        json_object_del(p->faults, st->fault_name);
        return 0;
    }
    if ((rc = scn__check_keys(p, body, field, add_keys)) != 0 ||
        (rc = scn__get_string(p, body, "name", field, true, &st->fault_name)) != 0)
        return rc;
    if (json_object_get(p->faults, st->fault_name)) {
        scn__sub(f, sizeof f, "%s.name", field);
        return scn__fail(p, json_object_get(body, "name"), f,
                         "a fault named \"%s\" is already in force (remove it first)",
                         st->fault_name);
    }
    scn__sub(f, sizeof f, "%s.rule", field);
    rule = json_object_get(body, "rule");
    if (!rule)
        return scn__fail(p, body, f, "required field is missing");
    if ((rc = scn__need_type(p, rule, f, JSON_OBJECT,
                             "a fault rule (a mapping, docs/faults.md)")) != 0)
        return rc;
    st->rule = json_incref(rule);
    return json_object_set(p->faults, st->fault_name, json_true()) == 0 ? 0 : scn__oom(p);
}

static int step_crash(scn__parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const keys[] = {"replica", "controller", "as", "atWrite",
                                       "after",   "restart",    NULL};
    static const char *const match_keys[] = {"verb",      "subresource", "group", "resource",
                                             "namespace", "name",        NULL};
    json_t *after, *v;
    const char *key;
    char f[FIELD_LEN];
    int rc;

    if (json_is_string(body) && strcmp(json_string_value(body), "now") == 0)
        return 0;
    if (!json_is_object(body))
        return scn__fail(p, body, field,
                         "expected now, {replica: N}, {replica: N, atWrite: N} or "
                         "{replica: N, after: {verb, resource, ...}} (N: an index, leader or "
                         "a name; controller: C with leader: C's leader; as: NAME names it for "
                         "later steps)");
    if ((rc = scn__check_keys(p, body, field, keys)) != 0 ||
        (rc = parse_replica(p, body, st, field)) != 0 ||
        (rc = scn__get_int(p, body, "atWrite", field, 1, 1000000000, &st->crash_at_write)) != 0)
        return rc;
    v = json_object_get(body, "restart");
    if (v) {
        scn__sub(f, sizeof f, "%s.restart", field);
        if (!json_is_boolean(v))
            return scn__fail(p, v, f, "expected true or false, found %s", scn__type_name(v));
        if (json_is_true(v) && !json_object_get(body, "atWrite") && !json_object_get(body, "after"))
            return scn__fail(p, v, f,
                             "restart: true needs atWrite or after (a crash now is "
                             "followed by a restart step)");
        st->crash_restart = json_is_true(v);
    }
    after = json_object_get(body, "after");
    if (!after)
        return 0;
    scn__sub(f, sizeof f, "%s.after", field);
    if (json_object_get(body, "atWrite"))
        return scn__fail(p, after, f, "atWrite and after cannot both be given");
    if ((rc = scn__need_type(p, after, f, JSON_OBJECT, "a request match {verb, resource, ...}")) !=
            0 ||
        (rc = scn__check_keys(p, after, f, match_keys)) != 0)
        return rc;
    if (json_object_size(after) == 0)
        return scn__fail(p, after, f, "an empty match would crash at the next request; write now");
    json_object_foreach(after, key, v)
    {
        if (!json_is_string(v)) {
            char fk[FIELD_LEN];
            scn__sub(fk, sizeof fk, "%s.%s", f, key);
            return scn__fail(p, v, fk, "expected a string, found %s", scn__type_name(v));
        }
    }
    st->crash_after = json_incref(after);
    return 0;
}

static int step_replica_only(scn__parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const keys[] = {"replica", "controller", "as", NULL};
    int rc;

    if (json_is_null(body))
        return 0;
    if ((rc = scn__need_type(p, body, field, JSON_OBJECT,
                             "{replica: N, controller: C, as: NAME}")) != 0 ||
        (rc = scn__check_keys(p, body, field, keys)) != 0)
        return rc;
    return parse_replica(p, body, st, field);
}

static int step_wait(scn__parser *p, json_t *body, const char *field, scn_step *st)
{
    static const char *const keys[] = {"for", "timeout", NULL};
    json_t *v;
    char f[FIELD_LEN];
    int rc;

    if ((rc = scn__need_type(p, body, field, JSON_OBJECT, "{for: CONDITION, timeout: DURATION}")) !=
            0 ||
        (rc = scn__check_keys(p, body, field, keys)) != 0)
        return rc;
    st->duration_ns = DEFAULT_WAIT_NS;
    v = json_object_get(body, "timeout");
    scn__sub(f, sizeof f, "%s.timeout", field);
    if (v && (rc = scn__get_duration(p, v, f, &st->duration_ns)) != 0)
        return rc;
    if (v && st->duration_ns == 0)
        return scn__fail(p, v, f, "a wait needs a timeout above 0 (use expect to check now)");
    scn__sub(f, sizeof f, "%s.for", field);
    v = json_object_get(body, "for");
    if (!v)
        return scn__fail(p, body, f, "required field is missing");
    return scn__parse_cond(p, v, f, &st->cond);
}

static int parse_step_body(scn__parser *p, const char *kind, json_t *body, const char *field,
                           scn_step *st)
{
    bool needs_mapping = strcmp(kind, "patch") == 0 || strcmp(kind, "delete") == 0 ||
                         strcmp(kind, "scale") == 0 || strcmp(kind, "fault") == 0;
    int rc;

    if (needs_mapping && (rc = scn__need_type(p, body, field, JSON_OBJECT, "a mapping")) != 0)
        return rc;
    switch (st->kind) {
    case SCN_STEP_APPLY:
        return step_apply(p, body, field, st);
    case SCN_STEP_PATCH:
        return step_patch(p, body, field, st);
    case SCN_STEP_DELETE:
        return step_target(p, body, field, st, false);
    case SCN_STEP_SCALE:
        return step_target(p, body, field, st, true);
    case SCN_STEP_FAULT:
        return step_fault(p, body, field, st);
    case SCN_STEP_COMPACT:
        if (json_is_null(body) || (json_is_object(body) && json_object_size(body) == 0))
            return 0;
        return scn__fail(p, body, field, "compact takes no options (write compact: {})");
    case SCN_STEP_ADVANCE:
        return scn__get_duration(p, body, field, &st->duration_ns);
    case SCN_STEP_WAIT:
        return step_wait(p, body, field, st);
    case SCN_STEP_EXPECT:
        return scn__parse_cond(p, body, field, &st->cond);
    case SCN_STEP_CRASH:
        return step_crash(p, body, field, st);
    case SCN_STEP_RESTART:
    case SCN_STEP_PARTITION:
    case SCN_STEP_HEAL:
        return step_replica_only(p, body, field, st);
    case SCN_STEP_REQUEST:
        return scn__step_request(p, body, field, st);
    case SCN_STEP_EXPECT_WRITE:
        return scn__step_expect_write(p, body, field, st);
    }
    return scn__fail(p, body, field, "internal: step kind %d", (int)st->kind);
}

static int parse_step(scn__parser *p, json_t *item, const char *in, size_t index, scn_step *st)
{
    char field[FIELD_LEN], f[FIELD_LEN], list[256];
    const char *kind;
    json_t *body;
    int rc, saved = scn__enter(p, item);

    scn__sub(field, sizeof field, "%s[%zu]", in, index);
    scn__join_keys(step_kinds, list, sizeof list);
    st->line = scn__line_of(p, item);
    if (!json_is_object(item) || json_object_size(item) != 1) {
        rc = scn__fail(p, item, field, "a step is a mapping with exactly one of: %s; found %s",
                       list, json_is_object(item) ? "other keys" : scn__type_name(item));
        goto out;
    }
    kind = json_object_iter_key(json_object_iter(item));
    body = json_object_iter_value(json_object_iter(item));
    scn__sub(f, sizeof f, "%s.%s", field, kind);
    for (size_t i = 0; step_kinds[i]; i++) {
        if (strcmp(kind, step_kinds[i]) == 0)
            st->kind = (scn_step_kind)(SCN_STEP_APPLY + (int)i);
    }
    if (!st->kind) {
        rc = scn__fail(p, item, f, "unknown step \"%s\"; expected one of: %s", kind, list);
        goto out;
    }
    st->text = scn__keep_text(p, item);
    rc = st->text ? parse_step_body(p, kind, body, f, st) : scn__oom(p);
out:
    p->hint = saved;
    return rc;
}

/* ---- the scenario ---- */

static int parse_controllers(scn__parser *p, json_t *v)
{
    static const char *const keys[] = {"name", "replicas", "config", NULL};
    scn_scenario *s = p->s;
    json_t *item;
    size_t i;
    int rc;

    if ((rc = scn__need_type(p, v, "controllers", JSON_ARRAY, "a list of controllers")) != 0)
        return rc;
    s->controllers = calloc(json_array_size(v) + 1, sizeof *s->controllers);
    if (!s->controllers)
        return scn__oom(p);
    json_array_foreach(v, i, item)
    {
        scn_controller_ref *c = &s->controllers[i];
        char f[FIELD_LEN];
        long replicas = 1;
        scn__sub(f, sizeof f, "controllers[%zu]", i);
        if (json_is_string(item) && json_string_length(item) > 0) {
            c->name = json_string_value(item);
        } else if (json_is_object(item)) {
            json_t *config = json_object_get(item, "config");
            if ((rc = scn__check_keys(p, item, f, keys)) != 0 ||
                (rc = scn__get_string(p, item, "name", f, true, &c->name)) != 0 ||
                (rc = scn__get_int(p, item, "replicas", f, 1, MAX_REPLICAS, &replicas)) != 0)
                return rc;
            c->config = json_incref(config);
        } else {
            return scn__fail(p, item, f, "expected a controller name or {name, replicas, config}");
        }
        c->replicas = (int)replicas;
        s->n_controllers++;
        for (size_t j = 0; j < i; j++) {
            if (strcmp(s->controllers[j].name, c->name) == 0)
                return scn__fail(p, item, f, "controller \"%s\" is named twice", c->name);
        }
        if (c->replicas > p->n_replicas)
            p->n_replicas = c->replicas;
    }
    return 0;
}

static int parse_fixtures(scn__parser *p, json_t *v)
{
    json_t *item;
    size_t i;
    int rc;

    p->s->fixtures = json_array();
    if (!p->s->fixtures)
        return scn__oom(p);
    if (!v)
        return 0;
    if ((rc = scn__need_type(p, v, "fixtures", JSON_ARRAY, "a list of files or objects")) != 0)
        return rc;
    json_array_foreach(v, i, item)
    {
        char f[FIELD_LEN];
        scn__sub(f, sizeof f, "fixtures[%zu]", i);
        if (json_is_string(item))
            rc = scn__add_file(p, item, f, p->s->fixtures);
        else if (json_is_object(item) && json_object_get(item, "file") &&
                 json_object_size(item) == 1)
            rc = scn__add_file(p, json_object_get(item, "file"), f, p->s->fixtures);
        else if (json_is_object(item))
            rc = scn__add_object(p, item, item, f, NULL, 0, p->s->fixtures);
        else
            rc = scn__fail(p, item, f, "expected a file name or an object, found %s",
                           scn__type_name(item));
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int parse_steps(scn__parser *p, json_t *v)
{
    json_t *item;
    size_t i;
    int rc;

    if (!v)
        return 0;
    if ((rc = scn__need_type(p, v, "steps", JSON_ARRAY, "a list of steps")) != 0)
        return rc;
    p->s->steps = calloc(json_array_size(v) + 1, sizeof *p->s->steps);
    if (!p->s->steps)
        return scn__oom(p);
    json_array_foreach(v, i, item)
    {
        /* counted first, so that scn_scenario_free frees a half-parsed step */
        p->s->n_steps++;
        if ((rc = parse_step(p, item, "steps", i, &p->s->steps[i])) != 0)
            return rc;
    }
    return 0;
}

/* atStart: fault and crash steps only (before the managers run, nothing
 * else has a meaning). */
static int parse_start_steps(scn__parser *p, json_t *v)
{
    json_t *item;
    size_t i;
    int rc;

    if (!v)
        return 0;
    if ((rc = scn__need_type(p, v, "atStart", JSON_ARRAY, "a list of fault and crash steps")) != 0)
        return rc;
    p->s->start_steps = calloc(json_array_size(v) + 1, sizeof *p->s->start_steps);
    if (!p->s->start_steps)
        return scn__oom(p);
    json_array_foreach(v, i, item)
    {
        scn_step *st = &p->s->start_steps[i];
        p->s->n_start_steps++;
        if ((rc = parse_step(p, item, "atStart", i, st)) != 0)
            return rc;
        if (st->kind != SCN_STEP_FAULT && st->kind != SCN_STEP_CRASH) {
            char f[FIELD_LEN];
            scn__sub(f, sizeof f, "atStart[%zu]", i);
            return scn__fail(p, item, f, "atStart takes fault and crash steps only");
        }
        if (st->kind == SCN_STEP_CRASH && st->replica_ref) {
            char f[FIELD_LEN];
            scn__sub(f, sizeof f, "atStart[%zu].crash.replica", i);
            return scn__fail(p, item, f, "atStart addresses replicas by index (no leader yet)");
        }
    }
    return 0;
}

static int parse_invariants(scn__parser *p, json_t *v)
{
    json_t *item;
    size_t i;
    int rc;

    if (!v)
        return 0;
    if ((rc = scn__need_type(p, v, "invariants", JSON_ARRAY, "a list of conditions")) != 0)
        return rc;
    p->s->invariants = calloc(json_array_size(v) + 1, sizeof *p->s->invariants);
    if (!p->s->invariants)
        return scn__oom(p);
    json_array_foreach(v, i, item)
    {
        char f[FIELD_LEN];
        scn__sub(f, sizeof f, "invariants[%zu]", i);
        p->history_ok = true;
        rc = scn__parse_cond(p, item, f, &p->s->invariants[i]);
        p->history_ok = false;
        if (rc != 0)
            return rc;
        p->s->n_invariants++;
    }
    return 0;
}

/* diff: {ignore: [SPEC], keep: [SPEC]}: what `scenario diff` masks
 * (scn/state_mask.h reads it from the document). */
static int parse_diff(scn__parser *p, json_t *v)
{
    static const char *const keys[] = {"ignore", "keep", NULL};
    int rc;

    if (!v)
        return 0;
    if ((rc = scn__need_type(p, v, "diff", JSON_OBJECT, "a mapping {ignore, keep}")) != 0 ||
        (rc = scn__check_keys(p, v, "diff", keys)) != 0)
        return rc;
    for (size_t k = 0; keys[k]; k++) {
        json_t *list = json_object_get(v, keys[k]), *item;
        char f[FIELD_LEN], msg[400];
        size_t i;
        scn__sub(f, sizeof f, "diff.%s", keys[k]);
        if (list && (rc = scn__need_type(p, list, f, JSON_ARRAY, "a list of paths")) != 0)
            return rc;
        json_array_foreach(list, i, item)
        {
            scn__sub(f, sizeof f, "diff.%s[%zu]", keys[k], i);
            if (!json_is_string(item))
                return scn__fail(p, item, f, "expected a path, found %s", scn__type_name(item));
            if (scn_mask_check_spec(json_string_value(item), msg, sizeof msg) != 0)
                return scn__fail(p, item, f, "%s", msg);
        }
    }
    return 0;
}

/* cluster: true (the defaults), false, or a cluster document, checked now
 * so that its mistakes are the scenario's, with a line. */
static int parse_cluster(scn__parser *p, json_t *v)
{
    scn_scenario *s = p->s;
    if (!v || json_is_false(v))
        return 0;
    if (!json_is_true(v) && !json_is_object(v))
        return scn__fail(p, v, "cluster",
                         "expected true or a cluster document ({nodes: 3, stages: FILE, ...}), "
                         "found %s",
                         scn__type_name(v));
    s->cluster = json_is_true(v) ? json_object() : json_deep_copy(v);
    s->cluster_dir = scn__keep(p, p->dir[0] ? p->dir : ".");
    if (!s->cluster || !s->cluster_dir)
        return scn__oom(p);
    char msg[512] = "";
    kc_config *cfg = NULL;
    int rc = kc_config_new(s->cluster, s->cluster_dir, &cfg, msg, sizeof msg);
    kc_config_free(cfg);
    if (rc == KC_ERR_NOMEM)
        return scn__oom(p);
    if (rc < 0)
        return scn__fail(p, v, "cluster", "%s", msg);
    return 0;
}

static int parse_top(scn__parser *p, json_t *doc)
{
    static const char *const keys[] = {"name",     "description",    "seed",    "controllers",
                                       "fixtures", "maxVirtualTime", "steps",   "invariants",
                                       "diff",     "cluster",        "atStart", NULL};
    scn_scenario *s = p->s;
    json_t *v;
    int rc;

    p->hint = kh_yaml_mark_line(p->marks, doc);
    if (!p->hint)
        p->hint = 1;
    if (!json_is_object(doc))
        return scn__fail(p, doc, "",
                         "a scenario is a mapping (name, controllers, steps, ...), found %s",
                         scn__type_name(doc));
    if ((rc = scn__check_keys(p, doc, "", keys)) != 0)
        return rc;
    if ((rc = scn__get_string(p, doc, "name", "", true, &s->name)) != 0)
        return rc;
    v = json_object_get(doc, "description");
    if (v && !json_is_string(v))
        return scn__fail(p, v, "description", "expected a string, found %s", scn__type_name(v));
    v = json_object_get(doc, "seed");
    if (v) {
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return scn__fail(p, v, "seed", "expected an integer >= 0, found %s", scn__type_name(v));
        s->has_seed = true;
        s->seed = (uint64_t)json_integer_value(v);
    }
    v = json_object_get(doc, "maxVirtualTime");
    if (v && (rc = scn__get_duration(p, v, "maxVirtualTime", &s->max_virtual_ns)) != 0)
        return rc;
    if (v && s->max_virtual_ns == 0)
        return scn__fail(p, v, "maxVirtualTime", "must be above 0");
    v = json_object_get(doc, "controllers");
    if (v && (rc = parse_controllers(p, v)) != 0)
        return rc;
    if ((rc = parse_cluster(p, json_object_get(doc, "cluster"))) != 0)
        return rc;
    if ((rc = parse_fixtures(p, json_object_get(doc, "fixtures"))) != 0 ||
        (rc = parse_start_steps(p, json_object_get(doc, "atStart"))) != 0 ||
        (rc = parse_steps(p, json_object_get(doc, "steps"))) != 0 ||
        (rc = parse_invariants(p, json_object_get(doc, "invariants"))) != 0 ||
        (rc = parse_diff(p, json_object_get(doc, "diff"))) != 0)
        return rc;
    return 0;
}

/* check_keys names a top-level key "x" as ".x"; drop the leading dot. */
static void tidy_field(scn_error *err)
{
    if (err && err->field[0] == '.')
        memmove(err->field, err->field + 1, strlen(err->field));
}

static char *dir_of(const char *file)
{
    const char *slash = file ? strrchr(file, '/') : NULL;

    if (!slash)
        return strdup("");
    if (slash == file)
        return strdup("/");
    return strndup(file, (size_t)(slash - file));
}

int scn_scenario_parse(const char *file, const char *text, size_t len, scn_scenario **out,
                       scn_error *err)
{
    scn__parser p = {.file = file ? file : "<input>", .err = err, .n_replicas = 1};
    kh_yaml_error yerr = {0};
    json_t *docs = NULL;
    int rc;

    if (!out || (!text && len > 0))
        return SCN_ERR_INPUT;
    p.s = calloc(1, sizeof *p.s);
    p.pv = calloc(1, sizeof *p.pv);
    p.dir = dir_of(file);
    p.faults = json_object();
    p.replica_names = json_object();
    if (p.s)
        p.s->priv_ = p.pv;
    if (!p.s || !p.pv || !p.dir || !p.faults || !p.replica_names || !(p.pv->pool = json_array())) {
        if (!p.s)
            free(p.pv);
        rc = scn__oom(&p);
        goto out;
    }
    p.s->max_virtual_ns = DEFAULT_MAX_VIRTUAL_NS;
    p.s->file = scn__keep(&p, p.file);
    if (kh_yaml_load_marked(text, len, &docs, &p.marks, &yerr) != 0) {
        p.hint = yerr.line;
        rc = scn__fail(&p, NULL, "", "%s", yerr.message);
        goto out;
    }
    if (json_array_size(docs) != 1) {
        p.hint = 1;
        rc =
            scn__fail(&p, NULL, "", "expected one YAML document, found %zu", json_array_size(docs));
        goto out;
    }
    p.pv->doc = json_incref(json_array_get(docs, 0));
    rc = parse_top(&p, p.pv->doc);
out:
    tidy_field(err);
    json_decref(docs);
    json_decref(p.faults);
    json_decref(p.replica_names);
    kh_yaml_marks_free(p.marks);
    free(p.dir);
    if (rc != 0) {
        scn_scenario_free(p.s);
        return rc;
    }
    *out = p.s;
    return 0;
}

static int io_error(scn_error *err, const char *path, const char *why)
{
    if (err) {
        memset(err, 0, sizeof *err);
        err->code = SCN_ERR_IO;
        snprintf(err->file, sizeof err->file, "%s", path);
        snprintf(err->message, sizeof err->message, "cannot read: %s", why);
    }
    return SCN_ERR_IO;
}

int scn_scenario_load(const char *path, scn_scenario **out, scn_error *err)
{
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    FILE *f;
    int rc;

    if (!path || !out)
        return SCN_ERR_INPUT;
    f = fopen(path, "rbe");
    if (!f)
        return io_error(err, path, strerror(errno));
    do {
        if (len == cap) {
            char *grown;
            if (cap > KH_YAML_MAX_FILE_SIZE) {
                fclose(f);
                free(buf);
                return io_error(err, path, "file too large");
            }
            cap = cap ? cap * 2 : 16384;
            grown = realloc(buf, cap);
            if (!grown) {
                fclose(f);
                free(buf);
                return io_error(err, path, "out of memory");
            }
            buf = grown;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    if (ferror(f)) {
        fclose(f);
        free(buf);
        return io_error(err, path, strerror(errno ? errno : EIO));
    }
    fclose(f);
    rc = scn_scenario_parse(path, buf, len, out, err);
    free(buf);
    return rc;
}

void scn_scenario_free(scn_scenario *s)
{
    scn__priv *pv;

    if (!s)
        return;
    for (size_t i = 0; i < s->n_controllers; i++)
        json_decref(s->controllers[i].config);
    free(s->controllers);
    json_decref(s->fixtures);
    json_decref(s->cluster);
    for (size_t i = 0; i < s->n_steps; i++) {
        json_decref(s->steps[i].manifest);
        json_decref(s->steps[i].rule);
        json_decref(s->steps[i].crash_after);
        scn__cond_free(s->steps[i].cond);
    }
    free(s->steps);
    for (size_t i = 0; i < s->n_start_steps; i++) {
        json_decref(s->start_steps[i].rule);
        json_decref(s->start_steps[i].crash_after);
    }
    free(s->start_steps);
    for (size_t i = 0; i < s->n_invariants; i++)
        scn__cond_free(s->invariants[i]);
    free(s->invariants);
    pv = s->priv_;
    if (pv) {
        json_decref(pv->doc);
        json_decref(pv->pool);
        free(pv);
    }
    free(s);
}
