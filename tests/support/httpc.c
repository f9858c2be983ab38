#include "httpc.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    httpc_resp *r = ud;
    size_t len = sz * n;
    char *b = realloc(r->body, r->len + len + 1);
    if (!b)
        return 0;
    memcpy(b + r->len, p, len);
    r->body = b;
    r->len += len;
    r->body[r->len] = '\0';
    return len;
}

static void header_value(const char *line, size_t len, const char *name, char *dst, size_t cap)
{
    size_t n = strlen(name);
    if (len <= n + 1 || strncasecmp(line, name, n) || line[n] != ':')
        return;
    const char *v = line + n + 1;
    while (*v == ' ')
        v++;
    size_t vl = (size_t)(line + len - v);
    while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
        vl--;
    if (vl >= cap)
        vl = cap - 1;
    memcpy(dst, v, vl);
    dst[vl] = '\0';
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    httpc_resp *r = ud;
    header_value(p, sz * n, "Content-Type", r->ctype, sizeof r->ctype);
    header_value(p, sz * n, "Retry-After", r->retry_after, sizeof r->retry_after);
    return sz * n;
}

int httpc_do(const char *method, const char *url, const char *ctype, const char *body,
             httpc_resp *out)
{
    memset(out, 0, sizeof *out);
    CURL *c = curl_easy_init();
    if (!c)
        return -1;
    struct curl_slist *h = NULL;
    char ct[160];
    /* A body is JSON unless said otherwise (curl's own default, a form,
     * is refused by the server). */
    if (ctype || body) {
        snprintf(ct, sizeof ct, "Content-Type: %s", ctype ? ctype : "application/json");
        h = curl_slist_append(h, ct);
    }
    h = curl_slist_append(h, "Expect:");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, out);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (!out->body)
        out->body = calloc(1, 1);
    return rc == CURLE_OK ? 0 : -1;
}

void httpc_resp_free(httpc_resp *r)
{
    free(r->body);
    r->body = NULL;
}

json_t *httpc_json(const char *method, const char *url, const char *ctype, const char *body,
                   long *status)
{
    httpc_resp r;
    json_t *v = NULL;
    if (httpc_do(method, url, ctype, body, &r) == 0)
        v = json_loads(r.body, 0, NULL);
    if (status)
        *status = r.status;
    httpc_resp_free(&r);
    return v;
}
