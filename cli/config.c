/* SPDX-License-Identifier: MIT */
#include "cli/config.h"

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/json-util.h"
#include "common/util.h"

/* The key file holds one line; anything longer than this is not a key we wrote. */
#define API_KEY_MAX 1024

static const char *global_api_url = NULL;

void config_set_global_api_url(const char *url)
{
        global_api_url = url;
}

void config_done(Config *c)
{
        free(c->api_url);
        free(c->api_url_source);
        if (c->api_key) {
                explicit_bzero(c->api_key, strlen(c->api_key));
                free(c->api_key);
        }
        *c = (Config){};
}

static const char *getenv_nonempty(const char *name)
{
        const char *v = getenv(name);
        return v && *v ? v : NULL;
}

/* state_dir of a running pomed's pomed.json at path (a new string), or NULL. */
static char *state_dir_from_info(const char *path)
{
        _cleanup_json_ json_t *j = json_load_file(path, 0, NULL);
        const char *d = json_get_str(j, "state_dir");
        return d && *d ? strdup(d) : NULL;
}

/*
 * The .pome directory of the working directory or of the nearest parent that has one, as git
 * finds .git: a new string (".pome" in the working directory itself, else an absolute path),
 * NULL when there is none below the ceiling — the filesystem root, or $HOME's parent, which
 * is not searched, so one user's pome never wanders into another's home or the root's.
 */
static char *find_dot_pome(void)
{
        struct stat st;
        if (stat(".pome", &st) == 0 && S_ISDIR(st.st_mode))
                return strdup(".pome");
        _cleanup_free_ char *cwd = getcwd(NULL, 0), *ceiling = NULL;
        const char *home = getenv_nonempty("HOME");
        char real_home[PATH_MAX];
        if (!cwd)
                return NULL;
        if (home && realpath(home, real_home)) {
                char *slash = strrchr(real_home, '/');
                if (slash)
                        ceiling = slash == real_home
                                          ? strdup("/")
                                          : strndup(real_home, (size_t)(slash - real_home));
        }
        for (;;) {
                char *slash = strrchr(cwd, '/');
                if (!slash || streq(cwd, "/"))
                        return NULL;
                if (slash == cwd)
                        slash[1] = 0; /* the parent is the root */
                else
                        *slash = 0;
                if (ceiling && streq(cwd, ceiling))
                        return NULL;
                char *candidate;
                if (asprintf(&candidate, "%s%s.pome", cwd, streq(cwd, "/") ? "" : "/") < 0)
                        return NULL;
                if (stat(candidate, &st) == 0 && S_ISDIR(st.st_mode))
                        return candidate;
                free(candidate);
        }
}

/* New string: the state dir (see config.h); *ret_info the pomed.json found on the way. */
static char *state_dir(char **ret_info)
{
        const char *e = getenv_nonempty("POME_STATE_DIR");

        *ret_info = NULL;
        if (e)
                return strdup(e);
        char *dot = find_dot_pome();
        if (dot)
                return dot;
        /* a pomed under systemd says where it is in its RuntimeDirectory=: a user unit's
         * first, then the system's */
        const char *xdg = getenv_nonempty("XDG_RUNTIME_DIR");
        _cleanup_free_ char *user = NULL;
        if (xdg && asprintf(&user, "%s/pome/pomed.json", xdg) < 0)
                user = NULL;
        const char *infos[] = {user, CONFIG_SYSTEM_INFO};
        for (size_t i = 0; i < ELEMENTSOF(infos); i++) {
                if (!infos[i])
                        continue;
                char *d = state_dir_from_info(infos[i]);
                if (d) {
                        *ret_info = strdup(infos[i]);
                        return d;
                }
        }
        return strdup(CONFIG_DEFAULT_STATE_DIR);
}

