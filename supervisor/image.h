/* SPDX-License-Identifier: MIT */
/*
 * Sandbox images (DESIGN.md "Layout"): sandbox-images/<twin>/image.json (its
 * limits profile and default seed) and its seeds/<name>.json, plus where this
 * deployment finds them, the seccomp policies and the pod program. A twin kind
 * without an image is not offered.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pods/twin/twin.h"
#include "supervisor/config.h"
#include "supervisor/pod-limits.h"

/*
 * The text of one seed, shared by every sandbox started from it (reference-counted): what
 * the pod loads and what a kept run's <twin>.seed.json holds, written from it once the run
 * ends (sandbox.c), so a sandbox that is discarded never copies its seeds.
 */
typedef struct SeedText {
        unsigned n_ref;
        size_t len;
        char data[]; /* len bytes, NUL-terminated */
} SeedText;

/* A new seed text holding a copy of the len bytes at data (1 reference), or NULL. */
SeedText *seed_text_new(const char *data, size_t len);
SeedText *seed_text_ref(SeedText *t);
/* Drops one reference; frees on the last. Accepts NULL; returns NULL. */
SeedText *seed_text_unref(SeedText *t);
static inline void seed_text_unrefp(SeedText **t)
{
        seed_text_unref(*t);
}

typedef struct SeedCache SeedCache;

typedef struct Image {
        const TwinKind *kind;
        char *dir;          /* sandbox-images/<twin>, absolute */
        char *default_seed; /* seed name */
        PodLimits limits;   /* the profile, overridden by pomed.conf's pod: section */
        SeedCache *seeds;   /* seed texts read so far (image_seed_get) */
} Image;

typedef struct Images {
        Image *images;
        size_t n;
        char *images_dir, *policies_dir, *pod_exec; /* absolute */
        int pod_exec_fd; /* O_PATH|O_CLOEXEC of pod_exec: pods are started from it (> 2) */
} Images;

#define IMAGE_SEED_MAX (8u << 20) /* bytes of one seed file */

/*
 * Finds the directories and the pod program (pomed.conf, $POME_IMAGES_DIR,
 * $POME_POLICIES_DIR, $POME_POD_EXEC, next to pomed, ../share/pome, /usr/share/pome,
 * /usr/libexec/pome) and loads every image. Returns 0, or negative errno with a sentence
 * in err (errlen bytes) naming the file and what to set.
 */
int images_load(const Config *cfg, Images **ret, char *err, size_t errlen);
Images *images_free(Images *im);

/* The image of twin, or NULL. */
const Image *images_find(const Images *im, const char *twin);

/* The twin names offered (JSON array, new reference). */
json_t *images_names_json(const Images *im);

/* True for a seed or profile name: [a-z0-9_-]{1,64}. */
bool image_valid_name(const char *s);

/*
 * Reads seed name of img into a new buffer (*ret, *ret_len bytes, NUL-terminated).
 * Returns 0, -ENOENT (no such seed, or a bad name), -EFBIG (> IMAGE_SEED_MAX), -errno.
 */
int image_read_seed(const Image *img, const char *name, char **ret, size_t *ret_len);

/*
 * The seed called name of img as a shared text (a new reference in *ret), read once and
 * kept while its file stays the same (device, inode, size and mtime: one stat(2) per call,
 * instead of reading it again; a changed file is read anew, and sandboxes holding the old
 * text keep it). Same errors as image_read_seed.
 */
int image_seed_get(const Image *img, const char *name, SeedText **ret);

/* The seed names of img (JSON array, new reference). */
json_t *image_seeds_json(const Image *img);
