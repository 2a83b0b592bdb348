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

typedef struct Image {
        const TwinKind *kind;
        char *dir;          /* sandbox-images/<twin>, absolute */
        char *default_seed; /* seed name */
        PodLimits limits;   /* the profile, overridden by pomed.conf's pod: section */
} Image;

typedef struct Images {
        Image *images;
        size_t n;
        char *images_dir, *policies_dir, *pod_exec; /* absolute */
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

/* The seed names of img (JSON array, new reference). */
json_t *image_seeds_json(const Image *img);
