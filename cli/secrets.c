/* SPDX-License-Identifier: MIT */
#include "cli/secrets.h"

#include <assert.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "common/json-util.h"
#include "common/util.h"

#define MASK_KEEP_CHARS 4
#define MASK_MIN_LEN    12

char *secrets_mask(const char *secret)
{
        char *m;

        if (!secret || strlen(secret) < MASK_MIN_LEN)
                return strdup("(hidden)");
        if (asprintf(&m, "%.*s…(hidden)", MASK_KEEP_CHARS, secret) < 0)
                return NULL;
        return m;
}

bool secrets_credential_is_address(const char *key)
{
        size_t n = strlen(key);

        return (n >= 5 && streq(key + n - 5, "_base")) || (n >= 4 && streq(key + n - 4, "_url"));
}

static int mask_member(json_t *o, const char *key)
{
        _cleanup_free_ char *m = NULL;
        json_t *v = json_object_get(o, key);

        if (!json_is_string(v))
                return 0;
        m = secrets_mask(json_string_value(v));
        if (!m || json_object_set_new(o, key, json_string(m)) < 0)
                return -ENOMEM;
        return 0;
}

int secrets_mask_json(json_t *sandbox)
{
        json_t *creds, *per, *v;
        const char *twin, *key;
        int r;

        r = mask_member(sandbox, "session_token");
        if (r >= 0)
                r = mask_member(sandbox, "agent_token");
        if (r < 0)
                return r;

        creds = json_object_get(sandbox, "provider_credentials");
        json_object_foreach (creds, twin, per) {
                if (json_is_string(per)) {
                        r = mask_member(creds, twin);
                        if (r < 0)
                                return r;
                        continue;
                }
                json_object_foreach (per, key, v) {
                        if (secrets_credential_is_address(key))
                                continue;
                        r = mask_member(per, key);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

void secrets_vars_done(SandboxVars *v)
{
        for (size_t i = 0; i < v->n; i++) {
                if (v->vars[i].secret)
                        explicit_bzero(v->vars[i].value, strlen(v->vars[i].value));
                free(v->vars[i].name);
                free(v->vars[i].value);
        }
        free(v->vars);
        *v = (SandboxVars){};
}

/* "POME_" + NAME upper-cased, anything but [A-Z0-9] turned into '_'. */
static char *env_name(const char *twin, const char *suffix)
{
        char *n;

        if (asprintf(&n, "POME_%s%s%s", strempty(twin), twin ? "_" : "", suffix) < 0)
                return NULL;
        for (char *p = n + 5; *p; p++) {
                if (*p >= 'a' && *p <= 'z')
                        *p = (char)(*p - 'a' + 'A');
                else if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
                        *p = '_';
        }
        return n;
}

static int add_var(SandboxVars *v, const char *twin, const char *suffix, const char *value,
                   bool secret)
{
        SandboxVar *grown;
        char *name, *val;

        if (!value)
                return 0;
        grown = reallocarray(v->vars, v->n + 1, sizeof(SandboxVar));
        if (!grown)
                return -ENOMEM;
        v->vars = grown;
        name = env_name(twin, suffix);
        val = strdup(value);
        if (!name || !val) {
                free(name);
                free(val);
                return -ENOMEM;
        }
        v->vars[v->n++] = (SandboxVar){.name = name, .value = val, .secret = secret};
        return 0;
}

static int add_twin_vars(SandboxVars *v, const json_t *created, const char *twin)
{
        const json_t *per = json_object_get(json_object_get(created, "per_twin"), twin);
        const json_t *creds =
                json_object_get(json_object_get(created, "provider_credentials"), twin);
        const char *key;
        json_t *val;
        int r;

        r = add_var(v, twin, "REST_URL", json_get_str(per, "rest_url"), false);
        if (r >= 0)
                r = add_var(v, twin, "MCP_URL", json_get_str(per, "mcp_url"), false);
        if (r < 0)
                return r;
        json_object_foreach ((json_t *)creds, key, val) {
                r = add_var(v, twin, key, json_string_value(val),
                            !secrets_credential_is_address(key));
                if (r < 0)
                        return r;
        }
        return 0;
}

int secrets_vars_from_sandbox(const json_t *created, SandboxVars *ret)
{
        _cleanup_free_ char *names = NULL;
        const json_t *twins = json_object_get(created, "twins");
        const char *sid = json_get_str(created, "session_id");
        const char *token = json_get_str(created, "session_token");
        const char *first;
        SandboxVars v = {};
        size_t i, len = 0;
        json_t *t;
        int r;

        if (!sid || !token || !json_is_array(twins) || json_array_size(twins) == 0)
                return -EBADMSG;
        json_array_foreach (twins, i, t) {
                if (!json_is_string(t))
                        return -EBADMSG;
                len += json_string_length(t) + 1;
        }
        names = calloc(len + 1, 1);
        if (!names)
                return -ENOMEM;
        json_array_foreach (twins, i, t) {
                if (i > 0)
                        strcat(names, ",");
                strcat(names, json_string_value(t));
        }
        first = json_string_value(json_array_get(twins, 0));

        r = add_var(&v, NULL, "AUTH_TOKEN", token, true);
        if (r >= 0)
                r = add_var(&v, NULL, "SESSION_ID", sid, false);
        if (r >= 0)
                r = add_var(
                        &v, NULL, "TWIN_URL",
                        json_get_str(json_object_get(json_object_get(created, "per_twin"), first),
                                     "rest_url"),
                        false);
        if (r >= 0)
                r = add_var(&v, NULL, "TWIN_NAMES", names, false);
        json_array_foreach (twins, i, t) {
                if (r < 0)
                        break;
                r = add_twin_vars(&v, created, json_string_value(t));
        }
        if (r < 0) {
                secrets_vars_done(&v);
                return r;
        }
        *ret = v;
        return 0;
}

/* Single-quotes s for a POSIX shell: ' becomes '\'' and nothing else is special. */
static void put_quoted(FILE *f, const char *s)
{
        fputc('\'', f);
        for (; *s; s++) {
                if (*s == '\'')
                        fputs("'\\''", f);
                else
                        fputc(*s, f);
        }
        fputc('\'', f);
}

int secrets_print_env(FILE *f, const SandboxVars *v, bool show_secrets)
{
        for (size_t i = 0; i < v->n; i++) {
                _cleanup_free_ char *masked = NULL;
                const char *value = v->vars[i].value;

                if (v->vars[i].secret && !show_secrets) {
                        masked = secrets_mask(value);
                        if (!masked)
                                return -ENOMEM;
                        value = masked;
                }
                fprintf(f, "export %s=", v->vars[i].name);
                put_quoted(f, value);
                fputc('\n', f);
        }
        return ferror(f) ? -EIO : 0;
}

void secrets_file_done(SecretsFile *f)
{
        f->fd = safe_close(f->fd);
        if (f->tmp_path)
                (void)unlink(f->tmp_path);
        free(f->tmp_path);
        free(f->path);
        *f = (SecretsFile){.fd = -1};
}

int secrets_file_prepare(const char *path, SecretsFile *ret)
{
        _cleanup_free_ char *tmp = NULL;
        const char *slash = strrchr(path, '/');
        struct stat st;
        int fd;

        /* Refuse to replace /dev/stdout, a directory or a symlink someone left at that path. */
        if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
                return -EEXIST;
        if (slash && slash[1] == '\0')
                return -EISDIR;

        if (asprintf(&tmp, "%.*s.%s.XXXXXX", slash ? (int)(slash - path + 1) : 0, path,
                     slash ? slash + 1 : path) < 0) {
                tmp = NULL;
                return -ENOMEM;
        }
        /* mkostemp creates the file O_EXCL with mode 0600: never readable by others, even briefly.
         */
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fchmod(fd, 0600) < 0) {
                int r = negative_errno();
                (void)unlink(tmp);
                safe_close(fd);
                return r;
        }
        *ret = (SecretsFile){.fd = fd, .tmp_path = TAKE_PTR(tmp), .path = strdup(path)};
        if (!ret->path) {
                secrets_file_done(ret);
                return -ENOMEM;
        }
        return 0;
}

int secrets_file_commit(SecretsFile *f, const SandboxVars *v)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, done = 0;
        FILE *mem;
        int r;

        assert(f->fd >= 0 && f->tmp_path);

        mem = open_memstream(&buf, &len);
        if (!mem)
                return -ENOMEM;
        r = secrets_print_env(mem, v, true);
        if (fclose(mem) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                goto wipe;

        while (done < len) {
                ssize_t n = write(f->fd, buf + done, len - done);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        r = negative_errno();
                        goto wipe;
                }
                done += (size_t)n;
        }
        if (fsync(f->fd) < 0 || close(TAKE_FD(f->fd)) < 0) {
                r = negative_errno();
                goto wipe;
        }
        if (rename(f->tmp_path, f->path) < 0) {
                r = negative_errno();
                goto wipe;
        }
        free(f->tmp_path);
        f->tmp_path = NULL;
        r = 0;
wipe:
        if (buf)
                explicit_bzero(buf, len);
        return r;
}
