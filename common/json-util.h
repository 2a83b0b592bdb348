/* SPDX-License-Identifier: MIT */
/*
 * jansson idioms. jansson is the project's data model (the twins' worlds, tape
 * rows, frame heads), so unlike other libraries it is used across modules; its
 * reference rules are: json_object_get()/json_array_get() borrow, everything
 * named *_new or json_pack/json_loads returns a new reference, *_new() setters
 * (json_object_set_new) steal one.
 */
#pragma once

#include <jansson.h>

#include "common/util.h"

/* jansson >= 2.11 ships json_decrefp() (NULL-safe) for cleanup attributes. */
#define _cleanup_json_ _cleanup_(json_decrefp)

/* Borrowed string member of an object, or NULL when absent or not a string. */
static inline const char *json_get_str(const json_t *o, const char *key)
{
        return json_string_value(json_object_get(o, key));
}

/* New reference to a string or JSON null when s is NULL. Never fails except on OOM (NULL). */
static inline json_t *json_string_or_null(const char *s)
{
        return s ? json_string(s) : json_null();
}
