/* SPDX-License-Identifier: MIT */
#include "common/httpclient.h"

#include <assert.h>
#include <curl/curl.h>
#include <strings.h>

#include "common/util.h"

typedef struct Sink {
        char *data;
        size_t len;
        size_t cap;
        bool too_big;
} Sink;

static void curl_easy_cleanupp(CURL **c)
{
        if (*c)
                curl_easy_cleanup(*c);
}

static void curl_slist_free_allp(struct curl_slist **l)
{
        if (*l)
                curl_slist_free_all(*l);
}

static void curl_url_cleanupp(CURLU **u)
{
        if (*u)
                curl_url_cleanup(*u);
}

static void curl_freep(char **p)
{
        if (*p)
                curl_free(*p);
}

static int client_global_init(void)
{
        static bool done = false;

        if (done)
                return 0;
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return -ENOMEM;
        (void)atexit(curl_global_cleanup);
        done = true;
        return 0;
}

static size_t sink_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
        Sink *s = userdata;
        size_t n = size * nmemb;

        if (n > CLIENT_BODY_MAX - s->len) {
                s->too_big = true;
                return 0; /* makes libcurl stop with CURLE_WRITE_ERROR */
        }
        if (s->len + n + 1 > s->cap) {
                size_t cap = s->cap ? s->cap : 4096;
                char *p;

                while (cap < s->len + n + 1)
                        cap *= 2;
                p = realloc(s->data, cap);
                if (!p)
                        return 0;
                s->data = p;
                s->cap = cap;
        }
        memcpy(s->data + s->len, ptr, n);
        s->len += n;
        s->data[s->len] = '\0';
        return n;
}

/* Loopback hosts are never sent through a proxy: pomed listens on loopback by default. */
static bool url_is_loopback(const char *url)
{
        _cleanup_(curl_url_cleanupp) CURLU *u = curl_url();
        _cleanup_(curl_freep) char *host = NULL;

        if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
                return false;
        return strcasecmp(host, "localhost") == 0 || startswith(host, "127.") ||
               streq(host, "[::1]");
}

/* A table rather than a switch: CURLcode has ~100 values and grows with libcurl. */
static const struct {
        CURLcode code;
        int err;
} curlcode_errnos[] = {
        {CURLE_COULDNT_CONNECT, ECONNREFUSED},
        {CURLE_COULDNT_RESOLVE_HOST, EHOSTUNREACH},
        {CURLE_COULDNT_RESOLVE_PROXY, EHOSTUNREACH},
        {CURLE_OPERATION_TIMEDOUT, ETIMEDOUT},
        {CURLE_FILESIZE_EXCEEDED, EFBIG},
        {CURLE_URL_MALFORMAT, EINVAL},
        {CURLE_UNSUPPORTED_PROTOCOL, EINVAL},
        {CURLE_GOT_NOTHING, ECONNRESET},
        {CURLE_RECV_ERROR, ECONNRESET},
        {CURLE_SEND_ERROR, ECONNRESET},
        {CURLE_PARTIAL_FILE, ECONNRESET},
        {CURLE_OUT_OF_MEMORY, ENOMEM},
};

static int errno_from_curlcode(CURLcode c)
{
        for (size_t i = 0; i < ELEMENTSOF(curlcode_errnos); i++)
                if (curlcode_errnos[i].code == c)
                        return -curlcode_errnos[i].err;
        return -EPROTO;
}

/* The header lines of the last response only: a new status line starts them afresh. */
static size_t header_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
        Sink *s = userdata;
        size_t n = size * nmemb;

        if (n >= 5 && memcmp(ptr, "HTTP/", 5) == 0)
                s->len = 0;
        else if (n > 64u * 1024u - s->len)
                return n; /* a header block this large holds nothing we read: drop the rest */
        return sink_write(ptr, size, nmemb, userdata);
}

