/* SPDX-License-Identifier: MIT */
/*
 * pome: the operator and agent CLI of a self-hosted Pome deployment. This file
 * parses the global options and dispatches to a command (cli/commands.h).
 */
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/config.h"
#include "common/util.h"

static const char help_main[] =
        "Usage: pome [--api-url URL] COMMAND [ARGS...]\n"
        "\n"
        "Start, list and stop sandboxes of digital twins on a self-hosted Pome\n"
        "deployment (pomed), run agents against tasks and grade them, and read the\n"
        "team's usage. With pomed on this host and its default state dir, no\n"
        "configuration is needed.\n"
        "\n"
        "Commands:\n"
        "  run TASK.md -- CMD   Run an agent against a task in a sandbox of its own and\n"
        "                       grade it (--trials N, --local: no pomed, --keep)\n"
        "  run show ID|DIR      Show a run: its record, verdict and summary\n"
        "  run collect ID [DIR] Complete the run directory of a sandbox finalized later\n"
        "                       (a --keep run): final states, tapes, verdict, summary\n"
        "  eval RUN_DIR         Regrade a saved run offline, byte for byte\n"
        "  checks               List the checks a task's [code] criteria can use\n"
        "  sandbox create       Start a sandbox with 1 to 3 twins and print its details\n"
        "  sandbox list         List sandboxes (default: the open ones)\n"
        "  sandbox get ID       Show one sandbox (--show-secrets: with its credentials)\n"
        "  sandbox finalize ID  End a sandbox, grade its task and keep its run\n"
        "  sandbox stop ID      Stop a sandbox (kill is an alias); an ungraded one\n"
        "                       needs --discard\n"
        "  sandbox env ID       Print a sandbox's variables again, secrets included\n"
        "  usage                Show open sandboxes against the team's quota\n"
        "  doctor               Check the pods' isolation layers on this host, the bus,\n"
        "                       the state directory and the listeners; say how to fix\n"
        "  twin start TWIN      Run one twin locally: no pomed, no account, no grading\n"
        "                       (pome run --local grades a task's twins in-process)\n"
        "  help [COMMAND...]    Show help for pome or for a command\n"
        "\n"
        "  `pome session ...` is a permanent alias of `pome sandbox ...`.\n"
        "\n"
        "Options:\n"
        "  --api-url URL        Control API base URL, for commands that do not give\n"
        "                       their own (default: $POME_API_URL, else control_url in\n"
        "                       the pomed.json of the state dir or of a pomed under\n"
        "                       systemd, else http://127.0.0.1:7070 — but never when\n"
        "                       the state dir holds an api-key and no pomed.json: its\n"
        "                       pomed is stopped, and pome says so and exits 1).\n"
        "  -h, --help           Show this help.\n"
        "  --version            Print pome's version.\n"
        "\n"
        "Environment:\n"
        "  POME_API_KEY         Team API key (default: the first line of\n"
        "                       <state dir>/api-key, which pomed writes on first start).\n"
        "  POME_API_URL         Control API base URL (see --api-url).\n"
        "  POME_STATE_DIR       pomed's state dir (default: the .pome directory of the\n"
        "                       working directory or of its nearest parent that has one,\n"
        "                       as git finds .git, searching no higher than $HOME's\n"
        "                       parent; else the one a pomed under systemd names in\n"
        "                       $XDG_RUNTIME_DIR/pome/pomed.json or /run/pome/pomed.json,\n"
        "                       else /var/lib/pome).\n"
        "\n"
        "Exit status:\n"
        "  0  success (pome run, eval: the verdict passed)\n"
        "  1  any other error (pomed unreachable, not found, expired, invalid request…);\n"
        "     pome run and eval: the verdict failed, or the run was not graded\n"
        "  2  usage error, or a task file that does not parse or whose [code]\n"
        "     criteria bind no check (named file:line); pome eval: a --keep run not\n"
        "     yet collected\n"
        "  3  authentication: no API key found, or HTTP 401/403\n"
        "  4  quota or rate limit: HTTP 402/429\n"
        "  5  refused: HTTP 409, e.g. stopping a sandbox that has not been graded\n"
        "  130  pome run interrupted (SIGINT, SIGTERM): agents killed, sandboxes discarded\n"
        "\n"
        "Run 'pome COMMAND --help' for a command's options.\n";

typedef struct Command {
        const char *name;
        int (*run)(int argc, char **argv);
} Command;

static const Command commands[] = {
        {"sandbox", cmd_sandbox}, /* cli/sandbox.c */
        {"session", cmd_sandbox}, /* permanent alias */
        {"usage", cmd_usage},     /* cli/usage.c */
        {"twin", cmd_twin},       /* cli/twin.c */
        {"doctor", cmd_doctor},   /* cli/doctor.c */
        {"checks", cmd_checks},   /* cli/checks.c */
        {"eval", cmd_eval},       /* cli/eval.c */
        {"run", cmd_run},         /* cli/run.c */
};

static int dispatch(int argc, char **argv)
{
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (streq(argv[0], commands[i].name))
                        return commands[i].run(argc, argv);
        fprintf(stderr, "pome: unknown command '%s' (try 'pome --help')\n", argv[0]);
        return POME_EXIT_USAGE;
}

/* `pome help A B` is `pome A B --help`. */
static int help(int argc, char **argv)
{
        _cleanup_free_ char **again = NULL;

        if (argc == 1 || argv[1][0] == '-' || streq(argv[1], "help")) {
                fputs(help_main, stdout);
                return POME_EXIT_OK;
        }
        again = calloc((size_t)argc + 1, sizeof(char *));
        if (!again) {
                fputs("pome: out of memory\n", stderr);
                return POME_EXIT_ERROR;
        }
        for (int i = 1; i < argc; i++)
                again[i - 1] = argv[i];
        again[argc - 1] = (char *)"--help";
        return dispatch(argc, again);
}

enum {
        OPT_API_URL = ARGS_FIRST_OPTION,
        OPT_VERSION,
};

int main(int argc, char **argv)
{
        static const ArgOption options[] = {
                {"api-url", OPT_API_URL, true},
                {"version", OPT_VERSION, false},
        };
        ArgParser p;
        const char *v;
        int r, command = -1;

        args_init(&p, argc, argv, 1, options, ELEMENTSOF(options), "");
        while (command < 0 && (r = args_next(&p, &v)) != ARGS_END) {
                switch (r) {
                case ARGS_HELP:
                        fputs(help_main, stdout);
                        return POME_EXIT_OK;
                case OPT_VERSION:
                        printf("pome %s\n", POME_VERSION);
                        return POME_EXIT_OK;
                case OPT_API_URL:
                        config_set_global_api_url(v);
                        break;
                case ARGS_POSITIONAL:
                        command = p.index - 1;
                        break;
                default:
                        return POME_EXIT_USAGE;
                }
        }
        if (command < 0) {
                fputs(help_main, stderr);
                return POME_EXIT_USAGE;
        }

        if (streq(argv[command], "help"))
                r = help(argc - command, argv + command);
        else
                r = dispatch(argc - command, argv + command);

        /* A full disk or a closed pipe must not look like success. */
        if (fflush(stdout) != 0 || ferror(stdout)) {
                if (r == POME_EXIT_OK)
                        fprintf(stderr, "pome: cannot write output: %m\n");
                return r == POME_EXIT_OK ? POME_EXIT_ERROR : r;
        }
        return r;
}
