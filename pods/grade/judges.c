/* SPDX-License-Identifier: MIT */
/*
 * The judges of [model] criteria (judges.h): an HTTP chat API and a command.
 */
#include "pods/grade/judges.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>

#include "common/fileio.h"
#include "common/httpclient.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "common/timeutil.h"
#include "common/util.h"

#define KEY_FILE_MAX      4096u
#define BACKOFF_FIRST_SEC 1u
#define BACKOFF_MAX_SEC   10u
#define RETRY_AFTER_MAX   30u
#define STDERR_SHOWN      300u /* bytes of a command judge's stderr in an error */

struct Judge {
        GradeJudge gj;
        JudgeConfig cfg;
        char *key; /* NULL: none */
};

extern char **environ;

const char *judge_api_to_string(JudgeApi a)
{
        switch (a) {
        case JUDGE_API_OPENAI:
                return "openai";
        case JUDGE_API_ANTHROPIC:
                return "anthropic";
        case JUDGE_API_COMMAND:
                return "command";
        }
        return "?";
}

void judge_config_done(JudgeConfig *c)
{
        free(c->url);
        free(c->model);
        free(c->key_file);
        free(c->command);
        *c = (JudgeConfig){};
}

static int config_check(JudgeConfig *c, char *err, size_t errlen)
{
        if (c->api == JUDGE_API_COMMAND) {
                if (!c->command || !*c->command) {
                        snprintf(err, errlen, "a command judge needs its command");
                        return -EINVAL;
                }
                return 0;
        }
        if (!c->url || !(startswith(c->url, "http://") || startswith(c->url, "https://"))) {
                snprintf(err, errlen, "the %s judge needs url: an http:// or https:// base URL",
                         judge_api_to_string(c->api));
                return -EINVAL;
        }
        if (!c->model || !*c->model) {
                snprintf(err, errlen, "the %s judge needs model: the model id its API is asked for",
                         judge_api_to_string(c->api));
                return -EINVAL;
        }
        /* "http://host/v1/" and "http://host/v1" are one base */
        size_t n = strlen(c->url);
        while (n > 0 && c->url[n - 1] == '/')
                c->url[--n] = 0;
        return 0;
}

static void config_defaults(JudgeConfig *c)
{
        *c = (JudgeConfig){.timeout_sec = JUDGE_TIMEOUT_DEFAULT_SEC,
                           .attempts = JUDGE_ATTEMPTS_DEFAULT,
                           .max_tokens = JUDGE_MAX_TOKENS_DEFAULT};
}

static int parse_api(const char *s, size_t n, JudgeApi *ret)
{
        static const JudgeApi all[] = {JUDGE_API_OPENAI, JUDGE_API_ANTHROPIC, JUDGE_API_COMMAND};
        for (size_t i = 0; i < ELEMENTSOF(all); i++) {
                const char *name = judge_api_to_string(all[i]);
                if (strlen(name) == n && strncmp(s, name, n) == 0) {
                        *ret = all[i];
                        return 0;
                }
        }
        return -EINVAL;
}

int judge_config_from_json(const json_t *j, JudgeConfig *ret, char *err, size_t errlen)
{
        JudgeConfig c;
        config_defaults(&c);
        if (!json_is_object(j)) {
                snprintf(err, errlen, "judge must be a mapping (api, url, model, key_file…)");
                return -EINVAL;
        }
        const char *key;
        json_t *v;
        int r = 0;
        json_object_foreach ((json_t *)j, key, v) {
                char **str = streq(key, "url")        ? &c.url
                             : streq(key, "model")    ? &c.model
                             : streq(key, "key_file") ? &c.key_file
                             : streq(key, "command")  ? &c.command
                                                      : NULL;
                unsigned *num = streq(key, "timeout")      ? &c.timeout_sec
                                : streq(key, "attempts")   ? &c.attempts
                                : streq(key, "max_tokens") ? &c.max_tokens
                                                           : NULL;
                if (streq(key, "api")) {
                        const char *a = json_string_value(v);
                        if (!a || parse_api(a, strlen(a), &c.api) < 0) {
                                snprintf(err, errlen,
                                         "judge.api must be openai, anthropic or command");
                                r = -EINVAL;
                        }
                } else if (str) {
                        if (!json_is_string(v)) {
                                snprintf(err, errlen, "judge.%s must be a string", key);
                                r = -EINVAL;
                        } else if (!(*str = strdup(json_string_value(v))))
                                r = -ENOMEM;
                } else if (num) {
                        json_int_t max = streq(key, "attempts")  ? 10
                                         : streq(key, "timeout") ? 3600
                                                                 : 65536;
                        if (!json_is_integer(v) || json_integer_value(v) < 1 ||
                            json_integer_value(v) > max) {
                                snprintf(err, errlen,
                                         "judge.%s must be an integer from 1 to "
                                         "%" JSON_INTEGER_FORMAT,
                                         key, max);
                                r = -EINVAL;
                        } else
                                *num = (unsigned)json_integer_value(v);
                } else {
                        snprintf(err, errlen,
                                 "judge.%s is not a judge setting (api, url, model, key_file, "
                                 "command, timeout, attempts, max_tokens)",
                                 key);
                        r = -EINVAL;
                }
                if (r < 0)
                        break;
        }
        if (r >= 0 && !json_object_get(j, "api")) {
                snprintf(err, errlen, "judge.api is missing: openai, anthropic or command");
                r = -EINVAL;
        }
        if (r >= 0)
                r = config_check(&c, err, errlen);
        if (r < 0) {
                judge_config_done(&c);
                return r;
        }
        *ret = c;
        return 0;
}

