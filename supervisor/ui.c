/* SPDX-License-Identifier: MIT */
#include "supervisor/ui.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/json-util.h"
#include "common/util.h"

struct Ui {
        char *dir;    /* NULL: none found */
        int fd;       /* O_DIRECTORY of dir, or -1 */
        char *looked; /* where it looked, for the 404 */
};

static const char csp[] = "default-src 'self'; img-src 'self' data:; object-src 'none'; "
                          "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

int ui_new(const Config *cfg, Ui **ret)
{
        Ui *ui = calloc(1, sizeof(*ui));
        if (!ui)
                return -ENOMEM;
        ui->fd = -1;
        /* one set in pomed.conf is the only one looked at */
        const char *dirs[] = {cfg->ui_dir, cfg->ui_dir ? NULL : getenv("POME_UI_DIR"),
                              cfg->ui_dir ? NULL : POME_SOURCE_DIR "/ui",
                              cfg->ui_dir ? NULL : "/usr/share/pome/ui"};
        size_t len = 0;
        FILE *f = open_memstream(&ui->looked, &len);
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                if (!dirs[i] || !*dirs[i])
                        continue;
                if (f)
                        fprintf(f, "%s%s", len ? ", " : "", dirs[i]);
                if (f)
                        fflush(f);
                int fd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                if (faccessat(fd, "index.html", R_OK, 0) < 0) {
                        close(fd);
                        continue;
                }
                ui->fd = fd;
                ui->dir = strdup(dirs[i]);
                break;
        }
        if (!f || fclose(f) != 0 || (ui->fd >= 0 && !ui->dir)) {
                ui_free(ui);
                return -ENOMEM;
        }
        *ret = ui;
        return 0;
}

Ui *ui_free(Ui *ui)
{
        if (!ui)
                return NULL;
        if (ui->fd >= 0)
                close(ui->fd);
        free(ui->dir);
        free(ui->looked);
        free(ui);
        return NULL;
}

/* Whether path (below /ui/) is one we serve: components of [A-Za-z0-9_.-], none starting
 * with '.' or '-', none empty. */
static bool path_ok(const char *path)
{
        if (!*path || strlen(path) > 256)
                return false;
        for (const char *p = path; *p;) {
                size_t n = strcspn(p, "/");
                if (n == 0 || p[0] == '.' || p[0] == '-' ||
                    strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") <
                            n)
                        return false;
                p += n;
                if (*p == '/' && !*++p)
                        return false;
        }
        return true;
}

static const char *content_type(const char *path)
{
        static const struct {
                const char *ext, *type;
        } types[] = {
                {".html", "text/html; charset=utf-8"},
                {".js", "text/javascript; charset=utf-8"},
                {".css", "text/css; charset=utf-8"},
                {".svg", "image/svg+xml"},
                {".png", "image/png"},
                {".ico", "image/x-icon"},
                {".json", "application/json"},
                {".txt", "text/plain; charset=utf-8"},
        };
        const char *dot = strrchr(path, '.');
        for (size_t i = 0; dot && i < ELEMENTSOF(types); i++)
                if (streq(dot, types[i].ext))
                        return types[i].type;
        return "application/octet-stream";
}

static json_t *headers(const char *request_id, const char *type)
{
        return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "X-Request-Id", request_id,
                         "Content-Type", type, "Content-Security-Policy", csp,
                         "X-Content-Type-Options", "nosniff", "Referrer-Policy", "no-referrer",
                         "Cache-Control", "no-cache");
}

static void refuse(HttpRequest *rq, const char *request_id, int status, const char *type,
                   const char *message)
{
        _cleanup_json_ json_t *h = headers(request_id, "application/json"),
                              *body = json_pack("{s:{s:s, s:s, s:n, s:s}}", "error", "type", type,
                                                "message", message, "details", "request_id",
                                                request_id);
        if (h && streq(type, "method_not_allowed"))
                (void)json_object_set_new(h, "Allow", json_string("GET, HEAD"));
        (void)http_reply_json(rq, status, h, body);
}

bool ui_handle(Ui *ui, HttpRequest *rq, const char *request_id)
{
        const char *path = http_request_path(rq);
        const char *rest = startswith(path, "/ui");
        if (!rest || (*rest && *rest != '/'))
                return false;
        const char *method = http_request_method(rq);
        if (!streq(method, "GET") && !streq(method, "HEAD")) {
                refuse(rq, request_id, 405, "method_not_allowed",
                       "The dashboard's files are read with GET or HEAD.");
                return true;
        }
        if (!*rest) {
                _cleanup_json_ json_t *h = headers(request_id, "text/plain; charset=utf-8");
                if (h)
                        (void)json_object_set_new(h, "Location", json_string("/ui/"));
                (void)http_reply(rq, 308, h, "/ui/\n", 5);
                return true;
        }
        const char *file = rest[1] ? rest + 1 : "index.html";
        char message[1024];
        if (ui->fd < 0) {
                snprintf(message, sizeof(message),
                         "The dashboard is not installed: no index.html in %s. Set ui_dir in "
                         "pomed.conf.",
                         strempty(ui->looked));
                refuse(rq, request_id, 404, "not_found", message);
                return true;
        }
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        struct stat st;
        int r = path_ok(file) ? 0 : -ENOENT;
        if (r >= 0 && (fstatat(ui->fd, file, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)))
                r = -ENOENT;
        if (r >= 0)
                r = read_file_at(ui->fd, file, UI_FILE_MAX, &data, &len);
        if (r == -ENOENT || r == -ELOOP || r == -ENOTDIR || r == -EFBIG) {
                snprintf(message, sizeof(message), "No such file of the dashboard: %s.", path);
                refuse(rq, request_id, 404, "not_found", message);
                return true;
        }
        if (r < 0) {
                snprintf(message, sizeof(message), "Cannot read the dashboard's file %s: %s.", path,
                         strerror(-r));
                refuse(rq, request_id, 500, "internal_error", message);
                return true;
        }
        _cleanup_json_ json_t *h = headers(request_id, content_type(file));
        (void)http_reply(rq, 200, h, data, len);
        return true;
}
