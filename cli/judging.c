/* SPDX-License-Identifier: MIT */
#include "cli/judging.h"

#include <stdio.h>

#include "common/util.h"

const char judging_help[] =
        "  --judge SPEC           Judge the [model] criteria with a model: SPEC is\n"
        "                         openai:URL (an OpenAI-compatible chat completions API:\n"
        "                         OpenAI, vLLM, Ollama, llama.cpp's server, most gateways;\n"
        "                         URL is its base, e.g. http://127.0.0.1:8000/v1),\n"
        "                         anthropic:URL (the Messages API, e.g.\n"
        "                         https://api.anthropic.com), or command:CMD (a shell\n"
        "                         command: the question as JSON on its stdin, the answer\n"
        "                         {\"verdict\":\"pass\"|\"fail\",\"rationale\":…} on stdout).\n"
        "                         Asked at temperature 0; the answer, the model and the\n"
        "                         question's SHA-256 are recorded in verdict.json.\n"
        "  --judge-model MODEL    The model id to ask for (required for openai: and\n"
        "                         anthropic:; recorded for command:).\n"
        "  --judge-key-file FILE  A file whose first line is the API key.\n"
        "  --judge-timeout SEC    One attempt's limit (default 60); HTTP judges try 3\n"
        "                         times, with backoff, on 408, 429, 5xx and transport\n"
        "                         errors.\n"
        "  --code-only            Grade the [code] criteria only, on purpose: [model]\n"
        "                         criteria are skipped and the verdict says code_only.\n"
        "                         Without it, a [model] criterion no judge evaluated makes\n"
        "                         the run INCOMPLETE.\n";

bool judging_take(JudgeFlags *f, int id, const char *value)
{
        switch (id) {
        case OPT_JUDGE:
                f->spec = value;
                return true;
        case OPT_JUDGE_MODEL:
                f->model = value;
                return true;
        case OPT_JUDGE_KEY_FILE:
                f->key_file = value;
                return true;
        case OPT_JUDGE_TIMEOUT:
                f->timeout = value;
                return true;
        case OPT_CODE_ONLY:
                f->code_only = true;
                return true;
        default:
                return false;
        }
}

int judging_open(const JudgeFlags *f, const char *command, Judge **ret)
{
        char err[512] = "";
        *ret = NULL;
        if (!f->spec) {
                if (f->model || f->key_file || f->timeout) {
                        args_error(command, "--judge-model, --judge-key-file and --judge-timeout "
                                            "go with --judge");
                        return -EINVAL;
                }
                return 0;
        }
        unsigned long long timeout = 0;
        if (f->timeout && args_parse_uint(f->timeout, 1, 3600, &timeout) < 0) {
                args_error(command, "invalid --judge-timeout '%s': 1 to 3600 seconds", f->timeout);
                return -EINVAL;
        }
        if (f->code_only) {
                args_error(command, "--code-only leaves [model] criteria unjudged; it does not "
                                    "go with --judge");
                return -EINVAL;
        }
        JudgeConfig c = {};
        int r = judge_config_from_spec(f->spec, f->model, f->key_file, &c, err, sizeof(err));
        if (r == -EINVAL) {
                args_error(command, "%s", err);
                return r;
        }
        if (r < 0)
                return r;
        if (timeout)
                c.timeout_sec = (unsigned)timeout;
        r = judge_new(&c, ret, err, sizeof(err));
        judge_config_done(&c);
        if (r < 0 && r != -ENOMEM) {
                fprintf(stderr, "pome %s: %s\n", command, err);
                return -EINVAL;
        }
        return r;
}
