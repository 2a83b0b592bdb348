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

void twin_reply_delta(TwinReply *rp, const json_t *before, const json_t *after)
{
        json_decref(rp->state_delta);
        /* json_deep_copy takes a const pointer in jansson >= 2.13 */
        rp->state_delta =
                json_pack("{s:o, s:o}", "before", before ? json_deep_copy(before) : json_null(),
                          "after", after ? json_deep_copy(after) : json_null());
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