char *client_header_value(const char *headers, const char *name)
{
        size_t n = strlen(name);

        for (const char *l = headers; l && *l;) {
                const char *end = strchrnul(l, '\n');
                if (strncasecmp(l, name, n) == 0 && l[n] == ':') {
                        const char *v = l + n + 1;
                        while (v < end && (*v == ' ' || *v == '\t'))
                                v++;
                        const char *e = end;
                        while (e > v && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
                                e--;
                        return strndup(v, (size_t)(e - v));
                }
                l = *end ? end + 1 : end;
        }
        return NULL;
}

void client_response_done(ClientResponse *r)
{
        free(r->body);
        free(r->headers);
        *r = (ClientResponse){};
}

#define SETOPT(c, opt, val)                                          \
        do {                                                         \
                if (curl_easy_setopt((c), (opt), (val)) != CURLE_OK) \
                        goto setopt_failed;                          \
        } while (0)

int client_request(const char *method, const char *url, const char *bearer, const char *body,
                   ClientResponse *ret, ClientError *ret_error)
{
        assert(bearer);
        return client_request_with(method, url, &(ClientOptions){.bearer = bearer}, body, ret,
                                   ret_error);
}

int client_request_with(const char *method, const char *url, const ClientOptions *o,
                        const char *body, ClientResponse *ret, ClientError *ret_error)
{
        _cleanup_(curl_easy_cleanupp) CURL *c = NULL;
        _cleanup_(curl_slist_free_allp) struct curl_slist *headers = NULL;
        _cleanup_free_ char *auth = NULL;
        char errbuf[CURL_ERROR_SIZE] = "";
        Sink sink = {}, head = {};
        struct curl_slist *l;
        CURLcode cc;
        long status = 0;
        int r;

        assert(method && url && o && ret && ret_error);
        ret_error->message[0] = '\0';

        r = client_global_init();
        if (r < 0)
                goto oom;
        c = curl_easy_init();
        if (!c)
                goto oom;

        if (o->bearer && asprintf(&auth, "Authorization: Bearer %s", o->bearer) < 0) {
                auth = NULL;
                goto oom;
        }
        /* "Expect:" stops libcurl's 100-continue round trip on larger POSTs. */
        const char *hdrs[] = {"Accept: application/json",
                              "Expect:", body ? "Content-Type: application/json" : NULL, auth};
        for (size_t i = 0; i < ELEMENTSOF(hdrs); i++) {
                if (!hdrs[i])
                        continue;
                l = curl_slist_append(headers, hdrs[i]);
                if (!l)
                        goto oom;
                headers = l;
        }
        for (const char *const *h = o->headers; h && *h; h++) {
                l = curl_slist_append(headers, *h);
                if (!l)
                        goto oom;
                headers = l;
        }

        SETOPT(c, CURLOPT_URL, url);
        SETOPT(c, CURLOPT_PROTOCOLS_STR, "http,https");
        SETOPT(c, CURLOPT_NOSIGNAL, 1L);
        SETOPT(c, CURLOPT_CONNECTTIMEOUT, CLIENT_CONNECT_TIMEOUT_SEC);
        SETOPT(c, CURLOPT_TIMEOUT, o->timeout_sec > 0 ? o->timeout_sec : CLIENT_TOTAL_TIMEOUT_SEC);
        SETOPT(c, CURLOPT_FOLLOWLOCATION, 0L);
        SETOPT(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)CLIENT_BODY_MAX);
        SETOPT(c, CURLOPT_USERAGENT, "pome/" POME_VERSION);
        SETOPT(c, CURLOPT_HTTPHEADER, headers);
        SETOPT(c, CURLOPT_ERRORBUFFER, errbuf);
        SETOPT(c, CURLOPT_WRITEFUNCTION, sink_write);
        SETOPT(c, CURLOPT_WRITEDATA, &sink);
        SETOPT(c, CURLOPT_HEADERFUNCTION, header_write);
        SETOPT(c, CURLOPT_HEADERDATA, &head);
        if (url_is_loopback(url))
                SETOPT(c, CURLOPT_NOPROXY, "*");
        if (body) {
                SETOPT(c, CURLOPT_POSTFIELDS, body);
                SETOPT(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
        }
        if (!streq(method, body ? "POST" : "GET"))
                SETOPT(c, CURLOPT_CUSTOMREQUEST, method);

        cc = curl_easy_perform(c);
        if (cc != CURLE_OK) {
                free(sink.data);
                free(head.data);
                if (sink.too_big || cc == CURLE_FILESIZE_EXCEEDED) {
                        snprintf(ret_error->message, sizeof(ret_error->message),
                                 "response body larger than %u MiB", CLIENT_BODY_MAX >> 20);
                        return -EFBIG;
                }
                snprintf(ret_error->message, sizeof(ret_error->message), "%s",
                         errbuf[0] ? errbuf : curl_easy_strerror(cc));
                /* libcurl's error buffer often ends with a newline; keep messages one line. */
                ret_error->message[strcspn(ret_error->message, "\r\n")] = '\0';
                return errno_from_curlcode(cc);
        }
        (void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);

        if (!sink.data) {
                sink.data = strdup("");
                if (!sink.data)
                        goto oom;
        }
        *ret = (ClientResponse){
                .status = status, .body = sink.data, .body_len = sink.len, .headers = head.data};
        return 0;

setopt_failed:
        free(sink.data);
        free(head.data);
        snprintf(ret_error->message, sizeof(ret_error->message),
                 "libcurl refused an option (libcurl %s)",
                 curl_version_info(CURLVERSION_NOW)->version);
        return -EPROTO;
oom:
        free(sink.data);
        free(head.data);
        snprintf(ret_error->message, sizeof(ret_error->message), "out of memory");
        return -ENOMEM;
}

char *client_escape(const char *s)
{
        _cleanup_(curl_freep) char *e = NULL;

        if (client_global_init() < 0)
                return NULL;
        /* The handle argument is ignored since libcurl 7.82. */
        e = curl_easy_escape(NULL, s, 0);
        return e ? strdup(e) : NULL;
}
