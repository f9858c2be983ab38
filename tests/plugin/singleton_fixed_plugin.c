/*
 * singleton_fixed_plugin.c - the fixed Singleton controller under the buggy
 * one's name, for `scenario diff FILE --against singleton_fixed_plugin.so`:
 * loaded with --against, its controller replaces singleton-buggy in the
 * second run. example_fixed_setup comes from the `scenario` program (which
 * links the examples and exports its symbols), as libctrl does for any plugin.
 */
#include "buggy.h"
#include "scn/run.h"

int scn_plugin_init(void);

static int setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_fixed_setup(mgr, config);
}

int scn_plugin_init(void)
{
    return scn_register_controller("singleton-buggy", setup, NULL);
}