int judge_config_from_spec(const char *spec, const char *model, const char *key_file,
                           JudgeConfig *ret, char *err, size_t errlen)
{
        JudgeConfig c;
        config_defaults(&c);
        const char *colon = strchr(spec, ':');
        if (!colon || parse_api(spec, (size_t)(colon - spec), &c.api) < 0) {
                snprintf(err, errlen,
                         "--judge takes openai:URL, anthropic:URL or command:COMMAND, not "
                         "\"%s\"",
                         spec);
                return -EINVAL;
        }
        char **where = c.api == JUDGE_API_COMMAND ? &c.command : &c.url;
        int r = 0;
        if (!(*where = strdup(colon + 1)) || (model && !(c.model = strdup(model))) ||
            (key_file && !(c.key_file = strdup(key_file))))
                r = -ENOMEM;
        if (r >= 0)
                r = config_check(&c, err, errlen);
        if (r == -EINVAL && c.api != JUDGE_API_COMMAND && c.url && !model)
                snprintf(err, errlen, "--judge %s:URL needs --judge-model MODEL",
                         judge_api_to_string(c.api));
        if (r < 0) {
                judge_config_done(&c);
                return r;
        }
        *ret = c;
        return 0;
}

char *judge_config_describe(const JudgeConfig *c)
{
        char *s;
        if (c->api == JUDGE_API_COMMAND)
                return asprintf(&s, "command %s%s%s", c->command, c->model ? ", model " : "",
                                c->model ? c->model : "") < 0
                               ? NULL
                               : s;
        return asprintf(&s, "%s %s at %s", judge_api_to_string(c->api), c->model, c->url) < 0 ? NULL
                                                                                              : s;
}

/* ---------------------------------------------------------------- HTTP */

/* The question as the API's request body. New string, NULL on OOM. */
static char *http_body(const Judge *j, const GradeJudgeQuestion *q)
{
        _cleanup_json_ json_t *body = NULL;
        if (j->cfg.api == JUDGE_API_OPENAI)
                body = json_pack("{s:s, s:i, s:i, s:[{s:s, s:s}, {s:s, s:s}]}", "model",
                                 j->cfg.model, "temperature", 0, "max_tokens",
                                 (int)j->cfg.max_tokens, "messages", "role", "system", "content",
                                 q->instructions, "role", "user", "content", q->question);
        else
                body = json_pack("{s:s, s:i, s:i, s:s, s:[{s:s, s:s}]}", "model", j->cfg.model,
                                 "temperature", 0, "max_tokens", (int)j->cfg.max_tokens, "system",
                                 q->instructions, "messages", "role", "user", "content",
                                 q->question);
        return body ? json_dumps(body, JSON_COMPACT) : NULL;
}

/* The answer's text in the API's response body: choices[0].message.content (OpenAI), the
 * first text block of content (Anthropic). Borrowed from doc, or NULL. */
static const char *http_answer_text(JudgeApi api, const json_t *doc)
{
        if (api == JUDGE_API_OPENAI)
                return json_get_str(
                        json_object_get(json_array_get(json_object_get(doc, "choices"), 0),
                                        "message"),
                        "content");
        size_t i;
        json_t *block;
        json_array_foreach (json_object_get(doc, "content"), i, block)
                if (streq_ptr(json_get_str(block, "type"), "text"))
                        return json_get_str(block, "text");
        return NULL;
}

