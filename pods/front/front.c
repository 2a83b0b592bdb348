/* SPDX-License-Identifier: MIT */
#include "pods/front/front.h"

#include <assert.h>
#include <strings.h>
#include <time.h>

#include "common/json-util.h"
#include "common/jsonbytes.h"
#include "common/text.h"
#include "common/timeutil.h"
#include "common/util.h"
#include "pods/twin/kind.h"
#include "pods/twin/redact.h"

/* A copy of the n bytes at p, NUL-terminated, into *ret (and n into *ret_len). */
static int copy_bytes(const char *p, size_t n, char **ret, size_t *ret_len)
{
        char *c = malloc(n + 1);
        if (!c)
                return -ENOMEM;
        memcpy(c, p, n);
        c[n] = 0;
        *ret = c;
        *ret_len = n;
        return 0;
}

int front_form_get(const char *s, size_t n, const char *name, char **ret, size_t *ret_len)
{
        size_t nl = strlen(name);
        const char *end = s + n;
        while (s < end) {
                const char *amp = memchr(s, '&', (size_t)(end - s));
                const char *e = amp ? amp : end;
                if ((size_t)(e - s) >= nl && memcmp(s, name, nl) == 0 &&
                    (s + nl == e || s[nl] == '=')) {
                        size_t l = 0;
                        char *v = NULL;
                        /* a bare "name" is an empty value */
                        if (s + nl == e)
                                v = strdup("");
                        else if (percent_decode(s + nl + 1, (size_t)(e - s) - nl - 1, true, false,
                                                &v, &l) < 0)
                                v = NULL;
                        if (!v)
                                return -ENOMEM;
                        *ret = v;
                        *ret_len = l;
                        return 0;
                }
                s = e + 1;
        }
        return -ENOENT;
}

char *front_form_value(const char *s, size_t n, const char *name)
{
        _cleanup_free_ char *v = NULL;
        size_t l;
        if (front_form_get(s, n, name, &v, &l) < 0)
                return NULL;
        /* A C string cannot hold what follows a NUL: refuse rather than truncate, so
         * "x=<secret>%00junk" never compares equal to <secret>. */
        if (memchr(v, 0, l))
                return NULL;
        return TAKE_PTR(v);
}

int front_credential(const TwinKind *k, json_t *headers, const char *query, const char *body,
                     size_t body_len, char **ret, size_t *ret_len)
{
        /* Lengths all the way: a header value may hold a NUL (the HTTP layer refuses them,
         * but this module does not rely on it) and so may a decoded parameter. */
        json_t *av = json_object_get(headers, "authorization");
        if (json_is_string(av)) {
                const char *a = json_string_value(av);
                size_t n = json_string_length(av);
                while (n > 0 && *a == ' ') {
                        a++;
                        n--;
                }
                const char *sp = memchr(a, ' ', n);
                if (sp) {
                        size_t sl = (size_t)(sp - a);
                        const char *cred = sp;
                        size_t cl = n - sl;
                        while (cl > 0 && *cred == ' ') {
                                cred++;
                                cl--;
                        }
                        if (cl == 0)
                                return -ENOENT;
                        if ((sl == 6 && strncasecmp(a, "bearer", 6) == 0) ||
                            (sl == 5 && strncasecmp(a, "token", 5) == 0))
                                return copy_bytes(cred, cl, ret, ret_len);
                        if (sl == 5 && strncasecmp(a, "basic", 5) == 0) {
                                /* RFC 7617: base64(user ":" password); the key is the user. */
                                _cleanup_free_ char *dec = NULL;
                                size_t dl;
                                if (token_base64_decode(cred, cl, &dec, &dl) < 0)
                                        return -ENOENT;
                                const char *colon = memchr(dec, ':', dl);
                                size_t ul = colon ? (size_t)(colon - dec) : dl;
                                if (ul == 0)
                                        return -ENOENT;
                                return copy_bytes(dec, ul, ret, ret_len);
                        }
                        /* an unknown scheme is a presented but unusable credential */
                        return -EBADMSG;
                }
                /* No auth scheme (RFC 9110 §11.4: auth-scheme [ 1*SP token68 ]): Stripe takes
                 * the raw key; GitHub and Slack refuse it, so a twin of theirs does too. */
                if (n > 0)
                        return k && (k->flags & TWIN_KIND_RAW_KEY) ? copy_bytes(a, n, ret, ret_len)
                                                                   : -EBADMSG;
        }
        if (k && (k->flags & TWIN_KIND_TOKEN_PARAM)) {
                _cleanup_free_ char *t = NULL;
                size_t tl = 0;
                int r = query ? front_form_get(query, strlen(query), "token", &t, &tl) : -ENOENT;
                const char *ct = json_get_str(headers, "content-type");
                if (r == -ENOENT && body && ct &&
                    strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0)
                        r = front_form_get(body, body_len, "token", &t, &tl);
                if (r == -ENOMEM)
                        return r;
                if (r == 0 && tl > 0) {
                        *ret = TAKE_PTR(t);
                        *ret_len = tl;
                        return 0;
                }
        }
        return -ENOENT;
}

