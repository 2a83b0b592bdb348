/* SPDX-License-Identifier: MIT */
#include "cli/api.h"

#include "common/httpclient.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "common/json-util.h"
#include "common/util.h"

/* How much of a body that is not JSON we show: enough to recognise a proxy's error page. */
#define FIRST_LINE_MAX 200

void api_reply_done(ApiReply *r)
{
        json_decref(r->json);
        free(r->url);
        free(r->body);
        free(r->headers);
        *r = (ApiReply){};
}

/* Prints the first line of a body, at most FIRST_LINE_MAX bytes, control characters replaced. */
static void print_first_line(const char *body)
{
        size_t n;
        char line[FIRST_LINE_MAX + 1];

        while (*body == ' ' || *body == '\t' || *body == '\r' || *body == '\n')
                body++;
        if (!*body) {
                fputs("(empty body)", stderr);
                return;
        }
        n = strcspn(body, "\r\n");
        if (n > FIRST_LINE_MAX)
                n = FIRST_LINE_MAX;
        memcpy(line, body, n);
        line[n] = '\0';
        output_fputs_clean(line, stderr);
}

/* "URL" or "URL (from SOURCE)" when the URL came from somewhere a user might not expect. */
static void print_target(const Config *c)
{
        output_fputs_clean(c->api_url, stderr);
        if (c->api_url_source && !streq(c->api_url_source, "default") &&
            !streq(c->api_url_source, "--api-url")) {
                fputs(" (from ", stderr);
                output_fputs_clean(c->api_url_source, stderr);
                fputc(')', stderr);
        }
}

static void parse_envelope(ApiReply *r)
{
        json_t *e = json_object_get(r->json, "error");

        if (!json_is_object(e))
                return;
        r->error_type = json_get_str(e, "type");
        r->error_message = json_get_str(e, "message");
        r->request_id = json_get_str(e, "request_id");
        r->error_details = json_object_get(e, "details");
}

int api_call(const Config *c, const char *method, const char *path, const json_t *body,
             ApiReply *ret)
{
        return api_request(c, method, path, body, 0, ret);
}

int api_request(const Config *c, const char *method, const char *path, const json_t *body,
                unsigned flags, ApiReply *ret)
{
        _cleanup_free_ char *url = NULL, *text = NULL;
        ClientResponse resp = {};
        ClientError err;
        ApiReply reply = {};
        int r;

        if (asprintf(&url, "%s%s", c->api_url, path) < 0) {
                url = NULL;
                return -ENOMEM;
        }
        if (body) {
                text = json_dumps(body, JSON_COMPACT);
                if (!text)
                        return -ENOMEM;
        }

        r = client_request(method, url, c->api_key, text, &resp, &err);
        if (r < 0 && (flags & API_QUIET))
                return r;
        if (r < 0) {
                switch (r) {
                case -ECONNREFUSED:
                case -EHOSTUNREACH:
                        fputs("pome: cannot reach pomed at ", stderr);
                        print_target(c);
                        fprintf(stderr, ": %s (is pomed running? start it with `pomed`)\n",
                                err.message);
                        break;
                case -ETIMEDOUT:
                        fputs("pome: no answer in time from pomed at ", stderr);
                        print_target(c);
                        fprintf(stderr, ": %s\n", err.message);
                        break;
                default:
                        fprintf(stderr, "pome: %s %s failed: %s\n", method, path, err.message);
                        break;
                }
                return r;
        }

        reply.url = TAKE_PTR(url);
        reply.status = resp.status;
        reply.body = TAKE_PTR(resp.body);
        reply.body_len = resp.body_len;
        reply.headers = TAKE_PTR(resp.headers);
        if (reply.body_len > 0)
                reply.json = json_loadb(reply.body, reply.body_len, 0, NULL);

        if (reply.status >= 200 && reply.status < 300) {
                if (!(flags & API_ANY_BODY) && reply.body_len > 0 && !json_is_object(reply.json)) {
                        if (flags & API_QUIET) {
                                api_reply_done(&reply);
                                return -EBADMSG;
                        }
                        fprintf(stderr,
                                "pome: unexpected answer from pomed to %s %s (HTTP %ld, "
                                "not a JSON object): ",
                                method, path, reply.status);
                        print_first_line(reply.body);
                        fputc('\n', stderr);
                        api_reply_done(&reply);
                        return -EBADMSG;
                }
                *ret = reply;
                return 0;
        }

        parse_envelope(&reply);
        *ret = reply;
        return -EREMOTEIO;
}

static int exit_status_for_http(long status, const char *type)
{
        if (status == 401 || status == 403)
                return POME_EXIT_AUTH;
        if (status == 402 || status == 429)
                return POME_EXIT_QUOTA;
        if (status == 409)
                return POME_EXIT_REFUSED;
        if (streq_ptr(type, "invalid_auth") || streq_ptr(type, "revoked_key") ||
            streq_ptr(type, "forbidden"))
                return POME_EXIT_AUTH;
        if (streq_ptr(type, "quota_exceeded") || streq_ptr(type, "rate_limited"))
                return POME_EXIT_QUOTA;
        if (streq_ptr(type, "conflict"))
                return POME_EXIT_REFUSED;
        return POME_EXIT_ERROR;
}

/* One indented line per scalar detail; tokens (a discard_token…) are not for the terminal. */
static void print_details(const json_t *details)
{
        const char *key;
        json_t *v;

        json_object_foreach ((json_t *)details, key, v) {
                if (strstr(key, "token") || strstr(key, "secret"))
                        continue;
                fputs("  ", stderr);
                output_fputs_clean(key, stderr);
                fputs(": ", stderr);
                if (json_is_string(v))
                        output_fputs_clean(json_string_value(v), stderr);
                else if (json_is_integer(v))
                        fprintf(stderr, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
                else if (json_is_real(v))
                        fprintf(stderr, "%g", json_real_value(v));
                else if (json_is_boolean(v))
                        fputs(json_is_true(v) ? "true" : "false", stderr);
                else if (json_is_null(v))
                        fputs("null", stderr);
                else {
                        _cleanup_free_ char *s = json_dumps(v, JSON_COMPACT);
                        output_fputs_clean(s ? s : "…", stderr);
                }
                fputc('\n', stderr);
        }
}

int api_exit_status(int r, const ApiReply *reply)
{
        if (r >= 0)
                return POME_EXIT_OK;
        if (r == -ENOKEY || r == -EACCES)
                return POME_EXIT_AUTH;
        if (r == -EINVAL)
                return POME_EXIT_USAGE;
        if (r == -ENOMEM)
                fputs("pome: out of memory\n", stderr);
        if (r != -EREMOTEIO || !reply)
                return POME_EXIT_ERROR;

        if (reply->error_message) {
                fputs("pome: ", stderr);
                output_fputs_clean(reply->error_message, stderr);
                fprintf(stderr, " (");
                output_fputs_clean(reply->error_type ? reply->error_type : "error", stderr);
                if (reply->request_id) {
                        fputs(", request ", stderr);
                        output_fputs_clean(reply->request_id, stderr);
                }
                fputs(")\n", stderr);
                print_details(reply->error_details);
        } else {
                fputs("pome: ", stderr);
                output_fputs_clean(strempty(reply->url), stderr);
                fprintf(stderr, " answered HTTP %ld%s: ", reply->status,
                        reply->status >= 300 && reply->status < 400
                                ? " (redirects are not followed)"
                                : "");
                print_first_line(reply->body ? reply->body : "");
                fputc('\n', stderr);
        }
        return exit_status_for_http(reply->status, reply->error_type);
}
