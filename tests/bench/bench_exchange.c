/*
 * bench_exchange - what a request costs over HTTP (libcurl, one kept-alive
 * connection) and in-process (fakeapi_exchange), one caller at a time: a
 * GET of one ConfigMap, a create, and an event's trip from a write to a
 * watch reader. One JSON object a line:
 *   {"bench":"exchange","op":"get","via":"http","n":N,"us_per_op":X}
 *   bench_exchange [N]     (requests per figure, default 5000)
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakeapi/fakeapi.h"

#define CMS "/api/v1/namespaces/default/configmaps"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static size_t discard(char *p, size_t sz, size_t n, void *ud)
{
    (void)p, (void)ud;
    return sz * n;
}

static void figure(const char *op, const char *via, long n, double us)
{
    printf("{\"bench\":\"exchange\",\"op\":\"%s\",\"via\":\"%s\",\"n\":%ld,\"us_per_op\":%.1f}\n",
           op, via, n, us / (double)n);
    fflush(stdout);
}

static int http(CURL *c, const char *url, const char *method, const char *body)
{
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, body ? (long)strlen(body) : 0L);
    long status = 0;
    if (curl_easy_perform(c) != CURLE_OK)
        return -1;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    return (int)status;
}

static int inproc(fakeapi_server *srv, const char *method, const char *target, const char *body)
{
    fakeapi_exchange_req rq = {.method = method,
                               .target = target,
                               .content_type = body ? "application/json" : NULL,
                               .body = body,
                               .body_len = body ? strlen(body) : 0};
    fakeapi_exchange_resp rs;
    if (fakeapi_exchange(srv, &rq, &rs) != 0)
        return -1;
    int st = rs.status;
    fakeapi_exchange_resp_free(&rs);
    return st;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 5000;
    fakeapi_server *srv;
    if (n <= 0 || fakeapi_start(&(fakeapi_options){.seed = 1}, &srv) != 0)
        return 1;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    char url[256], body[256];
    int bad = 0;
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"one\"}}");
    bad |= inproc(srv, "POST", CMS, body) != 201;
    snprintf(url, sizeof url, "%s" CMS "/one", fakeapi_url(srv));
    double t = now_us();
    for (long i = 0; i < n; i++)
        bad |= http(c, url, "GET", NULL) != 200;
    figure("get", "http", n, now_us() - t);
    t = now_us();
    for (long i = 0; i < n; i++)
        bad |= inproc(srv, "GET", CMS "/one", NULL) != 200;
    figure("get", "inproc", n, now_us() - t);
    snprintf(url, sizeof url, "%s" CMS, fakeapi_url(srv));
    t = now_us();
    for (long i = 0; i < n; i++) {
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"h%ld\"}}",
                 i);
        bad |= http(c, url, "POST", body) != 201;
    }
    figure("create", "http", n, now_us() - t);
    t = now_us();
    for (long i = 0; i < n; i++) {
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"p%ld\"}}",
                 i);
        bad |= inproc(srv, "POST", CMS, body) != 201;
    }
    figure("create", "inproc", n, now_us() - t);
    /* A write, then its event read from an in-process stream. */
    fakeapi_exchange_req wq = {.method = "GET",
                               .target = "/api/v1/namespaces/ev/configmaps?watch=1"};
    fakeapi_exchange_resp ws;
    bad |= inproc(srv, "POST", "/api/v1/namespaces",
                  "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
                  "\"metadata\":{\"name\":\"ev\"}}") != 201;
    if (fakeapi_exchange(srv, &wq, &ws) != 0 || !ws.stream)
        return 1;
    char buf[8192];
    t = now_us();
    for (long i = 0; i < n; i++) {
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"e%ld\"}}",
                 i);
        bad |= inproc(srv, "POST", "/api/v1/namespaces/ev/configmaps", body) != 201;
        bad |= fakeapi_stream_read(ws.stream, buf, sizeof buf) <= 0;
    }
    figure("create+event", "inproc", n, now_us() - t);
    fakeapi_exchange_resp_free(&ws);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    curl_global_cleanup();
    fakeapi_stop(srv);
    if (bad)
        fprintf(stderr, "bench_exchange: a request was not answered as expected\n");
    return bad ? 1 : 0;
}
