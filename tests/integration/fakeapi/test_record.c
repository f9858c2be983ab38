/*
 * test_record.c - fakeapi_record_open: every request as an audit.k8s.io/v1
 * Event line (RequestResponse), over HTTP and in-process; Secrets redacted
 * unless asked; the configured user; recording stops when asked, and draws
 * nothing from the seeded generator (the same seed, the same uids).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apitest.h"

TestSuite(record, .init = setup, .fini = teardown);

static char path[64];

static void open_record(const fakeapi_record_options *o)
{
    snprintf(path, sizeof path, "/tmp/fakeapi-record-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_record_open(srv, path, o, &err), 0, "%s", err.message);
}

/* The recorded Events (stops recording first). */
static json_t *events(void)
{
    cr_assert_eq(fakeapi_record_open(srv, NULL, NULL, NULL), 0);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    json_t *all = json_array();
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_error_t e;
        json_t *ev = json_loads(line, 0, &e);
        cr_assert_not_null(ev, "not JSON: %s", e.text);
        json_array_append_new(all, ev);
    }
    free(line);
    fclose(f);
    unlink(path);
    return all;
}

static json_t *find(json_t *all, const char *verb, const char *resource)
{
    size_t i;
    json_t *ev;
    json_array_foreach(all, i, ev)
    {
        if (!strcmp(jstr(ev, "verb"), verb) && jstr(ev, "objectRef.resource") &&
            !strcmp(jstr(ev, "objectRef.resource"), resource))
            return ev;
    }
    return NULL;
}

Test(record, every_request_is_an_event_with_its_bodies)
{
    open_record(NULL);
    json_decref(req(201, "POST", "/api/v1/namespaces/default/configmaps?fieldManager=me",
                    "{'metadata':{'name':'c'},'data':{'a':'1'}}"));
    json_decref(req_ct(200, "PATCH", "/api/v1/namespaces/default/configmaps/c",
                       "application/merge-patch+json", "{'data':{'b':'2'}}"));
    json_decref(
        req_fail(404, "NotFound", "GET", "/api/v1/namespaces/default/configmaps/nope", NULL));
    json_t *all = events();
    cr_assert_eq(json_array_size(all), 3);
    json_t *c = find(all, "create", "configmaps");
    cr_assert_not_null(c);
    cr_expect_str_eq(jstr(c, "kind"), "Event");
    cr_expect_str_eq(jstr(c, "apiVersion"), "audit.k8s.io/v1");
    cr_expect_str_eq(jstr(c, "level"), "RequestResponse");
    cr_expect_str_eq(jstr(c, "stage"), "ResponseComplete");
    cr_expect_str_eq(jstr(c, "requestURI"),
                     "/api/v1/namespaces/default/configmaps?fieldManager=me");
    cr_expect_str_eq(jstr(c, "objectRef.namespace"), "default");
    cr_expect_str_eq(jstr(c, "objectRef.name"), "c", "from the object, as kube-apiserver logs it");
    cr_expect_str_eq(jstr(c, "objectRef.apiVersion"), "v1");
    cr_expect_eq(jint(c, "responseStatus.code"), 201);
    cr_expect_str_eq(jstr(c, "requestObject.data.a"), "1");
    cr_expect_str_eq(jstr(c, "responseObject.metadata.name"), "c");
    cr_expect_str_eq(jstr(c, "user.username"), "system:anonymous");
    cr_expect_str_eq(jstr(c, "sourceIPs.0"), "127.0.0.1");
    cr_expect_null(json_object_get(c, "userAgent"), "this client sends none");
    cr_expect_not_null(jstr(c, "requestReceivedTimestamp"));
    cr_expect_eq(strlen(jstr(c, "stageTimestamp")), strlen("2026-01-01T00:00:00.000000Z"));
    json_t *p = find(all, "patch", "configmaps");
    cr_assert_not_null(p);
    const char *ct = json_string_value(
        json_object_get(json_object_get(p, "annotations"), "kube-harness.dev/content-type"));
    cr_expect_str_eq(ct ? ct : "(none)", "application/merge-patch+json");
    cr_expect_str_neq(jstr(p, "auditID"), jstr(c, "auditID"));
    json_t *g = find(all, "get", "configmaps");
    cr_assert_not_null(g);
    cr_expect_eq(jint(g, "responseStatus.code"), 404);
    cr_expect_str_eq(jstr(g, "responseStatus.reason"), "NotFound");
    json_decref(all);
}

