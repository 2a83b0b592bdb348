/* SPDX-License-Identifier: MIT */
/*
 * A small hash map from a key (a string or a 64-bit integer) to a pointer:
 * open addressing, linear probing, load factor at most 1/2, deletion by
 * backward shift (no tombstones), so lookups stay a probe or two however many
 * entries came and went. pomed finds every sandbox by id and every pod by pid
 * through one.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Hashmap Hashmap;

typedef enum HashmapKeys {
        HASHMAP_STRING, /* keys are NUL-terminated strings, borrowed: each must live as long
                         * as its entry (typically it is a field of the value) */
        HASHMAP_U64,    /* keys are uint64_t values, copied */
} HashmapKeys;

/* A new, empty map. NULL on OOM. */
Hashmap *hashmap_new(HashmapKeys keys);

/* Frees the map (not the values). Accepts NULL; returns NULL. */
Hashmap *hashmap_free(Hashmap *h);

/* Number of entries. */
size_t hashmap_size(const Hashmap *h);

/*
 * Adds key → value (value not NULL). Returns 0, -EEXIST when the key is present already
 * (the map is unchanged), -ENOMEM.
 */
int hashmap_put(Hashmap *h, const char *key, void *value);
int hashmap_put_u64(Hashmap *h, uint64_t key, void *value);

/* The value of key, or NULL. */
void *hashmap_get(const Hashmap *h, const char *key);
void *hashmap_get_u64(const Hashmap *h, uint64_t key);

/* Removes key and returns its value, or NULL when absent. */
void *hashmap_remove(Hashmap *h, const char *key);
void *hashmap_remove_u64(Hashmap *h, uint64_t key);
