/*
 * linkcheck.c - a program built against the installed kube-harness with
 * pkg-config only (tests/install/test_install.sh links it against the
 * shared libraries, then the static ones): the headers' version macros
 * agree with the linked libraries, and the three libraries work together
 * (a fake API server in this process, a libctrl client reading from it).
 * Exits 0 when all holds, printing what it found.
 */
#include <stdio.h>
#include <string.h>

#include <ctrl/client.h>
#include <ctrl/version.h>
#include <fakeapi/fakeapi.h>
#include <fakeapi/version.h>
#include <scn/scenario.h>
#include <scn/version.h>

#if !CTRL_VERSION_AT_LEAST(0, 1, 0)
#error "ctrl/version.h: CTRL_VERSION_AT_LEAST"
#endif

int main(void)
{
    char built[32];
    snprintf(built, sizeof built, "%d.%d.%d", CTRL_VERSION_MAJOR, CTRL_VERSION_MINOR,
             CTRL_VERSION_PATCH);
    if (strcmp(built, CTRL_VERSION_STRING) || strcmp(ctrl_version(), CTRL_VERSION_STRING) ||
        strcmp(fakeapi_version(), FAKEAPI_VERSION_STRING) ||
        strcmp(scn_version(), SCN_VERSION_STRING)) {
        fprintf(stderr, "linkcheck: versions disagree: headers %s, libctrl %s, libfakeapi %s, "
                        "libscenario %s\n",
                CTRL_VERSION_STRING, ctrl_version(), fakeapi_version(), scn_version());
        return 1;
    }
    fakeapi_server *api = NULL;
    if (fakeapi_start(&(fakeapi_options){0}, &api) != 0)
        return 1;
    ctrl_config *cfg = NULL;
    ctrl_client *c = NULL;
    ctrl_error err = {0};
    json_t *ns = NULL;
    int rc = ctrl_config_from_url(fakeapi_url(api), &cfg, &err);
    if (rc == 0)
        rc = ctrl_client_new(cfg, NULL, &c, &err);
    if (rc == 0)
        rc = ctrl_client_get(c, "v1", "Namespace", NULL, "default", &ns, &err);
    if (rc == 0)
        printf("linkcheck: kube-harness %s; namespace %s read through libctrl from libfakeapi\n",
               ctrl_version(),
               json_string_value(json_object_get(json_object_get(ns, "metadata"), "name")));
    else
        fprintf(stderr, "linkcheck: %s\n", err.message);
    json_decref(ns);
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
    ctrl_config_free(cfg);
    fakeapi_stop(api);
    return rc == 0 ? 0 : 1;
}
