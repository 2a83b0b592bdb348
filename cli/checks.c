/* SPDX-License-Identifier: MIT */
/*
 * `pome checks`: the closed check vocabulary a task's `[code]` criteria bind to, read from
 * the grading library linked into pome (pods/grade), so it needs no pomed and shows exactly
 * what `pome eval` and `pome run --local` grade with. pomed serves the same list at
 * GET /v1/checks?twin=.
 */
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "common/json-util.h"
#include "common/util.h"
#include "pods/grade/grade.h"
#include "pods/twin/twin.h"

static const char help_checks[] =
        "Usage: pome checks [--twin TWIN] [--format text|json]\n"
        "\n"
        "List the checks a task's [code] criteria can use: one closed vocabulary per\n"
        "twin. A criterion binds to the check whose sentence template it matches,\n"
        "{slots} filled in and everything else literal (backticks and quotes\n"
        "included); a sentence that matches no template is graded `unmatched`.\n"
        "No pomed is needed: this is the vocabulary built into pome, the one\n"
        "`pome eval` and `pome run --local` grade with.\n"
        "\n"
        "For each check: its id, the substrate it reads (final: the twin's final\n"
        "state; seed+final: what changed since the seed; tape: the calls the twin\n"
        "served), its polarity (positive: something to do; negative: something not\n"
        "to do; per-argument: it depends on a slot, e.g. an issue state), its\n"
        "template and its parameters.\n"
        "\n"
        "Options:\n"
        "  --twin TWIN            Only this twin's checks (github, slack, stripe, gmail,\n"
        "                         linear).\n"
        "  --format FMT           text (default) or json.\n"
        "  -h, --help             Show this help.\n"
        "\n"
        "Examples:\n"
        "  pome checks --twin github\n"
        "  pome checks --twin slack --format json | jq -r '.checks[].id'\n";

enum {
        OPT_TWIN = ARGS_FIRST_OPTION,
        OPT_FORMAT,
};

/* "  {issue}  integer  the issue number" lines under a check. */
static void print_params(const json_t *params)
{
        size_t i;
        json_t *p;

        json_array_foreach (params, i, p) {
                fputs("      {", stdout);
                output_fputs_clean(json_get_str(p, "name"), stdout);
                fputs("}  ", stdout);
                output_fputs_clean(json_get_str(p, "type"), stdout);
                const json_t *values = json_object_get(p, "enum");
                if (json_array_size(values) > 0) {
                        size_t k;
                        json_t *v;
                        fputs(" (", stdout);
                        json_array_foreach (values, k, v) {
                                if (k > 0)
                                        fputs(" | ", stdout);
                                output_fputs_clean(json_string_value(v), stdout);
                        }
                        fputc(')', stdout);
                }
                if (json_get_str(p, "description")) {
                        fputs(": ", stdout);
                        output_fputs_clean(json_get_str(p, "description"), stdout);
                }
                fputc('\n', stdout);
        }
}

static int print_text(const json_t *list)
{
        const char *twin = NULL;
        size_t i;
        json_t *c;

        json_array_foreach (json_object_get(list, "checks"), i, c) {
                const char *t = json_get_str(c, "twin");
                if (!streq_ptr(t, twin)) {
                        if (twin)
                                putchar('\n');
                        twin = t;
                        output_fputs_clean(t, stdout);
                        puts(":");
                }
                fputs("  ", stdout);
                output_fputs_clean(json_get_str(c, "id"), stdout);
                fputs("  [", stdout);
                output_fputs_clean(json_get_str(c, "substrate"), stdout);
                fputs(", ", stdout);
                output_fputs_clean(json_get_str(c, "polarity"), stdout);
                puts("]");
                fputs("    ", stdout);
                output_fputs_clean(json_get_str(c, "template"), stdout);
                putchar('\n');
                print_params(json_object_get(c, "params"));
        }
        return 0;
}

int cmd_checks(int argc, char **argv)
{
        static const ArgOption options[] = {
                {"twin", OPT_TWIN, true},
                {"format", OPT_FORMAT, true},
        };
        _cleanup_json_ json_t *list = NULL;
        const char *twin = NULL, *v;
        ArgsFormat format = ARGS_FORMAT_TEXT;
        ArgParser p;
        int r;

        args_init(&p, argc, argv, 1, options, ELEMENTSOF(options), "checks");
        while ((r = args_next(&p, &v)) != ARGS_END) {
                switch (r) {
                case ARGS_HELP:
                        fputs(help_checks, stdout);
                        return POME_EXIT_OK;
                case ARGS_POSITIONAL:
                        args_error("checks", "unexpected argument '%s'", v);
                        return POME_EXIT_USAGE;
                case OPT_TWIN:
                        twin = v;
                        break;
                case OPT_FORMAT:
                        if (args_parse_format("checks", v, false, &format) < 0)
                                return POME_EXIT_USAGE;
                        break;
                default:
                        return POME_EXIT_USAGE;
                }
        }

        r = grade_checks_list(twin, &list);
        if (r == -ENOENT) {
                fprintf(stderr, "pome checks: no checks for twin '%s' (twins:", twin);
                for (const char *const *n = twin_kind_names(); *n; n++)
                        fprintf(stderr, " %s", *n);
                fputs(")\n", stderr);
                return POME_EXIT_USAGE;
        }
        if (r < 0) {
                fputs("pome: out of memory\n", stderr);
                return POME_EXIT_ERROR;
        }
        r = format == ARGS_FORMAT_JSON ? output_json(list) : print_text(list);
        return r < 0 ? POME_EXIT_ERROR : POME_EXIT_OK;
}
