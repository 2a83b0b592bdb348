/* SPDX-License-Identifier: MIT */
#include "cli/collect.h"

#include <fcntl.h>
#include <stdio.h>

#include "cli/api.h"
#include "common/httpclient.h"
#include "common/fileio.h"
#include "common/json-util.h"
#include "common/util.h"
#include "pods/grade/grade.h"

#define TAPE_PAGE 1000 /* rows per /events page */

static char *sandbox_path(const char *sid, const char *suffix)
{
        _cleanup_free_ char *e = client_escape(sid);
        char *p;
        if (!e || asprintf(&p, "/v1/sandboxes/%s%s", e, suffix) < 0)
                return NULL;
        return p;
}

/* <dir>/<name> := len bytes of data, atomically. 0 or -errno (said). */
int collect_write(const char *who, const char *dir, const char *name, const void *data, size_t len)
{
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        int r = write_file_at(AT_FDCWD, path, data, len, 0644, true);
        if (r < 0)
                fprintf(stderr, "%s: cannot write %s: %s\n", who, path, strerror(-r));
        return r;
}

int collect_write_json(const char *who, const char *dir, const char *name, const json_t *j,
                       size_t flags)
{
        _cleanup_free_ char *s = json_dumps(j, flags);
        if (!s)
                return -ENOMEM;
        size_t n = strlen(s);
        _cleanup_free_ char *line = malloc(n + 2);
        if (!line)
                return -ENOMEM;
        memcpy(line, s, n);
        line[n] = '\n';
        return collect_write(who, dir, name, line, n + 1);
}

int collect_tape(const Config *c, const char *who, const char *sid, const char *dir,
                 const char *twin)
{
        _cleanup_free_ char *path = NULL, *tmp = NULL, *after = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        if (asprintf(&path, "%s/%s.tape.jsonl", dir, twin) < 0 ||
            asprintf(&tmp, "%s/.%s.tape.jsonl.tmp", dir, twin) < 0)
                return -ENOMEM;
        f = fopen(tmp, "we");
        if (!f) {
                int r = negative_errno();
                fprintf(stderr, "%s: cannot create %s: %s\n", who, tmp, strerror(-r));
                return r;
        }
        int r = 0;
        for (;;) {
                _cleanup_(api_reply_done) ApiReply reply = {};
                _cleanup_free_ char *q = NULL, *a = after ? client_escape(after) : NULL, *p = NULL;
                if ((after && !a) || asprintf(&q, "/events?twin=%s&limit=%d%s%s", twin, TAPE_PAGE,
                                              a ? "&after=" : "", strempty(a)) < 0) {
                        q = NULL;
                        r = -ENOMEM;
                        break;
                }
                if (!(p = sandbox_path(sid, q))) {
                        r = -ENOMEM;
                        break;
                }
                r = api_request(c, "GET", p, NULL, API_ANY_BODY, &reply);
                if (r < 0) {
                        (void)api_exit_status(r, &reply);
                        break;
                }
                if (!json_is_array(reply.json)) {
                        fprintf(stderr, "%s: GET %s: not a JSON array of tape rows\n", who, p);
                        r = -EBADMSG;
                        break;
                }
                size_t i;
                json_t *row;
                json_array_foreach (reply.json, i, row)
                        if (r >= 0 &&
                            (json_dumpf(row, f, JSON_COMPACT) < 0 || fputc('\n', f) == EOF))
                                r = -EIO;
                free(after);
                after = client_header_value(reply.headers, "X-Pome-Next-After");
                if (r < 0 || !after || json_array_size(reply.json) == 0)
                        break;
        }
        if (r >= 0 && (fflush(f) != 0 || ferror(f)))
                r = -EIO;
        if (r >= 0 && rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0) {
                if (r == -EIO || r == -ENOMEM)
                        fprintf(stderr, "%s: cannot write %s: %s\n", who, path, strerror(-r));
                (void)unlink(tmp);
        }
        return r;
}

int collect_state(const Config *c, const char *who, const char *sid, const char *dir,
                  const char *twin, char **ret_why)
{
        _cleanup_(api_reply_done) ApiReply reply = {};
        _cleanup_free_ char *q = NULL, *p = NULL;
        char name[64];
        if (asprintf(&q, "/state?twin=%s", twin) < 0 || !(p = sandbox_path(sid, q)))
                return -ENOMEM;
        int r = api_call(c, "GET", p, NULL, &reply);
        if (r == -EREMOTEIO && reply.status == 404) {
                if (ret_why)
                        *ret_why = strdup(reply.error_message ? reply.error_message : "404");
                return 1;
        }
        if (r < 0) {
                (void)api_exit_status(r, &reply);
                return r;
        }
        /* one line, every digit: the world pomed kept, read back as the same document */
        snprintf(name, sizeof(name), "%s.final.json", twin);
        return collect_write_json(who, dir, name, reply.json, JSON_COMPACT);
}

int collect_verdict(const Config *c, const char *who, const char *sid, const char *dir,
                    json_t **ret_verdict, char **ret_why)
{
        _cleanup_(api_reply_done) ApiReply reply = {};
        _cleanup_free_ char *p = sandbox_path(sid, "/verdict"), *bytes = NULL;
        size_t len;
        if (!p)
                return -ENOMEM;
        int r = api_call(c, "GET", p, NULL, &reply);
        if (r == -EREMOTEIO && reply.status == 404) {
                if (ret_why)
                        *ret_why = strdup(reply.error_message ? reply.error_message : "404");
                return 1;
        }
        if (r < 0 || !json_is_object(reply.json)) {
                (void)api_exit_status(r, &reply);
                return r < 0 ? r : -EBADMSG;
        }
        r = grade_verdict_render(reply.json, &bytes, &len);
        if (r < 0)
                return r;
        r = collect_write(who, dir, "verdict.json", bytes, len);
        if (r < 0)
                return r;
        if (ret_verdict)
                *ret_verdict = json_incref(reply.json);
        return 0;
}

/* <dir>/<name> := the body of GET /v1/sandboxes/<sid><suffix>, as served. 0, 1 on a 404,
 * -errno (said unless quiet). */
static int collect_text(const Config *c, const char *who, const char *sid, const char *dir,
                        const char *suffix, const char *name, bool quiet)
{
        _cleanup_(api_reply_done) ApiReply reply = {};
        _cleanup_free_ char *p = sandbox_path(sid, suffix);
        if (!p)
                return -ENOMEM;
        int r = api_request(c, "GET", p, NULL, API_ANY_BODY | API_QUIET, &reply);
        if (r == -EREMOTEIO && reply.status == 404)
                return 1;
        if (r < 0) {
                if (!quiet)
                        fprintf(stderr, "%s: cannot read %s of %s: %s\n", who, name, sid,
                                reply.error_message ? reply.error_message : strerror(-r));
                return r;
        }
        return collect_write(who, dir, name, reply.body, reply.body_len);
}

int collect_summary(const Config *c, const char *who, const char *sid, const char *dir)
{
        return collect_text(c, who, sid, dir, "/summary", "summary.md", true) == 0 ? 0 : 1;
}

int collect_reply(const Config *c, const char *who, const char *sid, const char *dir)
{
        return collect_text(c, who, sid, dir, "/agent-reply", GRADE_AGENT_REPLY_FILE, false);
}
