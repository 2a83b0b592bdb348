/* SPDX-License-Identifier: MIT */
/*
 * What a twin kind implementation (pods/github, pods/slack, ...) uses besides twin.h:
 * the kinds the engine knows, and readers for action arguments. Arguments come from
 * REST (path, query and form values are strings) or from MCP (typed JSON), so every
 * reader accepts both spellings of a value.
 */
#pragma once

#include "common/util.h"
#include "pods/twin/twin.h"

extern const TwinKind twin_kind_github;
extern const TwinKind twin_kind_slack;
extern const TwinKind twin_kind_stripe;
extern const TwinKind twin_kind_gmail;
extern const TwinKind twin_kind_linear;

/* Each kind's pods/<kind>/surface.json, embedded at build time (pods/CMakeLists.txt). */
extern const TwinSurfaceText twin_surface_github;
extern const TwinSurfaceText twin_surface_slack;
extern const TwinSurfaceText twin_surface_stripe;
extern const TwinSurfaceText twin_surface_gmail;
extern const TwinSurfaceText twin_surface_linear;

/*
 * Readers of args[key]. All return 0 and write *ret; -ENOENT when the key is absent
 * or JSON null; -EINVAL when present with a wrong type, format or range. Borrowed results.
 */

/* A string. */
int twin_arg_str(const json_t *args, const char *key, const char **ret);

/*
 * An integer in [min, max]: a JSON integer, an integral JSON real, or a decimal string
 * ("1", "-3"; no sign-less junk, no overflow). Used for issue_number "1" and 1 alike.
 */
int twin_arg_int(const json_t *args, const char *key, int64_t min, int64_t max, int64_t *ret);

/* A boolean: JSON true/false, or the strings "true"/"false"/"1"/"0". */
int twin_arg_bool(const json_t *args, const char *key, bool *ret);

/*
 * A list of strings: a JSON array of strings, or one comma-separated string ("bug,ui";
 * items are trimmed, empty ones dropped). *ret is a new array reference.
 */
int twin_arg_strv(const json_t *args, const char *key, json_t **ret);

/* Standard base64 with padding (RFC 4648 §4) of n bytes into a new string; NULL on OOM. */
char *twin_base64(const void *data, size_t n);

/*
 * Decodes standard padded base64 into a new NUL-terminated string. Returns 0, -EINVAL for
 * bad input, -ENOMEM.
 */
int twin_base64_decode(const char *s, char **ret);

/*
 * A JSON string of n bytes where invalid UTF-8 (which jansson refuses) is replaced by
 * U+FFFD, so no request byte sequence can make a value unrepresentable. NULL on OOM.
 */
json_t *twin_json_string_lossy(const char *s, size_t n);

/* ----- seed validation, for load_seed (seed.c) ----- */

/*
 * For load_seed: writes a printf-style message into err (errlen bytes, may be 0) and
 * returns -EINVAL.
 */
int twin_seed_error(char *err, size_t errlen, const char *fmt, ...) _printf_(3, 4);

/*
 * A seed being loaded: the world load_seed builds (borrowed, the kind's own) and where a
 * refusal's message goes (err, errlen bytes, may be 0), as load_seed received them.
 */
typedef struct TwinSeed {
        json_t *world;
        char *err;
        size_t errlen;
} TwinSeed;

/* What a JSON null member means to twin_seed_str. */
typedef enum TwinSeedNull {
        TWIN_NULL_REFUSED, /* an error: "must be a string" */
        TWIN_NULL_KEPT,    /* an explicit null: *ret = NULL ("must be a string or null") */
        TWIN_NULL_ABSENT,  /* as if the member were absent: *ret = def */
} TwinSeedNull;

/*
 * Readers of the optional member key of the seed entry o (borrowed; NULL reads as an entry
 * without members) found at path ("repositories[0]", or "" for the seed itself). Each
 * returns 0 and writes *ret (borrowed from o, or the default), or -EINVAL with
 * "<path>.<key>: must be ..." in s->err (s->errlen bytes). They never touch s->world.
 */

/* A string; absent gives def, JSON null what nulls says. */
int twin_seed_str(TwinSeed *s, const json_t *o, const char *key, const char *path, const char *def,
                  TwinSeedNull nulls, const char **ret);

/* true or false (JSON null is refused); absent gives def. */
int twin_seed_bool(TwinSeed *s, const json_t *o, const char *key, const char *path, bool def,
                   bool *ret);

/* An array; absent or JSON null gives NULL. With path "" the message names key alone. */
int twin_seed_array(TwinSeed *s, const json_t *o, const char *key, const char *path, json_t **ret);

/*
 * Refuses a member of the seed entry o (borrowed) at path that is not one of the n names in
 * keys, so nothing a seed says is silently dropped: -EINVAL with "<path>.<key>: unknown key
 * (a <what> has <keys, in order>)" in s->err — or, with path "" (the seed itself),
 * "unknown key \"<key>\" (a <what> has ...)". 0 when every member is known.
 */
int twin_seed_known(TwinSeed *s, const json_t *o, const char *path, const char *what,
                    const char *const *keys, size_t n);

/*
 * The seed's failure_injection[{method ("POST"), path, attempt (1), mode ("after_handler"),
 * status (500), body?}] (hosted Pome's rule shape, packages/sdk/src/failure-injection-rules.ts,
 * mode defaulting as there), each rule with its defaults filled in, appended to rules (the
 * world's array, borrowed). With slash_path a path must start with '/'; path_example is what
 * the refusal of a missing one suggests ("\"/v1/payment_intents\""). The Stripe twin's shape,
 * which the Gmail twin takes too. 0, -EINVAL with the message in s->err, -ENOMEM.
 */
int twin_seed_failure_injection(TwinSeed *s, const json_t *seed, json_t *rules, bool slash_path,
                                const char *path_example);

/* twin_seed_known with the keys written in place: TWIN_SEED_KNOWN(s, o, path, what, "a", "b"). */
#define TWIN_SEED_KNOWN(s, o, path, what, ...)                                             \
        ({                                                                                 \
                static const char *const _twin_seed_k[] = {__VA_ARGS__};                   \
                twin_seed_known(s, o, path, what, _twin_seed_k, ELEMENTSOF(_twin_seed_k)); \
        })