/* A byte of a DNS label as hosts are written (RFC 1123 §2.1: letters, digits, hyphen; the
 * underscore of service names too), which is all a vendor's host or subdomain holds. */
static bool host_char(char ch)
{
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
               ch == '-' || ch == '_';
}

/* Whether the n bytes at h (a name without port or trailing dot) are host pattern p: the
 * name itself, or for "*.name" any name of one or more labels below it. */
static bool host_matches(const char *p, const char *h, size_t n)
{
        const char *sub = startswith(p, "*.");
        if (!sub)
                return strlen(p) == n && strncasecmp(p, h, n) == 0;
        size_t sl = strlen(sub);
        if (n <= sl + 1 || h[n - sl - 1] != '.' || strncasecmp(h + n - sl, sub, sl) != 0)
                return false;
        /* what stands for '*': labels, none of them empty (the '.' before sub included) */
        for (size_t i = 0; i <= n - sl - 1; i++)
                if (h[i] == '.' ? i == 0 || h[i - 1] == '.' : !host_char(h[i]))
                        return false;
        return true;
}

const TwinKind *front_vendor_kind(const char *host)
{
        if (!host)
                return NULL;
        /* uri-host [":" port] (RFC 9110 §7.2), port = *DIGIT (RFC 3986 §3.2.3); a vendor's
         * name is a reg-name, never an IP literal in brackets */
        size_t n = strcspn(host, ":");
        if (host[n] && host[n + 1 + strspn(host + n + 1, "0123456789")])
                return NULL;
        if (n > 0 && host[n - 1] == '.')
                n--;
        if (n == 0 || n > 253 || host[0] == '.' || host[0] == '[')
                return NULL;
        for (const char *const *name = twin_kind_names(); *name; name++) {
                const TwinKind *k = twin_kind_find(*name);
                for (const char *const *p = k ? k->vendor_hosts : NULL; p && *p; p++)
                        if (host_matches(*p, host, n))
                                return k;
        }
        return NULL;
}

void front_vendor_origin(const TwinKind *k, char *buf, size_t n)
{
        assert(k && k->vendor_hosts && k->vendor_hosts[0]);
        snprintf(buf, n, "https://%s", k->vendor_hosts[0]);
}

const TwinKind *front_keyed_kind(const char *path)
{
        for (const char *const *name = twin_kind_names(); *name; name++) {
                const TwinKind *k = twin_kind_find(*name);
                const char *below = k && k->keyed_prefix ? startswith(path, k->keyed_prefix) : NULL;
                if (below && (!*below || *below == '/'))
                        return k;
        }
        return NULL;
}

void front_keyed_session(const TwinKind *k, const uint8_t *key, size_t key_len, json_t *headers,
                         const char *query, const char *body, size_t body_len, char *sid, size_t sl)
{
        _cleanup_free_ char *cred = NULL;
        size_t cred_len;
        TokenClaims c;
        sid[0] = 0;
        if (front_credential(k, headers, query, body, body_len, &cred, &cred_len) == 0 &&
            token_verify_cached(key, key_len, cred, cred_len, INT64_MIN, &c) == 0 &&
            strlen(c.sid) < sl)
                strcpy(sid, c.sid);
}

