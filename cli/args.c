/* SPDX-License-Identifier: MIT */
#include "cli/args.h"

#include <stdarg.h>

#include "common/util.h"

void args_init(ArgParser *p, int argc, char **argv, int first, const ArgOption *options, size_t n,
               const char *command)
{
        *p = (ArgParser){
                .argc = argc,
                .argv = argv,
                .index = first,
                .options = options,
                .n_options = n,
                .command = command,
        };
}

int args_error(const char *command, const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "pome%s%s: ", *command ? " " : "", command);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, " (try 'pome %s%s--help')\n", command, *command ? " " : "");
        return -EINVAL;
}

int args_parse_format(const char *command, const char *value, bool allow_env, ArgsFormat *ret)
{
        if (streq(value, "text"))
                *ret = ARGS_FORMAT_TEXT;
        else if (streq(value, "json"))
                *ret = ARGS_FORMAT_JSON;
        else if (allow_env && streq(value, "env"))
                *ret = ARGS_FORMAT_ENV;
        else
                return args_error(command, "invalid --format '%s': expected %s", value,
                                  allow_env ? "text, json or env" : "text or json");
        return 0;
}

static const ArgOption *find_option(const ArgParser *p, const char *name, size_t len)
{
        for (size_t i = 0; i < p->n_options; i++)
                if (strlen(p->options[i].name) == len &&
                    strncmp(p->options[i].name, name, len) == 0)
                        return &p->options[i];
        return NULL;
}

int args_next(ArgParser *p, const char **ret_value)
{
        const ArgOption *o;
        const char *arg, *name, *eq;

        for (;;) {
                if (p->index >= p->argc)
                        return ARGS_END;
                arg = p->argv[p->index++];
                if (p->only_positionals || arg[0] != '-' || streq(arg, "-")) {
                        *ret_value = arg;
                        return ARGS_POSITIONAL;
                }
                if (!streq(arg, "--"))
                        break;
                p->only_positionals = true;
        }
        if (streq(arg, "-h") || streq(arg, "--help"))
                return ARGS_HELP;

        name = startswith(arg, "--");
        if (!name)
                return args_error(p->command, "unknown option '%s'", arg);

        eq = strchr(name, '=');
        o = find_option(p, name, eq ? (size_t)(eq - name) : strlen(name));
        if (!o) {
                if (eq)
                        return args_error(p->command, "unknown option '--%.*s'", (int)(eq - name),
                                          name);
                return args_error(p->command, "unknown option '%s'", arg);
        }

        if (!o->has_value) {
                if (eq)
                        return args_error(p->command, "option '--%s' takes no value", o->name);
                *ret_value = NULL;
                return o->id;
        }

        if (eq) {
                *ret_value = eq + 1;
                return o->id;
        }
        /* "--twin --format json" is almost always a forgotten value, not a twin named "--format".
         */
        if (p->index >= p->argc || startswith(p->argv[p->index], "--"))
                return args_error(p->command, "option '--%s' needs a value", o->name);
        *ret_value = p->argv[p->index++];
        return o->id;
}

int args_parse_uint(const char *s, unsigned long long min, unsigned long long max,
                    unsigned long long *ret)
{
        unsigned long long v;
        char *end;

        if (!s || !(*s >= '0' && *s <= '9'))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (*end != '\0')
                return -EINVAL;
        if (errno == ERANGE || v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}
