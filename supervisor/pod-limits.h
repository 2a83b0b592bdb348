/* SPDX-License-Identifier: MIT */
/*
 * Resource limits of one pod (DESIGN.md "Pod isolation"), and the loader of the
 * limits profiles in policies/limits/<name>.json that sandbox images name.
 *
 * Profile format (a JSON object, every key optional, unknown keys refused):
 *   {"memory_max": "64M", "pids_max": 32, "cpu_weight": 100}
 * memory_max: bytes as an integer, or a string of digits with an optional binary
 * suffix K, M or G (1024-based); pids_max: processes+threads; cpu_weight: 1..10000
 * with cgroup v2 semantics (100 = default share).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct PodLimits {
        uint64_t memory_max; /* bytes; page-aligned by the kernel */
        uint64_t pids_max;   /* tasks (processes and threads) */
        uint64_t cpu_weight; /* 1..10000, cgroup v2 cpu.weight semantics, default 100 */
} PodLimits;

#define POD_MEMORY_MIN     (UINT64_C(1) << 20) /* below 1 MiB a pod cannot even execve */
#define POD_MEMORY_MAX     (UINT64_C(1) << 50)
#define POD_PIDS_MAX       UINT64_C(4194304) /* PID_MAX_LIMIT */
#define POD_CPU_WEIGHT_MIN UINT64_C(1)
#define POD_CPU_WEIGHT_MAX UINT64_C(10000)

/* DESIGN.md "Configuration": per-pod memory 64 MiB, pids 32; cpu weight 100. */
#define POD_LIMITS_DEFAULT \
        ((PodLimits){.memory_max = UINT64_C(64) << 20, .pids_max = 32, .cpu_weight = 100})

/*
 * Parses a size: decimal digits with an optional K, M or G suffix (powers of 1024).
 * Returns 0 and *ret_bytes, -EINVAL for anything else, -ERANGE on overflow.
 */
int pod_limits_parse_size(const char *s, uint64_t *ret_bytes);

/*
 * Loads the profile at path into *ret: keys absent from the file keep the
 * POD_LIMITS_DEFAULT values. Returns 0; -ENOENT/-EACCES/... when the file cannot be
 * read, -EINVAL for a malformed profile (unknown key, bad type, value out of the ranges
 * above). On failure err (errlen bytes, always NUL-terminated) says what and where.
 */
int pod_limits_load(const char *path, PodLimits *ret, char *err, size_t errlen);
