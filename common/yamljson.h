/* SPDX-License-Identifier: MIT */
/*
 * YAML as JSON: the only module that includes libyaml (STYLE.md: one module per
 * third-party library). pomed.conf (supervisor/config.c) and a task's ## Config block
 * (pods/grade/task.c) both read YAML through here, so both accept the same YAML and
 * report a bad document the same way, by line.
 */
#pragma once

#include <jansson.h>
#include <stddef.h>

/*
 * Parses YAML text (len bytes, one document) into JSON: mappings → objects, sequences →
 * arrays, plain scalars that read as integers, reals, true/false or null become those,
 * everything else (quoted scalars included) strings. Mapping keys must be scalars and
 * unique. Aliases are followed, under a budget of nodes that bounds the expansion of an
 * alias bomb; an empty document is an empty object.
 *
 * With ret_lines, also returns a new object mapping the RFC 6901 JSON Pointer of every node
 * ("" for the root, "/twins/0", "/timeout") to the 1-based line it starts on in text (for a
 * mapping member, the line of its key), so a caller can name the line of a value it refuses.
 *
 * Returns 0 with new references in *ret (and *ret_lines), -EINVAL with "line N: …" in err
 * (errlen bytes, NUL-terminated; N is 1-based, from libyaml's mark), -ENOMEM.
 */
int yamljson_parse(const char *text, size_t len, json_t **ret, json_t **ret_lines, char *err,
                   size_t errlen);