/* The error an API's body states (both APIs: {error: {message}}), else its first bytes. */
static void http_error_text(const ClientResponse *rs, char *buf, size_t len)
{
        _cleanup_json_ json_t *doc = json_loadb(rs->body, rs->body_len, 0, NULL);
        const char *m = json_get_str(json_object_get(doc, "error"), "message");
        if (!m)
                m = json_get_str(doc, "error");
        if (m)
                snprintf(buf, len, "%.200s", m);
        else
                snprintf(buf, len, "%.120s", rs->body);
        for (char *c = buf; *c; c++)
                if ((unsigned char)*c < 0x20)
                        *c = ' ';
}

static bool transient_status(long status)
{
        return status == 408 || status == 429 || (status >= 500 && status <= 599);
}

static bool transient_errno(int r)
{
        return r == -ECONNREFUSED || r == -ECONNRESET || r == -ETIMEDOUT || r == -EHOSTUNREACH;
}

static void sleep_sec(unsigned sec)
{
        struct timespec ts = {.tv_sec = sec};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static int http_ask(void *userdata, const GradeJudgeQuestion *q, char **ret_answer, char *err,
                    size_t errlen)
{
        const Judge *j = userdata;
        _cleanup_free_ char *body = http_body(j, q), *url = NULL, *auth = NULL;
        if (!body)
                return -ENOMEM;
        const char *path = j->cfg.api == JUDGE_API_OPENAI ? "/chat/completions"
                           : endswith(j->cfg.url, "/v1")  ? "/messages"
                                                          : "/v1/messages";
        if (asprintf(&url, "%s%s", j->cfg.url, path) < 0)
                return -ENOMEM;
        const char *headers[4] = {};
        size_t nh = 0;
        if (j->cfg.api == JUDGE_API_ANTHROPIC) {
                headers[nh++] = "anthropic-version: 2023-06-01";
                if (j->key) {
                        if (asprintf(&auth, "x-api-key: %s", j->key) < 0)
                                return -ENOMEM;
                        headers[nh++] = auth;
                }
        }
        ClientOptions o = {.bearer = j->cfg.api == JUDGE_API_OPENAI ? j->key : NULL,
                           .headers = headers,
                           .timeout_sec = (long)j->cfg.timeout_sec};
        unsigned backoff = BACKOFF_FIRST_SEC;
        char last[1024] = "";
        int r = -EPROTO;
        for (unsigned attempt = 1; attempt <= j->cfg.attempts; attempt++) {
                _cleanup_(client_response_done) ClientResponse rs = {};
                ClientError ce = {};
                unsigned wait = backoff;
                r = client_request_with("POST", url, &o, body, &rs, &ce);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        snprintf(last, sizeof(last), "could not be reached at %.300s: %.400s", url,
                                 ce.message);
                        if (!transient_errno(r))
                                break;
                } else if (rs.status != 200) {
                        char why[256];
                        http_error_text(&rs, why, sizeof(why));
                        snprintf(last, sizeof(last), "answered HTTP %ld at %.300s: %s", rs.status,
                                 url, why);
                        r = -EPROTO;
                        _cleanup_free_ char *ra = client_header_value(rs.headers, "Retry-After");
                        unsigned sec;
                        if (ra && sscanf(ra, "%u", &sec) == 1)
                                wait = sec < RETRY_AFTER_MAX ? sec : RETRY_AFTER_MAX;
                        if (!transient_status(rs.status))
                                break;
                } else {
                        _cleanup_json_ json_t *doc = json_loadb(rs.body, rs.body_len, 0, NULL);
                        const char *text = http_answer_text(j->cfg.api, doc);
                        if (!text) {
                                snprintf(err, errlen,
                                         "answered with no text at %s (not a %s response): "
                                         "\"%.120s\"",
                                         url,
                                         j->cfg.api == JUDGE_API_OPENAI ? "chat completions"
                                                                        : "Messages API",
                                         rs.body);
                                return -EBADMSG;
                        }
                        char *a = strdup(text);
                        if (!a)
                                return -ENOMEM;
                        *ret_answer = a;
                        return 0;
                }
                if (attempt < j->cfg.attempts) {
                        sleep_sec(wait);
                        backoff = backoff * 2 < BACKOFF_MAX_SEC ? backoff * 2 : BACKOFF_MAX_SEC;
                }
        }
        snprintf(err, errlen, "%.700s (after %u attempt%s)", last, j->cfg.attempts,
                 j->cfg.attempts == 1 ? "" : "s");
        return r < 0 ? r : -EPROTO;
}

