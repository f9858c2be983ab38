#include "metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "watch.h"

struct fakeapi__metrics {
    pthread_mutex_t mu;
    json_t *requests; /* "verb\tgroup\tresource\tcode" -> count */
};

fakeapi__metrics *fakeapi__metrics_new(void)
{
    fakeapi__metrics *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    pthread_mutex_init(&m->mu, NULL);
    if (!(m->requests = json_object())) {
        fakeapi__metrics_free(m);
        return NULL;
    }
    return m;
}

void fakeapi__metrics_free(fakeapi__metrics *m)
{
    if (!m)
        return;
    json_decref(m->requests);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void fakeapi__metrics_request(fakeapi__metrics *m, const fakeapi__reqinfo *ri, int code)
{
    char key[512];
    snprintf(key, sizeof key, "%s\t%s\t%s\t%d", ri->verb, ri->group, ri->resource, code);
    pthread_mutex_lock(&m->mu);
    json_t *n = json_object_get(m->requests, key);
    json_object_set_new(m->requests, key, json_integer(json_integer_value(n) + 1));
    pthread_mutex_unlock(&m->mu);
}

static void requests_text(fakeapi__metrics *m, fakeapi__strbuf *b)
{
    fakeapi__strbuf_adds(b, "# HELP fakeapi_requests_total Requests served, by verb, group, "
                            "resource and HTTP code.\n# TYPE fakeapi_requests_total counter\n");
    pthread_mutex_lock(&m->mu);
    const char *k;
    json_t *v;
    json_object_foreach(m->requests, k, v)
    {
        char verb[32], group[256], res[256];
        int code = 0;
        if (sscanf(k, "%31[^\t]\t%255[^\t]\t%255[^\t]\t%d", verb, group, res, &code) != 4 &&
            sscanf(k, "%31[^\t]\t\t%255[^\t]\t%d", verb, res, &code) == 3)
            group[0] = '\0';
        fakeapi__strbuf_addf(b,
                             "fakeapi_requests_total{verb=\"%s\",group=\"%s\",resource=\"%s\","
                             "code=\"%d\"} %lld\n",
                             verb, group, res, code, (long long)json_integer_value(v));
    }
    pthread_mutex_unlock(&m->mu);
}

void fakeapi__metrics_serve(fakeapi_server *srv, fakeapi__resp *resp)
{
    fakeapi__strbuf b = {0};
    requests_text(srv->metrics, &b);
    fakeapi__strbuf_addf(&b,
                         "# HELP fakeapi_open_watches Watch streams open now.\n"
                         "# TYPE fakeapi_open_watches gauge\nfakeapi_open_watches %zu\n"
                         "# HELP fakeapi_slow_watchers_closed_total Watches closed for falling "
                         "behind.\n# TYPE fakeapi_slow_watchers_closed_total counter\n"
                         "fakeapi_slow_watchers_closed_total %lu\n",
                         fakeapi__hub_watch_count(srv->hub), fakeapi__hub_slow_closed(srv->hub));
    fakeapi__strbuf_adds(&b, "# HELP fakeapi_faults_fired_total Faults fired, by rule id.\n"
                             "# TYPE fakeapi_faults_fired_total counter\n");
    json_t *fired = fakeapi__faults_fired(srv->faults);
    const char *id;
    json_t *n;
    json_object_foreach(fired, id, n)
    {
        fakeapi__strbuf_addf(&b, "fakeapi_faults_fired_total{rule=\"%s\"} %lld\n", id,
                             (long long)json_integer_value(n));
    }
    json_decref(fired);
    fakeapi__strbuf_addf(&b,
                         "# HELP fakeapi_revision The store's current revision.\n"
                         "# TYPE fakeapi_revision gauge\nfakeapi_revision %llu\n",
                         (unsigned long long)fakeapi__store_rev_locking(srv->store));
    size_t len;
    char *text = fakeapi__strbuf_take(&b, &len);
    resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
    fakeapi__resp_take(resp, 200, text, len);
}
