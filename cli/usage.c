/* SPDX-License-Identifier: MIT */
/*
 * `pome usage`: the team's open sandboxes against its quota (GET /v1/usage).
 * sessions_used counts sandboxes open now, not sandboxes started this month,
 * so it falls again as soon as one is finalized or stopped.
 */
#include "cli/api.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "common/json-util.h"
#include "common/util.h"

static const char help_usage[] =
        "Usage: pome usage [OPTIONS]\n"
        "\n"
        "Show how many sandboxes the team has open now against its quota (its\n"
        "concurrency slots). A sandbox takes one slot however many twins it holds,\n"
        "and gives it back when it is finalized, stopped, expires or fails.\n"
        "\n"
        "Options:\n"
        "  --format FMT           text (default) or json (pomed's answer).\n"
        "  --api-url URL          Control API base URL (default: $POME_API_URL, else\n"
        "                         control_url in <state dir>/pomed.json, else\n"
        "                         http://127.0.0.1:7070).\n"
        "  -h, --help             Show this help.\n";

enum {
        OPT_FORMAT = ARGS_FIRST_OPTION,
        OPT_API_URL,
};

/* Prints an integer member, or "?" when pomed left it out. */
static void print_count(const json_t *o, const char *key)
{
        const json_t *v = json_object_get(o, key);

        if (json_is_integer(v))
                printf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
        else
                fputs("?", stdout);
}

int cmd_usage(int argc, char **argv)
{
        static const ArgOption options[] = {
                {"format", OPT_FORMAT, true},
                {"api-url", OPT_API_URL, true},
        };
        _cleanup_(api_reply_done) ApiReply reply = {};
        _cleanup_(config_done) Config config = {};
        const char *api_url = NULL, *v;
        ArgsFormat format = ARGS_FORMAT_TEXT;
        ArgParser p;
        int r;

        args_init(&p, argc, argv, 1, options, ELEMENTSOF(options), "usage");
        while ((r = args_next(&p, &v)) != ARGS_END) {
                switch (r) {
                case ARGS_HELP:
                        fputs(help_usage, stdout);
                        return POME_EXIT_OK;
                case ARGS_POSITIONAL:
                        args_error("usage", "unexpected argument '%s'", v);
                        return POME_EXIT_USAGE;
                case OPT_FORMAT:
                        if (args_parse_format("usage", v, false, &format) < 0)
                                return POME_EXIT_USAGE;
                        break;
                case OPT_API_URL:
                        api_url = v;
                        break;
                default:
                        return POME_EXIT_USAGE;
                }
        }

        r = config_load(api_url, &config);
        if (r < 0)
                return api_exit_status(r, NULL);
        r = api_call(&config, "GET", "/v1/usage", NULL, &reply);
        if (r < 0)
                return api_exit_status(r, &reply);
        if (!reply.json) {
                fputs("pome: pomed answered GET /v1/usage with an empty body\n", stderr);
                return POME_EXIT_ERROR;
        }
        if (format == ARGS_FORMAT_JSON)
                return output_json(reply.json) < 0 ? POME_EXIT_ERROR : POME_EXIT_OK;

        fputs("Sandboxes open: ", stdout);
        print_count(reply.json, "sessions_used");
        fputs(" of ", stdout);
        print_count(reply.json, "sessions_quota");
        fputs(" (", stdout);
        print_count(reply.json, "sessions_remaining");
        fputs(" remaining) — team ", stdout);
        output_fputs_clean(json_get_str(reply.json, "team_id") ?: "?", stdout);
        fputs(", plan ", stdout);
        output_fputs_clean(json_get_str(reply.json, "plan_tier") ?: "?", stdout);
        putchar('\n');
        return POME_EXIT_OK;
}
