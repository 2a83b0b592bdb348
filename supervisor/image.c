/* SPDX-License-Identifier: MIT */
#include "supervisor/image.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/json-util.h"
#include "common/util.h"

SeedText *seed_text_new(const char *data, size_t len)
{
        SeedText *t = malloc(sizeof(*t) + len + 1);
        if (!t)
                return NULL;
        t->n_ref = 1;
        t->len = len;
        memcpy(t->data, data, len);
        t->data[len] = 0;
        return t;
}

SeedText *seed_text_ref(SeedText *t)
{
        if (t)
                t->n_ref++;
        return t;
}

SeedText *seed_text_unref(SeedText *t)
{
        if (t && --t->n_ref == 0)
                free(t);
        return NULL;
}

#define SEED_CACHE_MAX 32 /* seeds of one image kept; the oldest goes first */

typedef struct SeedEntry {
        char name[65];
        struct stat st; /* of the file when it was read */
        SeedText *text;
} SeedEntry;

struct SeedCache {
        SeedEntry e[SEED_CACHE_MAX];
        size_t n, next; /* entries used; the one to replace when full */
};

static bool same_file(const struct stat *a, const struct stat *b)
{
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
               a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

int image_seed_get(const Image *img, const char *name, SeedText **ret)
{
        if (!image_valid_name(name))
                return -ENOENT;
        char path[PATH_MAX];
        if ((size_t)snprintf(path, sizeof(path), "%s/seeds/%s.json", img->dir, name) >=
            sizeof(path))
                return -ENAMETOOLONG;
        struct stat st;
        if (lstat(path, &st) < 0)
                return errno == ENOENT || errno == ENOTDIR ? -ENOENT : negative_errno();
        if (!S_ISREG(st.st_mode))
                return -ENOENT; /* a symlink or a directory: as read_file_at refuses them */
        SeedCache *c = img->seeds;
        for (size_t i = 0; c && i < c->n; i++)
                if (streq(c->e[i].name, name) && same_file(&c->e[i].st, &st)) {
                        *ret = seed_text_ref(c->e[i].text);
                        return 0;
                }
        _cleanup_free_ char *data = NULL;
        size_t len;
        int r = image_read_seed(img, name, &data, &len);
        if (r < 0)
                return r;
        SeedText *t = seed_text_new(data, len);
        if (!t)
                return -ENOMEM;
        if (c) {
                /* a file that changed since it was read replaces its entry */
                size_t i;
                for (i = 0; i < c->n && !streq(c->e[i].name, name); i++)
                        ;
                if (i == c->n) {
                        if (c->n < SEED_CACHE_MAX)
                                c->n++;
                        else
                                i = c->next++ % SEED_CACHE_MAX;
                }
                seed_text_unref(c->e[i].text);
                snprintf(c->e[i].name, sizeof(c->e[i].name), "%s", name);
                c->e[i].st = st;
                c->e[i].text = seed_text_ref(t);
        }
        *ret = t;
        return 0;
}

static SeedCache *seed_cache_free(SeedCache *c)
{
        for (size_t i = 0; c && i < c->n; i++)
                seed_text_unref(c->e[i].text);
        free(c);
        return NULL;
}

bool image_valid_name(const char *s)
{
        return s && *s && strlen(s) <= 64 &&
               strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(s);
}

static char *exe_dir(void)
{
        char buf[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
        if (n <= 0)
                return NULL;
        buf[n] = 0;
        char *slash = strrchr(buf, '/');
        if (slash)
                *slash = 0;
        return strdup(buf);
}

/* First existing path of the candidates (NULL entries skipped); a new string or NULL. */
static char *first_existing(const char *const *cands, size_t n, int mode)
{
        for (size_t i = 0; i < n; i++)
                if (cands[i] && access(cands[i], mode) == 0)
                        return realpath(cands[i], NULL);
        return NULL;
}

static int resolve_paths(const Config *cfg, Images *im, char *err, size_t errlen)
{
        _cleanup_free_ char *ed = exe_dir();
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *f = NULL;
        if (ed &&
            (asprintf(&a, "%s/pome-pod", ed) < 0 || asprintf(&b, "%s/../pods/pome-pod", ed) < 0 ||
             asprintf(&c, "%s/../libexec/pome/pome-pod", ed) < 0 ||
             asprintf(&d, "%s/../share/pome/sandbox-images", ed) < 0 ||
             asprintf(&f, "%s/../share/pome/policies", ed) < 0))
                return -ENOMEM;
        const char *want = cfg->pod_exec ? cfg->pod_exec : getenv("POME_POD_EXEC");
        const char *pods[] = {a, b, c, "/usr/libexec/pome/pome-pod"};
        im->pod_exec = want ? first_existing(&want, 1, X_OK)
                            : first_existing(pods, ELEMENTSOF(pods), X_OK);
        if (!im->pod_exec) {
                if (want)
                        snprintf(err, errlen, "pod_exec %s: not an executable file", want);
                else
                        snprintf(err, errlen,
                                 "cannot find the pome-pod program (looked next to pomed, in "
                                 "../pods and /usr/libexec/pome); set pod_exec in pomed.conf or "
                                 "POME_POD_EXEC");
                return -ENOENT;
        }
        /* Pods are started from this fd (execveat): the pod user needs to execute the file,
         * not to search the path to it (a clone in root's 0700 home). It also pins the
         * program pomed checked for the pods of this run. */
        int fd = open(im->pod_exec, O_PATH | O_CLOEXEC);
        if (fd >= 0 && fd <= 2) { /* started with a standard stream closed */
                int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                close(fd);
                fd = moved;
        }
        if (fd < 0) {
                snprintf(err, errlen, "cannot open %s: %m", im->pod_exec);
                return negative_errno();
        }
        im->pod_exec_fd = fd;
        const char *imgs[] = {cfg->images_dir, getenv("POME_IMAGES_DIR"), d,
                              POME_SOURCE_DIR "/sandbox-images", "/usr/share/pome/sandbox-images"};
        const char *pols[] = {cfg->policies_dir, getenv("POME_POLICIES_DIR"), f,
                              POME_SOURCE_DIR "/policies", "/usr/share/pome/policies"};
        im->images_dir = first_existing(imgs, ELEMENTSOF(imgs), R_OK);
        im->policies_dir = first_existing(pols, ELEMENTSOF(pols), R_OK);
        if (!im->images_dir || !im->policies_dir) {
                snprintf(err, errlen, "cannot find the %s directory; set %s in pomed.conf",
                         !im->images_dir ? "sandbox-images" : "policies",
                         !im->images_dir ? "images_dir" : "policies_dir");
                return -ENOENT;
        }
        return 0;
}

static int load_image(const Config *cfg, Images *im, const char *name, char *err, size_t errlen)
{
        _cleanup_free_ char *dir = NULL, *path = NULL, *lp = NULL;
        if (asprintf(&dir, "%s/%s", im->images_dir, name) < 0 ||
            asprintf(&path, "%s/image.json", dir) < 0)
                return -ENOMEM;
        if (access(path, R_OK) < 0)
                return 0; /* a kind without an image is not offered */
        json_error_t je;
        _cleanup_json_ json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(j)) {
                snprintf(err, errlen, "%s:%d: %s", path, je.line, je.text);
                return -EINVAL;
        }
        const char *limits = json_get_str(j, "limits");
        const char *seed = json_get_str(j, "default_seed");
        if (!image_valid_name(limits) || !image_valid_name(seed ? seed : "default")) {
                snprintf(err, errlen,
                         "%s: 'limits' must name a profile in policies/limits/ and "
                         "'default_seed' a seed ([a-z0-9_-])",
                         path);
                return -EINVAL;
        }
        Image *img = &im->images[im->n];
        *img = (Image){.kind = twin_kind_find(name)};
        if (asprintf(&lp, "%s/limits/%s.json", im->policies_dir, limits) < 0 ||
            !(img->default_seed = strdup(seed ? seed : "default")) ||
            !(img->seeds = calloc(1, sizeof(SeedCache))))
                return -ENOMEM;
        img->dir = TAKE_PTR(dir);
        im->n++;
        int r = pod_limits_load(lp, &img->limits, err, errlen);
        if (r < 0)
                return r;
        /* pomed.conf's pod: section overrides every profile (tests, small hosts) */
        if (cfg->pod_memory_max)
                img->limits.memory_max = cfg->pod_memory_max;
        if (cfg->pod_pids_max)
                img->limits.pids_max = cfg->pod_pids_max;
        if (cfg->pod_cpu_weight)
                img->limits.cpu_weight = cfg->pod_cpu_weight;
        return 0;
}

int images_load(const Config *cfg, Images **ret, char *err, size_t errlen)
{
        Images *im = calloc(1, sizeof(*im));
        if (!im)
                return -ENOMEM;
        const char *const *names = twin_kind_names();
        size_t n = 0;
        while (names[n])
                n++;
        int r = (im->images = calloc(n, sizeof(Image))) ? 0 : -ENOMEM;
        if (r >= 0)
                r = resolve_paths(cfg, im, err, errlen);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = load_image(cfg, im, names[i], err, errlen);
        if (r >= 0 && im->n == 0) {
                snprintf(err, errlen, "%s: no twin images found", im->images_dir);
                r = -ENOENT;
        }
        if (r < 0) {
                images_free(im);
                return r;
        }
        *ret = im;
        return 0;
}

Images *images_free(Images *im)
{
        if (!im)
                return NULL;
        for (size_t i = 0; i < im->n; i++) {
                free(im->images[i].dir);
                free(im->images[i].default_seed);
                seed_cache_free(im->images[i].seeds);
        }
        free(im->images);
        free(im->images_dir);
        free(im->policies_dir);
        free(im->pod_exec);
        if (im->pod_exec_fd > 2)
                close(im->pod_exec_fd);
        free(im);
        return NULL;
}

const Image *images_find(const Images *im, const char *twin)
{
        for (size_t i = 0; i < im->n; i++)
                if (streq(im->images[i].kind->name, twin))
                        return &im->images[i];
        return NULL;
}

json_t *images_names_json(const Images *im)
{
        json_t *a = json_array();
        for (size_t i = 0; a && i < im->n; i++)
                json_array_append_new(a, json_string(im->images[i].kind->name));
        return a;
}

int image_read_seed(const Image *img, const char *name, char **ret, size_t *ret_len)
{
        if (!image_valid_name(name))
                return -ENOENT;
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/seeds/%s.json", img->dir, name) < 0)
                return -ENOMEM;
        int r = read_file_at(AT_FDCWD, path, IMAGE_SEED_MAX, ret, ret_len);
        return r == -ELOOP || r == -EISDIR ? -ENOENT : r;
}

json_t *image_seeds_json(const Image *img)
{
        json_t *a = json_array();
        _cleanup_free_ char *p = NULL;
        if (!a || asprintf(&p, "%s/seeds", img->dir) < 0)
                return a;
        DIR *d = opendir(p);
        if (!d)
                return a;
        struct dirent *de;
        while ((de = readdir(d))) {
                size_t l = strlen(de->d_name);
                if (l > 5 && streq(de->d_name + l - 5, ".json"))
                        json_array_append_new(a, json_stringn(de->d_name, l - 5));
        }
        closedir(d);
        return a;
}