static bool has_control_chars(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/*
 * Checks that url is an http(s) URL with a host and no whitespace, and returns
 * a copy without trailing slashes (paths are appended as "/v1/…").
 */
static int normalize_url(const char *url, char **ret)
{
        const char *rest = startswith(url, "http://");
        char *copy;
        size_t n;

        if (!rest)
                rest = startswith(url, "https://");
        if (!rest || !*rest || *rest == '/' || strpbrk(url, " \t") || has_control_chars(url))
                return -EINVAL;
        copy = strdup(url);
        if (!copy)
                return -ENOMEM;
        n = strlen(copy);
        while (n > 0 && copy[n - 1] == '/')
                copy[--n] = '\0';
        *ret = copy;
        return 0;
}

/* control_url of <state dir>/pomed.json, or NULL when there is no usable one (warns if broken). */
static char *url_from_pomed_json(const char *path)
{
        _cleanup_json_ json_t *j = NULL;
        json_error_t e;
        const char *u;

        if (access(path, F_OK) < 0)
                return NULL;
        j = json_load_file(path, 0, &e);
        if (!j) {
                fprintf(stderr, "pome: warning: ignoring %s: %s\n", path, e.text);
                return NULL;
        }
        u = json_get_str(j, "control_url");
        if (!u) {
                fprintf(stderr, "pome: warning: ignoring %s: no \"control_url\" string in it\n",
                        path);
                return NULL;
        }
        return strdup(u);
}

/*
 * A state dir that holds an API key but no pomed.json is a pomed's that is not running (a
 * running pomed writes pomed.json and a clean stop removes it): falling back to the default
 * URL would talk to whatever pomed listens there — another one, which then refuses this key.
 * Says so, with how to start it. -EHOSTDOWN.
 */
static int refuse_stopped(const char *dir)
{
        fprintf(stderr,
                "pome: pomed is not running in %s: it holds an API key but no pomed.json (a "
                "running pomed\n  writes it, a stopped one removes it), and pome does not "
                "guess another address.\n",
                dir);
        if (streq(dir, CONFIG_DEFAULT_STATE_DIR))
                fprintf(stderr, "  Start it: systemctl start pomed");
        else
                fprintf(stderr, "  Start it: pomed --state-dir %s", dir);
        fprintf(stderr, " — or give --api-url / POME_API_URL of a pomed that runs.\n");
        return -EHOSTDOWN;
}

static int load_url(const char *override, const char *dir, const char *info, Config *c)
{
        _cleanup_free_ char *from_file = NULL, *json_path = NULL;
        const char *url, *source;
        int r;

        /* the runtime directory's copy is readable by everyone, the state dir's maybe not */
        if (info)
                json_path = strdup(info);
        else if (asprintf(&json_path, "%s/pomed.json", dir) < 0)
                json_path = NULL;
        if (!json_path)
                return -ENOMEM;

        if (!override)
                override = global_api_url;
        if (override) {
                url = override;
                source = "--api-url";
        } else if ((url = getenv_nonempty("POME_API_URL"))) {
                source = "$POME_API_URL";
        } else if ((from_file = url_from_pomed_json(json_path))) {
                url = from_file;
                source = json_path;
        } else {
                _cleanup_free_ char *key = NULL;
                if (asprintf(&key, "%s/api-key", dir) < 0)
                        return -ENOMEM;
                if (access(json_path, F_OK) < 0 && access(key, F_OK) == 0)
                        return refuse_stopped(dir);
                url = CONFIG_DEFAULT_API_URL;
                source = "default";
        }

        r = normalize_url(url, &c->api_url);
        if (r == -EINVAL) {
                fprintf(stderr,
                        "pome: invalid API URL '%s' (from %s): expected http://HOST[:PORT] or "
                        "https://HOST[:PORT]\n",
                        url, source);
                return r;
        }
        if (r < 0)
                return r;
        c->api_url_source = strdup(source);
        return c->api_url_source ? 0 : -ENOMEM;
}

/* Reads the first line of path into a new string. -ENOENT, -EACCES…, -EBADMSG (empty/too long). */
static int read_key_file(const char *path, char **ret)
{
        char *buf = NULL;
        size_t len = 0;
        int r = read_file_at(AT_FDCWD, path, API_KEY_MAX + 2, &buf, &len);
        if (r == -EFBIG)
                return -EBADMSG;
        if (r < 0)
                return r;
        size_t cap = len;
        buf[strcspn(buf, "\r\n")] = '\0';
        len = strlen(buf);
        while (len > 0 && (buf[len - 1] == ' ' || buf[len - 1] == '\t'))
                buf[--len] = '\0';
        if (len == 0 || len > API_KEY_MAX || has_control_chars(buf) || strchr(buf, ' ')) {
                explicit_bzero(buf, cap);
                free(buf);
                return -EBADMSG;
        }
        *ret = buf;
        return 0;
}

static int load_key(const char *dir, Config *c)
{
        _cleanup_free_ char *path = NULL;
        const char *env = getenv_nonempty("POME_API_KEY");
        int r;

        if (env) {
                /* The key goes into an HTTP header: a stray newline would split it. */
                if (has_control_chars(env) || strchr(env, ' ')) {
                        fprintf(stderr, "pome: $POME_API_KEY holds spaces or control characters; "
                                        "it is not an API key\n");
                        return -ENOKEY;
                }
                c->api_key = strdup(env);
                return c->api_key ? 0 : -ENOMEM;
        }

        if (asprintf(&path, "%s/api-key", dir) < 0)
                return -ENOMEM;
        r = read_key_file(path, &c->api_key);
        switch (r) {
        case 0:
                return 0;
        case -ENOENT:
        case -ENOTDIR:
                fprintf(stderr,
                        "pome: no API key: $POME_API_KEY is not set and %s does not exist.\n"
                        "  pomed writes that file on first start: start pomed (or point "
                        "POME_STATE_DIR at\n  its state dir), or set POME_API_KEY=pome_...\n",
                        path);
                return -ENOKEY;
        case -EACCES:
        case -EPERM: {
                /* The key is 0640 with the state directory's group when that group may enter
                 * the directory (the system unit: root:pome): name who may read it. */
                struct stat st;
                const struct group *g = NULL;
                if (stat(path, &st) == 0)
                        g = st.st_mode & S_IRGRP ? getgrgid(st.st_gid) : NULL;
                else if (stat(dir, &st) == 0 && (st.st_mode & S_IXGRP))
                        g = getgrgid(st.st_gid); /* the directory is closed to us: its group */
                if (g && st.st_gid != 0)
                        fprintf(stderr,
                                "pome: cannot read the API key in %s: %s\n"
                                "  It is for root and the members of group %s: ask an "
                                "administrator to run\n  'adduser %s %s' (then log in again), "
                                "or set POME_API_KEY\n",
                                path, strerror(-r), g->gr_name,
                                getenv_nonempty("USER") ? getenv_nonempty("USER") : "$USER",
                                g->gr_name);
                else
                        fprintf(stderr,
                                "pome: cannot read the API key in %s: %s\n"
                                "  (pomed writes it mode 0600 for the user it runs as: run pome "
                                "as that user, or set POME_API_KEY)\n",
                                path, strerror(-r));
                return -EACCES;
        }
        case -EBADMSG:
                fprintf(stderr, "pome: %s does not hold an API key on its first line\n", path);
                return -ENOKEY;
        case -ENOMEM:
                return r;
        default:
                fprintf(stderr, "pome: cannot read the API key in %s: %s\n", path, strerror(-r));
                return -ENOKEY;
        }
}

int config_locate(const char *api_url_override, Config *ret, char **ret_state_dir, char **ret_info)
{
        _cleanup_free_ char *dir = NULL, *info = NULL;
        Config c = {};
        dir = state_dir(&info);
        if (!dir)
                return -ENOMEM;
        int r = load_url(api_url_override, dir, info, &c);
        if (r < 0 && r != -EHOSTDOWN) {
                config_done(&c);
                return r;
        }
        if (!info && asprintf(&info, "%s/pomed.json", dir) < 0) {
                info = NULL;
                config_done(&c);
                return -ENOMEM;
        }
        *ret = c;
        *ret_state_dir = TAKE_PTR(dir);
        *ret_info = TAKE_PTR(info);
        return r;
}

void config_agent_defaults(uint64_t *ret_memory, uint64_t *ret_pids, uint64_t *ret_output)
{
        *ret_memory = *ret_pids = *ret_output = 0;
        _cleanup_free_ char *info = NULL, *path = NULL;
        _cleanup_free_ char *dir = state_dir(&info);
        if (!info && dir && asprintf(&path, "%s/pomed.json", dir) < 0)
                return;
        _cleanup_json_ json_t *j = json_load_file(info ? info : path, 0, NULL);
        json_t *agent = json_object_get(j, "agent");
        uint64_t *outs[] = {ret_memory, ret_pids, ret_output};
        const char *keys[] = {"memory", "pids", "output"};
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                json_t *v = json_object_get(agent, keys[i]);
                if (json_is_integer(v) && json_integer_value(v) > 0)
                        *outs[i] = (uint64_t)json_integer_value(v);
        }
}

int config_load(const char *api_url_override, Config *ret)
{
        _cleanup_free_ char *dir = NULL, *info = NULL;
        Config c = {};
        int r;

        dir = state_dir(&info);
        if (!dir)
                return -ENOMEM;

        r = load_url(api_url_override, dir, info, &c);
        if (r >= 0)
                r = load_key(dir, &c);
        if (r < 0) {
                config_done(&c);
                return r;
        }
        *ret = c;
        return 0;
}