/* A session JWT serves every twin; a provider-shaped token only its own, and an upload
 * token ("<kind>-upload") its own kind's upload path (rest below the mount) only. */
static bool provider_fits(const TwinKind *k, const TokenClaims *c, const char *rest)
{
        if (!c->provider[0])
                return true;
        if (!k)
                return false;
        const char *up = startswith(c->provider, k->name);
        if (!up || !*up || streq(up, "-user"))
                return up != NULL;
        /* one plain segment: no "..", no escape, nothing another route could take */
        const char *seg = streq(up, "-upload") && k->upload_path && rest
                                  ? startswith(rest, k->upload_path)
                                  : NULL;
        return seg && *seg &&
               seg[strspn(seg,
                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")] == 0;
}

json_t *front_provider_credentials(const TwinKind *k, const uint8_t *key, size_t key_len,
                                   const char *sid, int64_t exp, const char *api_base)
{
        char user[sizeof(((TokenClaims *)0)->provider)];
        _cleanup_free_ char *t = NULL, *u = NULL;
        if (token_mint_provider(key, key_len, k->name, sid, exp, &t) < 0)
                return NULL;
        if (streq(k->name, "stripe"))
                return json_pack("{s:s, s:s}", "api_key", t, "api_base", strempty(api_base));
        json_t *c = json_pack("{s:s}", "token", t);
        if ((size_t)snprintf(user, sizeof(user), "%s-user", k->name) < sizeof(user) &&
            token_provider_prefix(user) &&
            (token_mint_provider(key, key_len, user, sid, exp, &u) < 0 ||
             json_object_set_new(c, "user_token", json_string(u)) < 0)) {
                json_decref(c);
                return NULL;
        }
        return c;
}

int front_upload_token(const TwinKind *k, const uint8_t *key, size_t key_len, const char *sid,
                       char **ret)
{
        *ret = NULL;
        if (!k || !k->upload_path)
                return 0;
        char provider[sizeof(((TokenClaims *)0)->provider)];
        if ((size_t)snprintf(provider, sizeof(provider), "%s-upload", k->name) >= sizeof(provider))
                return -EINVAL;
        return token_mint_provider(key, key_len, provider, sid, 0, ret);
}

FrontAuth front_authenticate(const TwinKind *k, const uint8_t *key, size_t key_len, const char *sid,
                             const char *rest, json_t *headers, const char *query, const char *body,
                             size_t body_len, int64_t now, TokenClaims *ret_claims)
{
        _cleanup_free_ char *cred = NULL;
        size_t cred_len;
        int r = front_credential(k, headers, query, body, body_len, &cred, &cred_len);
        if (r == -ENOENT)
                return FRONT_AUTH_MISSING;
        if (r < 0)
                return FRONT_AUTH_INVALID;
        TokenClaims c;
        r = token_verify_cached(key, key_len, cred, cred_len, now, &c);
        if (r == -ETIME) {
                /* Expired, but only say so to the holder of a good token of this twin for
                 * this sandbox. */
                TokenClaims c2;
                if (token_verify_cached(key, key_len, cred, cred_len, INT64_MIN, &c2) == 0 &&
                    streq(c2.sid, sid) && provider_fits(k, &c2, rest)) {
                        if (ret_claims)
                                *ret_claims = c2;
                        return FRONT_AUTH_EXPIRED;
                }
                return FRONT_AUTH_INVALID;
        }
        if (r < 0 || !provider_fits(k, &c, rest))
                return FRONT_AUTH_INVALID;
        /* Good, and this twin's: only the sandbox is wrong (GitHub answers 403 to that). */
        if (!streq(c.sid, sid))
                return FRONT_AUTH_WRONG_SESSION;
        if (ret_claims)
                *ret_claims = c;
        return FRONT_AUTH_OK;
}

void front_auth_refusal(const TwinKind *k, FrontAuth auth, const char *rest, TwinReply *rp)
{
        k->auth_error(front_auth_failure(auth), rp);
        if (rp->status != 401 || !rest ||
            !(streq(rest, "/mcp") || startswith(rest, "/mcp/") || startswith(rest, "/mcp?")))
                return;
        (void)twin_reply_header(rp, "WWW-Authenticate",
                                json_string(auth == FRONT_AUTH_MISSING
                                                    ? "Bearer realm=\"pome\""
                                                    : "Bearer realm=\"pome\", "
                                                      "error=\"invalid_token\""));
}

TwinAuthFailure front_auth_failure(FrontAuth a)
{
        switch (a) {
        case FRONT_AUTH_MISSING:
                return TWIN_AUTH_MISSING;
        case FRONT_AUTH_EXPIRED:
                return TWIN_AUTH_EXPIRED;
        case FRONT_AUTH_WRONG_SESSION:
                return TWIN_AUTH_WRONG_SESSION;
        case FRONT_AUTH_OK:
        case FRONT_AUTH_INVALID:
                break;
        }
        return TWIN_AUTH_INVALID;
}

/* RFC 5234 VCHAR: what a request target may carry unescaped (RFC 9112 §3.2, RFC 3986). */
static bool is_vchar(char c)
{
        return c > 0x20 && c < 0x7f;
}

int front_query_value(const char *query, const char *name, char **ret)
{
        char *v = NULL;
        size_t l = 0;
        int r = front_form_get(strempty(query), strlen(strempty(query)), name, &v, &l);
        if (r < 0)
                return r;
        if (memchr(v, 0, l)) {
                free(v);
                return -EBADMSG;
        }
        *ret = v;
        return 0;
}

int front_decode_path(const char *raw, char **ret)
{
        if (!raw || raw[0] != '/')
                return -EINVAL;
        size_t n = strlen(raw);
        _cleanup_free_ char *out = malloc(n + 1);
        if (!out)
                return -ENOMEM;
        char *o = out;
        for (size_t i = 0; i < n; i++) {
                /* Raw bytes outside VCHAR (controls, space, DEL, 8-bit) are not a URI. */
                if (!is_vchar(raw[i]))
                        return -EINVAL;
                if (raw[i] == '%') {
                        if (i + 2 >= n)
                                return -EINVAL;
                        int hi = unhex(raw[i + 1]), lo = unhex(raw[i + 2]);
                        if (hi < 0 || lo < 0)
                                return -EINVAL;
                        char c = (char)(hi << 4 | lo);
                        if (c == 0)
                                return -EINVAL;
                        if (c == '/' || c == '%') {
                                /* an escaped '/' stays inside its segment (a ref such as
                                 * "heads/fix", one path parameter), and so '%' stays escaped
                                 * too; twin_route_match decodes both in parameters */
                                *o++ = '%';
                                *o++ = '2';
                                *o++ = c == '/' ? 'F' : '5';
                        } else
                                *o++ = c;
                        i += 2;
                } else
                        *o++ = raw[i];
        }
        *o = 0;
        /* The decoded path travels as a JSON string (the frame head to the pod, the twin's
         * routing): it must be text (RFC 3986 §2.5 reads escapes as UTF-8). */
        if (!utf8_valid(out, (size_t)(o - out)))
                return -EINVAL;
        /* Refuse dot segments anywhere (RFC 3986 §3.3): no twin route has them, and
         * a path that walks upwards is never what an honest client meant. */
        for (const char *s = out; *s;) {
                if (*s == '/' || strncmp(s, "%2F", 3) == 0) {
                        s += *s == '/' ? 1 : 3;
                        continue;
                }
                /* a segment ends at '/' or at an escaped one: "a%2F..%2Fb" walks too */
                const char *e = s;
                while (*e && *e != '/' && strncmp(e, "%2F", 3) != 0)
                        e++;
                size_t l = (size_t)(e - s);
                if ((l == 1 && s[0] == '.') || (l == 2 && s[0] == '.' && s[1] == '.'))
                        return -EINVAL;
                s = e;
        }
        *ret = TAKE_PTR(out);
        return 0;
}

int front_check_query(const char *raw_query)
{
        if (!raw_query)
                return 0;
        for (const char *p = raw_query; *p; p++)
                if (!is_vchar(*p))
                        return -EINVAL;
        return 0;
}

json_t *front_tape_row(const FrontCall *fc, const TwinReply *rp)
{
        char ts[40];
        format_rfc3339_usec(fc->ts_usec, ts, sizeof(ts));
        _cleanup_free_ char *full = NULL;
        if (fc->query && *fc->query) {
                if (asprintf(&full, "%s?%s", fc->path, fc->query) < 0)
                        return NULL;
        }
        json_t *request_body = rp->request_body ? json_deep_copy(rp->request_body) : NULL;
        if (!request_body && fc->body_len > 0)
                request_body = json_loadb(fc->body, fc->body_len, JSON_DECODE_ANY, NULL);
        const char *corr = json_get_str(fc->headers, "x-pome-correlation-id");
        const char *step = json_get_str(fc->headers, "x-pome-scenario-step-id");
        _cleanup_json_ json_t *row = json_pack(
                "{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:i, s:O, s:f, s:o, s:b, s:O, s:s, "
                "s:o, s:s, s:o}",
                "kind", "TwinHttpEvent", "event_id", fc->request_id, "ts", ts, "run_id", fc->run_id,
                "twin", fc->twin, "method",
                /* the caller's bytes, method and path: invalid UTF-8 mended, never a row lost */
                twin_json_string_lossy(fc->method, strlen(fc->method)), "path",
                twin_json_string_lossy(full ? full : fc->path, strlen(full ? full : fc->path)),
                "request_headers", fc->headers ? json_incref(fc->headers) : json_object(),
                "request_body", request_body ? request_body : json_null(), "status", rp->status,
                "response_body", rp->body ? rp->body : json_null(), "latency_ms", fc->latency_ms,
                "tool", json_string_or_null(rp->tool), "state_mutation", rp->state_mutation,
                "state_delta", rp->state_delta ? rp->state_delta : json_null(), "fidelity",
                rp->fidelity ? rp->fidelity : "semantic", "error",
                rp->status >= 400 ? json_string(rp->error ? rp->error : "error") : json_null(),
                "correlation_id", corr ? corr : fc->request_id, "task_step_id",
                json_string_or_null(step));
        if (!row)
                return NULL;
        if (streq(fc->twin, "stripe") &&
            json_object_set_new(row, "idempotency_dedupe", json_boolean(rp->idempotency_dedupe)) <
                    0)
                return NULL;
        /* The row shares the request's headers and the reply's bodies: redact a copy. A row
         * that could not be redacted whole is no row (NULL), never one with a secret left. */
        _cleanup_json_ json_t *copy = json_deep_copy(row);
        if (!copy || twin_redact_json(copy) < 0)
                return NULL;
        return TAKE_PTR(copy);
}

/* s (n bytes, valid UTF-8) as a JSON string with its token-looking words scrubbed. */
static int put_scrubbed(JsonBuf *b, const char *s, size_t n)
{
        _cleanup_free_ char *c = NULL;
        size_t l;
        int r = twin_redact_string(s, n, &c, &l);
        if (r < 0)
                return r;
        if (r > 0)
                jsonbuf_put_string(b, c, l);
        else
                jsonbuf_put_string(b, s, n);
        return 0;
}

/* put_scrubbed of a C string that must be UTF-8 (json_pack's "s" refused anything else). */
static int put_text(JsonBuf *b, const char *s)
{
        size_t n = strlen(s);
        if (!utf8_valid(s, n))
                return -EINVAL;
        return put_scrubbed(b, s, n);
}

static int put_text_or_null(JsonBuf *b, const char *s)
{
        if (!s) {
                jsonbuf_puts(b, "null");
                return 0;
        }
        return put_text(b, s);
}

/* Bytes as text, each byte of a malformed sequence mended to U+FFFD (as
 * twin_json_string_lossy), then scrubbed. */
static int put_lossy(JsonBuf *b, const char *s, size_t n)
{
        if (utf8_valid(s, n))
                return put_scrubbed(b, s, n);
        _cleanup_free_ char *m = NULL;
        size_t ml;
        if (utf8_mend(s, n, &m, &ml) < 0)
                return -ENOMEM;
        return put_scrubbed(b, m, ml);
}

/* A part the pod serialized (compact JSON, redacted), or null. */
static void put_part(JsonBuf *b, const char *p, size_t n)
{
        if (p)
                jsonbuf_put(b, p, n);
        else
                jsonbuf_puts(b, "null");
}

/*
 * The request headers as the row holds them: each value under a secret key "[REDACTED]",
 * every other value and every name scrubbed. A name that would itself be scrubbed (rare:
 * a token used as a header name) takes the document path, whose renaming rules are
 * twin_redact_json's own.
 */
static int put_headers(JsonBuf *b, json_t *headers)
{
        const char *k;
        json_t *v;
        bool simple = true;
        json_object_foreach (headers, k, v) {
                size_t l;
                if (!json_is_string(v) || twin_redact_find(k, strlen(k), 0, &l) < strlen(k) ||
                    !utf8_valid(k, strlen(k))) {
                        simple = false;
                        break;
                }
        }
        if (!simple) {
                _cleanup_json_ json_t *copy = json_deep_copy(headers);
                if (!copy || twin_redact_json(copy) < 0)
                        return -ENOMEM;
                _cleanup_free_ char *text = json_dumps(copy, JSON_COMPACT);
                if (!text)
                        return -ENOMEM;
                jsonbuf_puts(b, text);
                return 0;
        }
        jsonbuf_put(b, "{", 1);
        bool first = true;
        json_object_foreach (headers, k, v) {
                if (!first)
                        jsonbuf_put(b, ",", 1);
                first = false;
                jsonbuf_put_string(b, k, strlen(k));
                jsonbuf_put(b, ":", 1);
                if (twin_redact_key(k))
                        jsonbuf_puts(b, "\"" TWIN_REDACTED "\"");
                else {
                        int r = put_scrubbed(b, json_string_value(v), json_string_length(v));
                        if (r < 0)
                                return r;
                }
        }
        jsonbuf_put(b, "}", 1);
        return 0;
}

int front_tape_line(const FrontCall *fc, const TwinReplyBytes *rb, char **ret, size_t *ret_len)
{
        char ts[40];
        format_rfc3339_usec(fc->ts_usec, ts, sizeof(ts));
        const char *corr = json_get_str(fc->headers, "x-pome-correlation-id");
        const char *step = json_get_str(fc->headers, "x-pome-scenario-step-id");
        _cleanup_(jsonbuf_done) JsonBuf b = {};
        if (jsonbuf_reserve(&b, 1024 + rb->request_body_len + rb->response_body_len +
                                        rb->state_delta_len) < 0)
                return -ENOMEM;
        int r;
        /* the keys in front_tape_row's order; event_id near the start (tape_event_id) */
        jsonbuf_puts(&b, "{\"kind\":\"TwinHttpEvent\",\"event_id\":");
        if ((r = put_text(&b, fc->request_id)) < 0)
                return r;
        jsonbuf_puts(&b, ",\"ts\":");
        if ((r = put_text(&b, ts)) < 0)
                return r;
        jsonbuf_puts(&b, ",\"run_id\":");
        if ((r = put_text(&b, fc->run_id)) < 0)
                return r;
        jsonbuf_puts(&b, ",\"twin\":");
        if ((r = put_text(&b, fc->twin)) < 0)
                return r;
        jsonbuf_puts(&b, ",\"method\":");
        if ((r = put_lossy(&b, fc->method, strlen(fc->method))) < 0) /* the caller's bytes */
                return r;
        jsonbuf_puts(&b, ",\"path\":");
        if (fc->query && *fc->query) {
                _cleanup_free_ char *full = NULL;
                if (asprintf(&full, "%s?%s", fc->path, fc->query) < 0)
                        return -ENOMEM;
                r = put_lossy(&b, full, strlen(full));
        } else
                r = put_lossy(&b, fc->path, strlen(fc->path));
        if (r < 0)
                return r;
        jsonbuf_puts(&b, ",\"request_headers\":");
        if (fc->headers)
                r = put_headers(&b, fc->headers);
        else
                jsonbuf_puts(&b, "{}");
        if (r < 0)
                return r;
        jsonbuf_puts(&b, ",\"request_body\":");
        put_part(&b, rb->request_body, rb->request_body_len);
        jsonbuf_puts(&b, ",\"status\":");
        jsonbuf_put_int(&b, rb->status);
        jsonbuf_puts(&b, ",\"response_body\":");
        put_part(&b, rb->response_body, rb->response_body_len);
        jsonbuf_puts(&b, ",\"latency_ms\":");
        jsonbuf_put_real(&b, fc->latency_ms);
        jsonbuf_puts(&b, ",\"tool\":");
        if ((r = put_text_or_null(&b, rb->tool)) < 0)
                return r;
        jsonbuf_puts(&b,
                     rb->state_mutation ? ",\"state_mutation\":true" : ",\"state_mutation\":false");
        jsonbuf_puts(&b, ",\"state_delta\":");
        put_part(&b, rb->state_delta, rb->state_delta_len);
        jsonbuf_puts(&b, ",\"fidelity\":");
        if ((r = put_text(&b, rb->fidelity ? rb->fidelity : "semantic")) < 0)
                return r;
        jsonbuf_puts(&b, ",\"error\":");
        if (rb->status >= 400)
                r = put_text(&b, rb->error ? rb->error : "error");
        else
                jsonbuf_puts(&b, "null");
        if (r < 0)
                return r;
        jsonbuf_puts(&b, ",\"correlation_id\":");
        if ((r = put_text(&b, corr ? corr : fc->request_id)) < 0)
                return r;
        jsonbuf_puts(&b, ",\"task_step_id\":");
        if ((r = put_text_or_null(&b, step)) < 0)
                return r;
        if (streq(fc->twin, "stripe"))
                jsonbuf_puts(&b, rb->idempotency_dedupe ? ",\"idempotency_dedupe\":true"
                                                        : ",\"idempotency_dedupe\":false");
        jsonbuf_put(&b, "}\n", 2);
        if (b.oom)
                return -ENOMEM;
        *ret_len = b.len;
        *ret = TAKE_PTR(b.data);
        return 0;
}

json_t *front_event_row(const FrontCall *fc, const char *mount_path, const json_t *event)
{
        char ts[40], id[25];
        format_rfc3339_usec(fc->ts_usec, ts, sizeof(ts));
        if (front_request_id(id) < 0)
                return NULL;
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s%s", strempty(mount_path), strempty(json_get_str(event, "path"))) <
            0)
                return NULL;
        json_t *status = json_object_get(event, "status");
        int st = json_is_integer(status) ? (int)json_integer_value(status) : 200;
        json_t *resp = json_object_get(event, "response_body");
        const char *err = json_get_str(resp, "error");
        _cleanup_json_ json_t *row = json_pack(
                "{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:{}, s:O, s:i, s:O, s:f, s:O, s:b, s:O, s:s, "
                "s:o, s:s, s:n}",
                "kind", "TwinHttpEvent", "event_id", id, "ts", ts, "run_id", fc->run_id, "twin",
                fc->twin, "method", strempty(json_get_str(event, "method")), "path",
                twin_json_string_lossy(path, strlen(path)), "request_headers", "request_body",
                json_object_get(event, "request_body") ? json_object_get(event, "request_body")
                                                       : json_null(),
                "status", st, "response_body", resp ? resp : json_null(), "latency_ms", 0.0, "tool",
                json_object_get(event, "tool") ? json_object_get(event, "tool") : json_null(),
                "state_mutation", true, "state_delta",
                json_object_get(event, "state_delta") ? json_object_get(event, "state_delta")
                                                      : json_null(),
                "fidelity", "semantic", "error",
                st >= 400 || err ? json_string(err ? err : "error") : json_null(), "correlation_id",
                fc->request_id, "task_step_id");
        if (!row)
                return NULL;
        /* a change the caller made (one of several mutations in a GraphQL request) is a row
         * like a call's own; one the twin made on its own says so */
        if (!json_is_true(json_object_get(event, "by_caller")) &&
            json_object_set_new(row, "origin", json_string("twin")) < 0)
                return NULL;
        _cleanup_json_ json_t *copy = json_deep_copy(row);
        if (!copy || twin_redact_json(copy) < 0)
                return NULL;
        return TAKE_PTR(copy);
}

int front_request_id(char buf[static 25])
{
        _cleanup_free_ char *id = NULL;
        int r = token_random_id("req_", 20, &id);
        if (r < 0)
                return r;
        memcpy(buf, id, 25);
        return 0;
}
