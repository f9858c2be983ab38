/*
 * replay_run.c - running the replay steps (scenario_replay.c parses them):
 * a `request` step sends its request to the run's server in-process; an
 * `expectWrite` step looks for a matching write among the requests the
 * run's trace holds.
 *
 * Called by runner.c on the scenario's driver thread, at quiescent points.
 */
#include "replay_run.h"
#include "scn_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int scn__run_request(fakeapi_server *srv, const scn_step *st, char *msg, size_t len)
{
    char *body = st->manifest ? json_dumps(st->manifest, JSON_COMPACT) : NULL;
    int status = 0;
    json_t *out = NULL;
    int rc;

    if (st->manifest && !body) {
        snprintf(msg, len, "request: out of memory");
        return -1;
    }
    rc = fakeapi_request(srv, st->method, st->path,
                         st->content_type ? st->content_type : "application/json", body, &status,
                         &out);
    free(body);
    if (rc < 0) {
        snprintf(msg, len, "request %s %s: %s", st->method, st->path, fakeapi_strerror(rc));
    } else if (st->status ? status != st->status : (status < 200 || status > 299)) {
        const char *m = json_string_value(json_object_get(out, "message"));
        if (st->status)
            snprintf(msg, len, "request %s %s: expected status %d, got %d%s%s", st->method,
                     st->path, st->status, status, m ? ": " : "", m ? m : "");
        else
            snprintf(msg, len, "request %s %s: %d%s%s", st->method, st->path, status,
                     m ? " " : "", m ? m : "");
        rc = -1;
    }
    json_decref(out);
    return rc;
}

int scn__find_write(const char *trace_path, const scn_step *st, json_t *used, char *msg,
                    size_t len)
{
    FILE *f = fopen(trace_path, "r");
    char *line = NULL;
    size_t cap = 0;
    long n = 0;
    int found = 0;

    if (!f) {
        snprintf(msg, len, "cannot read the run's trace");
        return -1;
    }
    while (!found && getline(&line, &cap, f) > 0) {
        char key[32];
        json_t *j;
        n++;
        snprintf(key, sizeof key, "%ld", n);
        if (json_object_get(used, key) || !strstr(line, "\"kind\":\"request\""))
            continue;
        j = json_loads(line, 0, NULL);
        if (j && scn__write_matches(st, json_string_value(json_object_get(j, "verb")),
                                    json_string_value(json_object_get(j, "path")),
                                    (int)json_integer_value(json_object_get(j, "code")))) {
            found = 1;
            json_object_set_new(used, key, json_true());
        }
        json_decref(j);
    }
    free(line);
    fclose(f);
    if (!found)
        snprintf(msg, len, "no %s of %s answered %s by a controller", st->verb, st->path,
                 st->status ? "with that status" : "2xx");
    return found;
}
