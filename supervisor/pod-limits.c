/* SPDX-License-Identifier: MIT */
#include "supervisor/pod-limits.h"

#include <inttypes.h>

#include "common/json-util.h"
#include "common/text.h"
#include "common/util.h"

int pod_limits_parse_size(const char *s, uint64_t *ret_bytes)
{
        return text_parse_size(s, ret_bytes);
}

static int get_uint(const json_t *v, uint64_t *ret)
{
        if (!json_is_integer(v) || json_integer_value(v) < 0)
                return -EINVAL;
        *ret = (uint64_t)json_integer_value(v);
        return 0;
}

int pod_limits_load(const char *path, PodLimits *ret, char *err, size_t errlen)
{
        json_error_t je;
        PodLimits l = POD_LIMITS_DEFAULT;
        const char *key;
        json_t *v;

        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f) {
                int r = negative_errno();
                snprintf(err, errlen, "%s: %s", path, strerror(-r));
                return r;
        }
        _cleanup_json_ json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
        if (!root) {
                snprintf(err, errlen, "%s:%d: %s", path, je.line, je.text);
                return -EINVAL;
        }
        if (!json_is_object(root)) {
                snprintf(err, errlen, "%s: a limits profile is a JSON object", path);
                return -EINVAL;
        }
        json_object_foreach (root, key, v) {
                if (streq(key, "memory_max")) {
                        int r = json_is_string(v)
                                        ? pod_limits_parse_size(json_string_value(v), &l.memory_max)
                                        : get_uint(v, &l.memory_max);
                        if (r < 0 || l.memory_max < POD_MEMORY_MIN ||
                            l.memory_max > POD_MEMORY_MAX) {
                                snprintf(err, errlen,
                                         "%s: memory_max must be bytes or a size like \"64M\", "
                                         "between 1M and 1024T",
                                         path);
                                return -EINVAL;
                        }
                } else if (streq(key, "pids_max")) {
                        if (get_uint(v, &l.pids_max) < 0 || l.pids_max < 1 ||
                            l.pids_max > POD_PIDS_MAX) {
                                snprintf(err, errlen,
                                         "%s: pids_max must be an integer between 1 and %" PRIu64,
                                         path, POD_PIDS_MAX);
                                return -EINVAL;
                        }
                } else if (streq(key, "cpu_weight")) {
                        if (get_uint(v, &l.cpu_weight) < 0 || l.cpu_weight < POD_CPU_WEIGHT_MIN ||
                            l.cpu_weight > POD_CPU_WEIGHT_MAX) {
                                snprintf(err, errlen,
                                         "%s: cpu_weight must be an integer between 1 and 10000",
                                         path);
                                return -EINVAL;
                        }
                } else {
                        snprintf(err, errlen,
                                 "%s: unknown key \"%s\" (known: memory_max, pids_max, cpu_weight)",
                                 path, key);
                        return -EINVAL;
                }
        }
        *ret = l;
        return 0;
}
