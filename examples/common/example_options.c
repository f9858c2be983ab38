/*
 * example_options.c - the settings every example controller reads from its
 * config (see example_options.h).
 */
#include "example_options.h"

#include "ctrl/error.h"

int example_options_from_config(const json_t *config, const char *default_name, const char **name,
                                ctrl_controller_options *o)
{
    *o = (ctrl_controller_options){0};
    *name = default_name;
    if (config && !json_is_object(config))
        return CTRL_ERR_ARG;
    const json_t *jname = json_object_get(config, "name");
    const json_t *jmax = json_object_get(config, "maxConcurrentReconciles");
    const json_t *jnole = json_object_get(config, "noLeaderElection");
    if ((jname && !json_is_string(jname)) || (jmax && !json_is_integer(jmax)) ||
        (jnole && !json_is_boolean(jnole)))
        return CTRL_ERR_ARG;
    if (jmax && (json_integer_value(jmax) < 1 || json_integer_value(jmax) > 1024))
        return CTRL_ERR_ARG;
    if (jname)
        *name = json_string_value(jname);
    if (jmax)
        o->max_concurrent_reconciles = (int)json_integer_value(jmax);
    if (jnole)
        o->no_leader_election = json_is_true(jnole);
    return 0;
}
