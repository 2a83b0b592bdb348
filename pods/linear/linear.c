/* SPDX-License-Identifier: MIT */
/*
 * The Linear twin (kind "linear"): the Linear API v1 (https://developers.google.com/linear/api/
 * reference/rest) over GraphQL at /graphql (linear.app/developers/graphql), as @linear/sdk calls
 * it. SKELETON: being filled in (issue 28).
 */
#include <errno.h>

#include "pods/twin/kind.h"

static const char *const seed_keys[] = {NULL};

static int linear_load_seed(const json_t *seed, json_t **ret_world, char *err, size_t errlen)
{
        (void)seed;
        (void)err;
        (void)errlen;
        *ret_world = json_pack("{s:[]}", "messages");
        return *ret_world ? 0 : -ENOMEM;
}

static json_t *linear_public_state(const json_t *world)
{
        return json_deep_copy(world);
}

/* Google's error envelope: {error: {code, message, errors: [{message, domain, reason}],
 * status}} (cloud.google.com/apis/design/errors). */
static void linear_error(int status, const char *code, const char *message, TwinReply *rp)
{
        twin_reply_json(rp, status,
                        json_pack("{s:{s:i, s:s, s:[{s:s, s:s, s:s}], s:s}}", "error", "code",
                                  status, "message", message, "errors", "message", message,
                                  "domain", "global", "reason", code, "status",
                                  status == 404 ? "NOT_FOUND" : "INVALID_ARGUMENT"));
}

static void linear_auth_error(TwinAuthFailure why, TwinReply *rp)
{
        (void)why;
        linear_error(401, "authError", "Request had invalid authentication credentials.", rp);
}

static void linear_control_error(TwinControlError what, const char *detail, TwinReply *rp)
{
        (void)what;
        linear_error(400, "invalidArgument", detail ? detail : "Invalid argument.", rp);
}

static int linear_get_profile(TwinCall *c, TwinReply *rp)
{
        (void)c;
        return twin_reply_body(rp, 200,
                               json_pack("{s:s}", "emailAddress", "pome-agent@pome-twin.test"));
}

static const TwinHandler linear_handlers[] = {
        {"get_profile", linear_get_profile},
};

const TwinKind twin_kind_linear = {
        .name = "linear",
        .implementation = "pome-linear",
        .flags = TWIN_KIND_JSON_BODY,
        .surface = &twin_surface_linear,
        .handlers = linear_handlers,
        .n_handlers = ELEMENTSOF(linear_handlers),
        .vendor_hosts = (const char *const[]){"linear.googleapis.com", NULL},
        .load_seed = linear_load_seed,
        .seed_keys = seed_keys,
        .public_state = linear_public_state,
        .auth_error = linear_auth_error,
        .error = linear_error,
        .control_error = linear_control_error,
};
