/*
 * cacert.c - the CA the service-account controllers publish (cacert.h).
 */
#include "cacert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PEM_BEGIN "-----BEGIN CERTIFICATE-----"
#define MAX_PEM (1024 * 1024)

/* O=kube-harness, CN=kube-harness placeholder CA (its key was discarded),
 * ECDSA P-256, valid 2026-12-06 to 2126-11-12. */
const char kc__placeholder_ca_pem[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIB7TCCAZSgAwIBAgIBATAKBggqhkjOPQQDAjBVMRUwEwYDVQQKDAxrdWJlLWhh\n"
    "cm5lc3MxPDA6BgNVBAMMM2t1YmUtaGFybmVzcyBwbGFjZWhvbGRlciBDQSAoaXRz\n"
    "IGtleSB3YXMgZGlzY2FyZGVkKTAgFw0yNjEyMDYxMjMyMzlaGA8yMTI2MTExMjEy\n"
    "MzIzOVowVTEVMBMGA1UECgwMa3ViZS1oYXJuZXNzMTwwOgYDVQQDDDNrdWJlLWhh\n"
    "cm5lc3MgcGxhY2Vob2xkZXIgQ0EgKGl0cyBrZXkgd2FzIGRpc2NhcmRlZCkwWTAT\n"
    "BgcqhkjOPQIBBggqhkjOPQMBBwNCAARmvWHDYxII23hjMakZs54quYIRWIlC2d81\n"
    "QE6koZW10sUgQdXPYVIRgCPRB/TfZ72x/dpXc7UgQhFNBHmHSzXeo1MwUTAdBgNV\n"
    "HQ4EFgQU30hr0knUdHOKP1HwPPTQO08hX4EwHwYDVR0jBBgwFoAU30hr0knUdHOK\n"
    "P1HwPPTQO08hX4EwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiA8\n"
    "ISkPwm8+VeVpKJI2RaklqDf1rOeY1h25Q3gVbdFcjQIgZiE1LkmBY4V+PIR9fW6T\n"
    "iFwBedFOOAkjMi6n9Amibd8=\n"
    "-----END CERTIFICATE-----\n";

static char *read_file(const char *path, int *rc, char *errbuf, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    if (!f) {
        snprintf(errbuf, errlen, "caCert: %s cannot be read", path);
        *rc = KC_ERR_INPUT;
        return NULL;
    }
    buf = malloc(MAX_PEM + 1);
    size_t n = buf ? fread(buf, 1, MAX_PEM + 1, f) : 0;
    fclose(f);
    if (!buf) {
        *rc = KC_ERR_NOMEM;
        return NULL;
    }
    if (n > MAX_PEM) {
        free(buf);
        snprintf(errbuf, errlen, "caCert: %s is larger than 1 MiB", path);
        *rc = KC_ERR_INPUT;
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

char *kc__ca_pem(const kc_config *cfg, int *rc, char *errbuf, size_t errlen)
{
    const json_t *v = cfg ? json_object_get(cfg->doc, "caCert") : NULL;
    char *pem = NULL;
    *rc = 0;
    if (!v) {
        pem = strdup(kc__placeholder_ca_pem);
    } else if (!json_is_string(v) || !json_string_length(v)) {
        snprintf(errbuf, errlen, "caCert: PEM text or the name of a PEM file");
        *rc = KC_ERR_INPUT;
        return NULL;
    } else if (strstr(json_string_value(v), PEM_BEGIN)) {
        pem = strdup(json_string_value(v));
    } else {
        const char *file = json_string_value(v);
        char path[4096];
        if (file[0] == '/' || !cfg->base_dir)
            snprintf(path, sizeof path, "%s", file);
        else
            snprintf(path, sizeof path, "%s/%s", cfg->base_dir, file);
        pem = read_file(path, rc, errbuf, errlen);
        if (!pem)
            return NULL;
        if (!strstr(pem, PEM_BEGIN)) {
            free(pem);
            snprintf(errbuf, errlen, "caCert: %s holds no PEM certificate", path);
            *rc = KC_ERR_INPUT;
            return NULL;
        }
    }
    if (!pem)
        *rc = KC_ERR_NOMEM;
    return pem;
}