Test(record, secrets_are_redacted_unless_asked)
{
    const char *body = "{'metadata':{'name':'s'},'data':{'pw':'aHVudGVyMg=='},"
                       "'stringData':{'token':'t0p'}}";
    open_record(NULL);
    json_decref(req(201, "POST", "/api/v1/namespaces/default/secrets", body));
    json_decref(req(200, "GET", "/api/v1/namespaces/default/secrets", NULL));
    json_t *all = events();
    json_t *c = find(all, "create", "secrets");
    cr_assert_not_null(c);
    cr_expect_str_eq(jstr(c, "requestObject.data.pw"), "KHJlZGFjdGVkKQ==");
    cr_expect_str_eq(jstr(c, "requestObject.stringData.token"), "(redacted)");
    cr_expect_str_eq(jstr(c, "responseObject.data.pw"), "KHJlZGFjdGVkKQ==");
    json_t *l = find(all, "list", "secrets");
    cr_assert_not_null(l);
    cr_expect_str_eq(jstr(l, "responseObject.items.0.data.pw"), "KHJlZGFjdGVkKQ==");
    json_decref(all);

    open_record(&(fakeapi_record_options){.secrets = true, .user = "alice"});
    json_decref(req(200, "GET", "/api/v1/namespaces/default/secrets/s", NULL));
    all = events();
    cr_assert_eq(json_array_size(all), 1);
    json_t *ev = json_array_get(all, 0);
    cr_expect_str_eq(jstr(ev, "responseObject.data.pw"), "aHVudGVyMg==");
    cr_expect_str_eq(jstr(ev, "user.username"), "alice");
    json_decref(all);
}

