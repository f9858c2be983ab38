/*
 * scn_write.c - a parsed scenario back into a document that stands alone
 * (scn_scenario_to_doc, scn/shrink.h): what the shrinker edits and writes.
 *
 * Files named by the scenario were read when it was parsed; here their
 * objects are written inline (fixtures as objects, `apply: {file}` as
 * `apply: {manifest}`), so the document parses the same from any
 * directory. Everything else is copied from the parsed document.
 *
 * Threads: reentrant; the scenario is only read.
 */
#include "scn/shrink.h"
#include "scn_parse.h"

#include "kh/yaml.h"

#include <stdlib.h>
#include <string.h>

static int set_copy(json_t *doc, const json_t *from, const char *key)
{
    json_t *v = json_object_get(from, key);
    return v ? json_object_set_new(doc, key, json_deep_copy(v)) : 0;
}

static json_t *controllers_of(const scn_scenario *sc)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < sc->n_controllers; i++) {
        const scn_controller_ref *c = &sc->controllers[i];
        json_t *item;
        if (c->replicas <= 1 && !c->config)
            item = json_string(c->name);
        else
            item = json_pack("{s:s, s:i}", "name", c->name, "replicas",
                             c->replicas > 0 ? c->replicas : 1);
        if (item && c->config)
            json_object_set_new(item, "config", json_deep_copy(c->config));
        if (json_array_append_new(arr, item) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* One step as written, with a file it applies made inline. */
static json_t *step_of(const scn_step *st, const json_t *written)
{
    json_t *body = json_object_get(written, "apply");
    if (st->kind != SCN_STEP_APPLY || !json_is_object(body) || !json_object_get(body, "file"))
        return json_deep_copy(written);
    json_t *nb = json_pack("{s:O}", "manifest", st->manifest);
    if (nb && st->field_manager)
        json_object_set_new(nb, "fieldManager", json_string(st->field_manager));
    if (nb && st->force)
        json_object_set_new(nb, "force", json_true());
    return nb ? json_pack("{s:o}", "apply", nb) : NULL;
}

json_t *scn_scenario_to_doc(const scn_scenario *sc)
{
    if (!sc || !sc->priv_)
        return NULL;
    const scn__priv *pv = sc->priv_;
    const json_t *from = pv->doc;
    json_t *doc = json_object(), *steps = json_array();
    json_t *written = json_object_get(from, "steps");
    int rc = doc && steps ? 0 : -1;
    if (rc == 0)
        rc = json_object_set_new(doc, "name", json_string(sc->name ? sc->name : "scenario"));
    if (rc == 0)
        rc = set_copy(doc, from, "description");
    if (rc == 0 && sc->has_seed)
        rc = json_object_set_new(doc, "seed", json_integer((json_int_t)sc->seed));
    if (rc == 0)
        rc = json_object_set_new(doc, "controllers", controllers_of(sc));
    if (rc == 0)
        rc = json_object_set_new(doc, "fixtures", json_deep_copy(sc->fixtures));
    if (rc == 0)
        rc = set_copy(doc, from, "maxVirtualTime");
    if (rc == 0)
        rc = set_copy(doc, from, "atStart");
    if (rc == 0)
        rc = set_copy(doc, from, "cluster"); /* its file names: relative to the original */
    for (size_t i = 0; rc == 0 && i < sc->n_steps; i++)
        rc = json_array_append_new(steps, step_of(&sc->steps[i], json_array_get(written, i)));
    if (rc == 0) {
        rc = json_object_set(doc, "steps", steps);
    }
    if (rc == 0)
        rc = set_copy(doc, from, "invariants");
    if (rc == 0)
        rc = set_copy(doc, from, "diff");
    json_decref(steps);
    if (rc < 0) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

char *scn_scenario_to_yaml(const scn_scenario *sc)
{
    json_t *doc = scn_scenario_to_doc(sc);
    char *text = doc ? kh_yaml_dump(doc) : NULL;
    json_decref(doc);
    return text;
}
