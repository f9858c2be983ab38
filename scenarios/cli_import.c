/*
 * cli_import.c - the `scenario` program's commands between audit logs,
 * traces and scenarios (scn/audit.h):
 *
 *   scenario import audit FILE... [--snapshot FILE] [--controller NAME]...
 *            [--actor-user U]... [--actor-agent A]... [--expect-writes] [--expect-state]
 *            [--name NAME] -o SCENARIO.yaml
 *   scenario trace-to-audit TRACE -o AUDIT
 *   scenario audit-to-trace AUDIT -o TRACE
 *
 * Output goes to a temporary file beside the target, renamed into place,
 * so a failed import leaves nothing behind. Bad input: exit 2 with file,
 * line and field. The program's main thread.
 */
#include "cli_import.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scn/audit.h"

#define MAX_ARGS 256

static int write_atomically(const char *path, const char *text)
{
    char tmp[4096];
    FILE *f;
    int fd;

    if (snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path) >= (int)sizeof tmp)
        return -1;
    fd = mkstemp(tmp);
    if (fd < 0)
        return -1;
    f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return -1;
    }
    if (fputs(text, f) < 0 || fclose(f) != 0) {
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static void print_error(const scn_error *e)
{
    char buf[1200];
    scn_error_format(e, buf, sizeof buf);
    fprintf(stderr, "scenario: %s\n", buf);
}

static void on_warning(void *ud, const char *msg)
{
    (void)ud;
    fprintf(stderr, "scenario: warning: %s\n", msg);
}

static int import_usage_to(FILE *f, int code)
{
    fprintf(f,
            "usage: scenario import audit FILE... [--snapshot FILE] [--controller NAME]...\n"
            "         [--actor-user U]... [--actor-agent A]... [--expect-writes] [--expect-state]\n"
            "         [--name NAME] -o SCENARIO.yaml\n");
    return code;
}

static int import_usage(void)
{
    return import_usage_to(stderr, 2);
}

int scn__cmd_import(int argc, char **argv)
{
    const char *files[MAX_ARGS], *ctrls[MAX_ARGS], *users[MAX_ARGS], *agents[MAX_ARGS];
    scn_import_options o = {.files = files,
                            .controllers = ctrls,
                            .actor_users = users,
                            .actor_agents = agents,
                            .warn = on_warning};
    const char *outp = NULL;
    scn_import_stats st;
    scn_error err = {0};
    char *yaml = NULL;

    if (argc >= 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")))
        return import_usage_to(stdout, 0);
    if (argc < 3 || strcmp(argv[2], "audit") != 0)
        return import_usage();
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return import_usage_to(stdout, 0);
        if (!strcmp(a, "--expect-writes")) {
            o.expect_writes = true;
            continue;
        }
        if (!strcmp(a, "--expect-state")) {
            o.expect_state = true;
            continue;
        }
        if (a[0] != '-') {
            if (o.n_files == MAX_ARGS)
                return import_usage();
            files[o.n_files++] = a;
            continue;
        }
        if (!v) {
            fprintf(stderr, "scenario: %s needs a value\n", a);
            return import_usage();
        }
        i++;
        if (!strcmp(a, "-o"))
            outp = v;
        else if (!strcmp(a, "--snapshot"))
            o.snapshot = v;
        else if (!strcmp(a, "--name"))
            o.name = v;
        else if (!strcmp(a, "--controller") && o.n_controllers < MAX_ARGS)
            ctrls[o.n_controllers++] = v;
        else if (!strcmp(a, "--actor-user") && o.n_actor_users < MAX_ARGS)
            users[o.n_actor_users++] = v;
        else if (!strcmp(a, "--actor-agent") && o.n_actor_agents < MAX_ARGS)
            agents[o.n_actor_agents++] = v;
        else {
            fprintf(stderr, "scenario: bad option: %s\n", a);
            return import_usage();
        }
    }
    if (!o.n_files || !outp)
        return import_usage();
    /* the scenario is named after its file unless --name says otherwise */
    char name[256];
    if (!o.name) {
        const char *base = strrchr(outp, '/') ? strrchr(outp, '/') + 1 : outp;
        snprintf(name, sizeof name, "%.*s", (int)strcspn(base, "."), base);
        if (name[0])
            o.name = name;
    }
    int rc = scn_audit_import(&o, &yaml, &st, &err);
    if (rc != 0) {
        if (err.message[0])
            print_error(&err);
        else
            fprintf(stderr, "scenario: import: %s\n", scn_strerror(rc));
        return rc == SCN_ERR_INPUT || rc == SCN_ERR_IO ? 2 : 1;
    }
    if (write_atomically(outp, yaml) < 0) {
        fprintf(stderr, "scenario: cannot write %s: %s\n", outp, strerror(errno));
        free(yaml);
        return 2;
    }
    free(yaml);
    fprintf(stderr,
            "scenario: %s: %zu events, %zu requests: %zu fixtures, %zu writes replayed, %zu "
            "expected, %zu not replayed, %zu gaps\n",
            outp, st.events, st.requests, st.fixtures, st.replayed, st.expected, st.dropped,
            st.gaps);
    return 0;
}

int scn__cmd_convert(int argc, char **argv)
{
    bool to_audit = !strcmp(argv[1], "trace-to-audit");
    const char *in = NULL, *outp = NULL;
    scn_error err = {0};
    char *text = NULL;
    size_t skipped = 0;
    int rc;

    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            outp = argv[++i];
        else if (!in && argv[i][0] != '-')
            in = argv[i];
        else
            in = NULL, outp = NULL, i = argc;
    }
    if (!in || !outp) {
        fprintf(stderr, "usage: scenario %s %s -o %s\n", argv[1], to_audit ? "TRACE" : "AUDIT",
                to_audit ? "AUDIT" : "TRACE");
        return 2;
    }
    rc = to_audit ? scn_trace_to_audit(in, &text, &skipped, &err)
                  : scn_audit_to_trace(in, &text, &err);
    if (rc != 0) {
        if (err.message[0])
            print_error(&err);
        else
            fprintf(stderr, "scenario: %s: %s\n", argv[1], scn_strerror(rc));
        return rc == SCN_ERR_INPUT || rc == SCN_ERR_IO ? 2 : 1;
    }
    if (write_atomically(outp, text) < 0) {
        fprintf(stderr, "scenario: cannot write %s: %s\n", outp, strerror(errno));
        free(text);
        return 2;
    }
    free(text);
    if (skipped)
        fprintf(stderr, "scenario: %zu watch-event lines have no place in an audit log; left out\n",
                skipped);
    return 0;
}