Test(record, in_process_requests_and_watches)
{
    open_record(NULL);
    int status = 0;
    cr_assert_eq(fakeapi_request(srv, "POST", "/api/v1/namespaces/default/configmaps",
                                 "application/json", "{\"metadata\":{\"name\":\"x\"}}", &status,
                                 NULL),
                 0);
    cr_assert_eq(status, 201);
    json_t *w =
        req(200, "GET", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1", NULL);
    json_decref(w);
    json_t *all = events();
    json_t *c = find(all, "create", "configmaps");
    cr_assert_not_null(c);
    cr_expect_str_eq(jstr(c, "userAgent"), "fakeapi-inprocess");
    json_t *wev = find(all, "watch", "configmaps");
    cr_assert_not_null(wev);
    cr_expect_str_eq(jstr(wev, "stage"), "ResponseStarted");
    cr_expect_null(json_object_get(wev, "responseObject"));
    json_decref(all);
}

Test(record, stopping_stops_and_a_bad_path_is_an_error)
{
    open_record(NULL);
    json_decref(req(200, "GET", "/api/v1/namespaces", NULL));
    cr_assert_eq(fakeapi_record_open(srv, NULL, NULL, NULL), 0);
    json_decref(req(200, "GET", "/api/v1/namespaces", NULL));
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    int lines = 0, ch;
    while ((ch = fgetc(f)) != EOF)
        lines += ch == '\n';
    fclose(f);
    unlink(path);
    cr_expect_eq(lines, 1);
    fakeapi_error err = {0};
    cr_expect_eq(fakeapi_record_open(srv, "/nonexistent/dir/audit.jsonl", NULL, &err),
                 FAKEAPI_ERR_IO);
    cr_expect(strstr(err.message, "/nonexistent/dir/audit.jsonl"), "%s", err.message);
}

/* Recording takes nothing from the seeded generator: the same uids. */
Test(record, recording_does_not_change_a_seeded_run)
{
    char uid[2][64];
    for (int k = 0; k < 2; k++) {
        fakeapi_server *s;
        fakeapi_options o = {.seed = 77, .no_http = true};
        cr_assert_eq(fakeapi_start(&o, &s), 0);
        char p[64];
        snprintf(p, sizeof p, "/tmp/fakeapi-record-seed-%d-%d", (int)getpid(), k);
        if (k == 1)
            cr_assert_eq(fakeapi_record_open(s, p, NULL, NULL), 0);
        json_t *out = NULL;
        int status = 0;
        fakeapi_request(s, "POST", "/api/v1/namespaces/default/configmaps", "application/json",
                        "{\"metadata\":{\"name\":\"x\"}}", &status, &out);
        snprintf(uid[k], sizeof uid[k], "%s", jstr(out, "metadata.uid"));
        json_decref(out);
        fakeapi_stop(s);
        unlink(p);
    }
    cr_expect_str_eq(uid[0], uid[1]);
}

static size_t discard(char *p, size_t s, size_t n, void *ud)
{
    (void)p, (void)ud;
    return s * n;
}

/* A service account's token names its account as the user. */
Test(record, a_service_account_token_names_its_account)
{
    json_decref(req(201, "POST", "/api/v1/namespaces/default/serviceaccounts",
                    "{'metadata':{'name':'bot'}}"));
    json_t *tr = req(201, "POST", "/api/v1/namespaces/default/serviceaccounts/bot/token",
                     "{'apiVersion':'authentication.k8s.io/v1','kind':'TokenRequest','spec':{}}");
    char auth[4096];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", jstr(tr, "status.token"));
    json_decref(tr);
    open_record(NULL);
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, auth);
    curl_easy_setopt(c, CURLOPT_URL,
                     S("%s/api/v1/namespaces/default/configmaps", fakeapi_url(srv)));
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "bot/1.0");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    cr_assert_eq(curl_easy_perform(c), CURLE_OK);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    json_t *all = events();
    json_t *l = find(all, "list", "configmaps");
    cr_assert_not_null(l);
    cr_expect_str_eq(jstr(l, "user.username"), "system:serviceaccount:default:bot");
    cr_expect_str_eq(jstr(l, "user.groups.1"), "system:serviceaccounts:default");
    cr_expect_str_eq(jstr(l, "userAgent"), "bot/1.0");
    json_decref(all);
}

/* A request a delay fault holds is recorded as received when it came. */
Test(record, a_delayed_request_is_received_when_it_came)
{
    cr_assert_eq(fakeapi_fault_add(srv,
                                   &(fakeapi_fault){.verb = "list",
                                                    .resource = "configmaps",
                                                    .action = FAKEAPI_FAULT_DELAY,
                                                    .delay_ms = 300},
                                   NULL, NULL),
                 0);
    open_record(NULL);
    json_decref(req(200, "GET", "/api/v1/namespaces/default/configmaps", NULL));
    json_t *all = events();
    json_t *l = find(all, "list", "configmaps");
    cr_assert_not_null(l);
    /* "2026-12-03T13:00:00.123456Z": compare as seconds of the day */
    const char *a = jstr(l, "requestReceivedTimestamp"), *b = jstr(l, "stageTimestamp");
    double ta = atof(a + 11) * 3600 + atof(a + 14) * 60 + atof(a + 17);
    double tb = atof(b + 11) * 3600 + atof(b + 14) * 60 + atof(b + 17);
    if (tb < ta)
        tb += 86400; /* past midnight */
    cr_expect_geq(tb - ta, 0.3, "received %s, answered %s", a, b);
    json_decref(all);
}
