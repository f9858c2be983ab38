/*
 * config_int.h - the inside of a ctrl_config, and the file helpers the
 * client shares with the config loader (token files are re-read by the
 * client). Reentrant.
 */
#ifndef CTRL_CONFIG_INT_H
#define CTRL_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "ctrl/config.h"
#include "ctrl/roundtrip.h"

struct ctrl_config {
    char *server; /* scheme://host[:port][/prefix], no trailing '/' */
    char *context;
    char *ns;
    char *token;
    char *token_file;
    char *username;
    char *password;
    char *tls_server_name;
    bool insecure;
    unsigned char *ca;
    size_t ca_len;
    unsigned char *cert;
    size_t cert_len;
    unsigned char *key;
    size_t key_len;
    ctrl_roundtripper rt; /* roundtrip NULL = libcurl */
};

/* Read a whole file (at most 16 MiB) into a new NUL-terminated buffer. */
int ctrl__read_file(const char *path, unsigned char **out, size_t *len, ctrl_error *err);

/* Read a token file, trailing whitespace removed, into a new string. */
int ctrl__read_token(const char *path, char **out, ctrl_error *err);

/* Decode base64 (whitespace ignored) into a new buffer. 0, CTRL_ERR_CONFIG or NOMEM. */
int ctrl__base64_decode(const char *in, unsigned char **out, size_t *len);

#endif
