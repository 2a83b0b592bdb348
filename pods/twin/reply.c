/* SPDX-License-Identifier: MIT */
/* TwinReply ownership helpers shared by the engine and the kinds. */
#include <strings.h>
#include <time.h>

#include "common/json-util.h"
#include "common/timeutil.h"
#include "pods/twin/twin.h"

void twin_reply_done(TwinReply *rp)
{
        if (!rp)
                return;
        json_decref(rp->headers);
        json_decref(rp->body);
        free(rp->tool);
        json_decref(rp->state_delta);
        free(rp->error);
        json_decref(rp->request_body);
        json_decref(rp->events);
        *rp = (TwinReply){};
}

void twin_reply_json(TwinReply *rp, int status, json_t *body)
{
        rp->status = status;
        json_decref(rp->body);
        rp->body = body;
}

int twin_reply_body(TwinReply *rp, int status, json_t *body)
{
        if (!body)
                return -ENOMEM;
        twin_reply_json(rp, status, body);
        return 0;
}

/*
 * A copy of j for a state_delta: every object and array is new, every string and number
 * is shared (a reference). Nothing in the twins changes a scalar in place (no
 * json_string_set, json_integer_set or json_real_set anywhere), so a shared leaf cannot
 * change under the tape, and a row of large strings costs its structure again, not its
 * text: an issue holding 11 MB of comments took ~22 MB more for its delta's two deep copies,
 * and a title PATCH on it OOM-killed a pod under the default 64M limit. NULL on OOM.
 */
static json_t *delta_copy(const json_t *j)
{
        const char *k;
        size_t kl, i;
        json_t *v;
        if (json_is_object(j)) {
                json_t *o = json_object();
                json_object_keylen_foreach ((json_t *)j, k, kl, v)
                        if (!o || json_object_setn_new(o, k, kl, delta_copy(v)) < 0) {
                                json_decref(o);
                                return NULL;
                        }
                return o;
        }
        if (json_is_array(j)) {
                json_t *a = json_array();
                json_array_foreach ((json_t *)j, i, v)
                        if (!a || json_array_append_new(a, delta_copy(v)) < 0) {
                                json_decref(a);
                                return NULL;
                        }
                return a;
        }
        return json_incref((json_t *)j);
}

int twin_reply_header(TwinReply *rp, const char *name, json_t *value)
{
        if (!value || (!rp->headers && !(rp->headers = json_object()))) {
                json_decref(value);
                return -ENOMEM;
        }
        return json_object_set_new(rp->headers, name, value) < 0 ? -ENOMEM : 0;
}

int twin_reply_changes(TwinReply *rp, json_t *changes, const TwinRequest *rq)
{
        size_t n = json_array_size(changes);
        if (n == 0)
                return 0;
        json_t *last = json_array_get(changes, n - 1);
        const char *tool = json_get_str(last, "tool");
        free(rp->tool);
        rp->tool = tool ? strdup(tool) : NULL;
        if (tool && !rp->tool)
                return -ENOMEM;
        rp->state_mutation = true;
        json_decref(rp->state_delta);
        rp->state_delta = json_incref(json_object_get(last, "state_delta"));
        for (size_t i = 0; i + 1 < n; i++) {
                json_t *c = json_array_get(changes, i);
                if (!rp->events && !(rp->events = json_array()))
                        return -ENOMEM;
                if (json_object_set_new(c, "method", json_string(rq ? rq->method : "POST")) < 0 ||
                    json_object_set_new(c, "path", json_string(rq ? rq->path : "/")) < 0 ||
                    json_object_set_new(c, "by_caller", json_true()) < 0 ||
                    (rp->request_body &&
                     json_object_set(c, "request_body", rp->request_body) < 0) ||
                    json_array_append(rp->events, c) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int twin_call_part(const TwinCall *c, const TwinAction *a, json_t *args, json_t *changes,
                   TwinReply *rp)
{
        TwinCall part = *c;
        part.args = args;
        int r = a->fn(&part, rp);
        if (r < 0)
                return r;
        if (rp->state_mutation &&
            json_array_append_new(changes, json_pack("{s:s, s:i, s:O?, s:O?}", "tool", a->tool,
                                                     "status", rp->status, "response_body",
                                                     rp->body, "state_delta", rp->state_delta)) < 0)
                return -ENOMEM;
        return 0;
}

void twin_reply_delta(TwinReply *rp, const json_t *before, const json_t *after)
{
        json_decref(rp->state_delta);
        rp->state_delta =
                json_pack("{s:o, s:o}", "before", before ? delta_copy(before) : json_null(),
                          "after", after ? delta_copy(after) : json_null());
}

int twin_reply_mutation(TwinReply *rp, const json_t *before, const json_t *after)
{
        twin_reply_delta(rp, before, after);
        if (!rp->state_delta)
                return -ENOMEM;
        rp->state_mutation = true;
        return 0;
}

void twin_format_time(int64_t t, char *buf, size_t len)
{
        format_rfc3339(t, buf, len);
}

const char *twin_reply_text(const json_t *headers, const json_t *body)
{
        const char *key;
        json_t *v;
        if (!json_is_string(body))
                return NULL;
        json_object_foreach ((json_t *)headers, key, v) {
                const char *type = json_string_value(v);
                if (strcasecmp(key, "content-type") == 0 && type && !strstr(type, "json"))
                        return json_string_value(body);
        }
        return NULL;
}