/* ---------------------------------------------------------------- command */

/* A bounded capture of what a child writes. */
typedef struct Capture {
        char *data;
        size_t len, max;
        bool cut;
} Capture;

static int capture_read(int fd, Capture *c, bool keep_tail)
{
        char buf[4096];
        ssize_t k = read(fd, buf, sizeof(buf));
        if (k < 0)
                return errno == EINTR || errno == EAGAIN ? 1 : -errno;
        if (k == 0)
                return 0;
        size_t n = (size_t)k;
        if (c->len + n > c->max) {
                c->cut = true;
                if (!keep_tail)
                        n = c->max - c->len;
                else {
                        /* keep the last max bytes: what an error ends with */
                        size_t drop = c->len + n - c->max;
                        if (drop > c->len)
                                drop = c->len;
                        memmove(c->data, c->data + drop, c->len - drop);
                        c->len -= drop;
                        if (n > c->max)
                                memmove(buf, buf + n - c->max, c->max), n = c->max;
                }
        }
        char *p = realloc(c->data, c->len + n + 1);
        if (!p)
                return -ENOMEM;
        c->data = p;
        memcpy(c->data + c->len, buf, n);
        c->len += n;
        c->data[c->len] = 0;
        return 1;
}

static int command_ask(void *userdata, const GradeJudgeQuestion *q, char **ret_answer, char *err,
                       size_t errlen)
{
        const Judge *j = userdata;
        _cleanup_json_ json_t *rq =
                json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i}", "instructions", q->instructions,
                          "question", q->question, "criterion", q->criterion, "task_prompt",
                          q->task_prompt, "prompt_sha256", q->prompt_sha256, "model",
                          j->cfg.model ? j->cfg.model : "", "temperature", 0);
        _cleanup_free_ char *input = rq ? json_dumps(rq, JSON_COMPACT) : NULL;
        if (!input)
                return -ENOMEM;
        int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1};
        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0) {
                int e = -errno;
                int *all[] = {in, out};
                for (size_t i = 0; i < ELEMENTSOF(all); i++) {
                        safe_close(all[i][0]);
                        safe_close(all[i][1]);
                }
                snprintf(err, errlen, "cannot start: %s", strerror(-e));
                return e;
        }
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none, all_default;
        sigemptyset(&none);
        sigfillset(&all_default);
        sigdelset(&all_default, SIGKILL);
        sigdelset(&all_default, SIGSTOP);
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, in[0], 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_adddup2(&fa, er[1], 2);
        posix_spawnattr_init(&attr);
        /* a clean child: pome and pomed block signals for their loops, and a blocked mask
         * survives exec; a session of its own so a timeout kills all it started */
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all_default);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                                POSIX_SPAWN_SETSID);
        char *argv[] = {(char *)"sh", (char *)"-c", j->cfg.command, NULL};
        pid_t pid;
        int r = -posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        safe_close(in[0]);
        safe_close(out[1]);
        safe_close(er[1]);
        if (r < 0) {
                safe_close(in[1]);
                safe_close(out[0]);
                safe_close(er[0]);
                snprintf(err, errlen, "cannot start /bin/sh: %s", strerror(-r));
                return r;
        }
        /* SIGPIPE when the command does not read its stdin: an error, not our death */
        struct sigaction ign = {.sa_handler = SIG_IGN}, old;
        sigaction(SIGPIPE, &ign, &old);
        (void)fcntl(in[1], F_SETFL, O_NONBLOCK);
        Capture o = {.max = JUDGE_ANSWER_MAX}, e = {.max = STDERR_SHOWN};
        size_t sent = 0, input_len = strlen(input);
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + (uint64_t)j->cfg.timeout_sec * USEC_PER_SEC;
        bool timed_out = false;
        r = 0;
        while (out[0] >= 0 || er[0] >= 0) {
                struct pollfd p[3] = {{.fd = out[0], .events = POLLIN},
                                      {.fd = er[0], .events = POLLIN},
                                      {.fd = in[1], .events = POLLOUT}};
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline) {
                        timed_out = true;
                        break;
                }
                int k = poll(p, 3, (int)((deadline - now + 999) / 1000));
                if (k < 0 && errno != EINTR) {
                        r = -errno;
                        break;
                }
                if (p[2].revents) {
                        ssize_t w = write(in[1], input + sent, input_len - sent);
                        if (w > 0)
                                sent += (size_t)w;
                        if ((w < 0 && errno != EAGAIN && errno != EINTR) || sent == input_len)
                                in[1] = safe_close(in[1]);
                }
                for (int i = 0; i < 2; i++) {
                        if (!p[i].revents)
                                continue;
                        int *fd = i == 0 ? &out[0] : &er[0];
                        int c = capture_read(*fd, i == 0 ? &o : &e, i == 1);
                        if (c == -ENOMEM) {
                                r = c;
                                break;
                        }
                        if (c <= 0)
                                *fd = safe_close(*fd);
                }
                if (r < 0)
                        break;
        }
        sigaction(SIGPIPE, &old, NULL);
        safe_close(in[1]);
        safe_close(out[0]);
        safe_close(er[0]);
        if (timed_out || r < 0)
                (void)kill(-pid, SIGKILL);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        /* whatever it left behind in its session goes with it */
        (void)kill(-pid, SIGKILL);
        _cleanup_free_ char *answer = o.data, *errtext = e.data;
        if (r == -ENOMEM)
                return r;
        for (char *c = errtext; c && *c; c++)
                if ((unsigned char)*c < 0x20)
                        *c = ' ';
        if (timed_out) {
                snprintf(err, errlen, "(%s) gave no answer within %u s and was killed",
                         j->cfg.command, j->cfg.timeout_sec);
                return -ETIMEDOUT;
        }
        if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                if (WIFSIGNALED(status))
                        snprintf(err, errlen, "(%s) was killed by signal %d%s%s", j->cfg.command,
                                 WTERMSIG(status), errtext ? ": " : "", strempty(errtext));
                else
                        snprintf(err, errlen, "(%s) exited with status %d%s%s", j->cfg.command,
                                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, errtext ? ": " : "",
                                 strempty(errtext));
                return r < 0 ? r : -EPROTO;
        }
        if (o.cut) {
                snprintf(err, errlen, "(%s) answered more than %u bytes", j->cfg.command,
                         JUDGE_ANSWER_MAX);
                return -EFBIG;
        }
        *ret_answer = answer ? TAKE_PTR(answer) : strdup("");
        return *ret_answer ? 0 : -ENOMEM;
}

/* ---------------------------------------------------------------- the judge */

static int copy_config(const JudgeConfig *c, JudgeConfig *d)
{
        *d = *c;
        d->url = d->model = d->key_file = d->command = NULL;
        if ((c->url && !(d->url = strdup(c->url))) ||
            (c->model && !(d->model = strdup(c->model))) ||
            (c->key_file && !(d->key_file = strdup(c->key_file))) ||
            (c->command && !(d->command = strdup(c->command)))) {
                judge_config_done(d);
                return -ENOMEM;
        }
        return 0;
}

int judge_new(const JudgeConfig *c, Judge **ret, char *err, size_t errlen)
{
        Judge *j = calloc(1, sizeof(*j));
        if (!j || copy_config(c, &j->cfg) < 0) {
                free(j);
                return -ENOMEM;
        }
        if (c->key_file) {
                _cleanup_free_ char *text = NULL;
                int r = read_file_at(AT_FDCWD, c->key_file, KEY_FILE_MAX, &text, NULL);
                if (r >= 0) {
                        text[strcspn(text, "\r\n")] = 0;
                        if (!*text)
                                r = -EINVAL;
                }
                if (r < 0) {
                        snprintf(err, errlen, "the judge's key file %s: %s", c->key_file,
                                 r == -EINVAL  ? "empty (the key is its first line)"
                                 : r == -EFBIG ? "larger than 4 KiB"
                                               : strerror(-r));
                        if (text)
                                explicit_bzero(text, strlen(text));
                        judge_free(j);
                        return r == -ENOMEM ? r : r == -EFBIG ? -EINVAL : r;
                }
                j->key = TAKE_PTR(text);
        }
        j->gj = (GradeJudge){
                .api = judge_api_to_string(c->api),
                .model = j->cfg.model ? j->cfg.model : "",
                .ask = c->api == JUDGE_API_COMMAND ? command_ask : http_ask,
                .userdata = j,
        };
        *ret = j;
        return 0;
}

Judge *judge_free(Judge *j)
{
        if (!j)
                return NULL;
        if (j->key) {
                explicit_bzero(j->key, strlen(j->key));
                free(j->key);
        }
        judge_config_done(&j->cfg);
        free(j);
        return NULL;
}

const GradeJudge *judge_grade_judge(const Judge *j)
{
        return &j->gj;
}
