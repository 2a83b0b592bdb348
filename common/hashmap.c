/* SPDX-License-Identifier: MIT */
#include "common/hashmap.h"

#include "common/util.h"

typedef struct Entry {
        union {
                const char *s;
                uint64_t u;
        } key;
        void *value; /* NULL: a free slot */
} Entry;

struct Hashmap {
        HashmapKeys keys;
        Entry *slots;
        size_t size; /* power of two, or 0 */
        size_t n;
};

static uint64_t hash_string(const char *s)
{
        uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a */
        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
        return h;
}

static uint64_t hash_u64(uint64_t x)
{
        /* splitmix64's finaliser: pids and other small integers spread over every bit */
        x ^= x >> 30;
        x *= UINT64_C(0xbf58476d1ce4e5b9);
        x ^= x >> 27;
        x *= UINT64_C(0x94d049bb133111eb);
        return x ^ (x >> 31);
}

static uint64_t entry_hash(const Hashmap *h, const Entry *e)
{
        return h->keys == HASHMAP_STRING ? hash_string(e->key.s) : hash_u64(e->key.u);
}

static bool entry_is(const Hashmap *h, const Entry *e, const char *s, uint64_t u)
{
        return h->keys == HASHMAP_STRING ? s && streq(e->key.s, s) : e->key.u == u;
}

Hashmap *hashmap_new(HashmapKeys keys)
{
        Hashmap *h = calloc(1, sizeof(*h));
        if (h)
                h->keys = keys;
        return h;
}

Hashmap *hashmap_free(Hashmap *h)
{
        if (h) {
                free(h->slots);
                free(h);
        }
        return NULL;
}

size_t hashmap_size(const Hashmap *h)
{
        return h->n;
}

/* The slot holding the key, or the free slot where it would go. size must be > 0. */
static Entry *find(const Hashmap *h, Entry *slots, size_t size, uint64_t hash, const char *s,
                   uint64_t u)
{
        for (size_t i = hash & (size - 1);; i = (i + 1) & (size - 1))
                if (!slots[i].value || entry_is(h, &slots[i], s, u))
                        return &slots[i];
}

static int grow(Hashmap *h)
{
        if ((h->n + 1) * 2 <= h->size)
                return 0;
        size_t size = h->size ? h->size * 2 : 16;
        Entry *slots = calloc(size, sizeof(Entry));
        if (!slots)
                return -ENOMEM;
        for (size_t i = 0; i < h->size; i++)
                if (h->slots[i].value)
                        *find(h, slots, size, entry_hash(h, &h->slots[i]), h->slots[i].key.s,
                              h->slots[i].key.u) = h->slots[i];
        free(h->slots);
        h->slots = slots;
        h->size = size;
        return 0;
}

static int put(Hashmap *h, const char *s, uint64_t u, void *value)
{
        if (!value)
                return -EINVAL;
        uint64_t hash = h->keys == HASHMAP_STRING ? hash_string(s) : hash_u64(u);
        if (h->size && find(h, h->slots, h->size, hash, s, u)->value)
                return -EEXIST;
        int r = grow(h);
        if (r < 0)
                return r;
        Entry *e = find(h, h->slots, h->size, hash, s, u);
        if (h->keys == HASHMAP_STRING)
                e->key.s = s;
        else
                e->key.u = u;
        e->value = value;
        h->n++;
        return 0;
}

static void *get(const Hashmap *h, const char *s, uint64_t u)
{
        if (!h->size)
                return NULL;
        uint64_t hash = h->keys == HASHMAP_STRING ? hash_string(s) : hash_u64(u);
        return find(h, h->slots, h->size, hash, s, u)->value;
}

static void *remove_(Hashmap *h, const char *s, uint64_t u)
{
        if (!h->size)
                return NULL;
        uint64_t hash = h->keys == HASHMAP_STRING ? hash_string(s) : hash_u64(u);
        Entry *e = find(h, h->slots, h->size, hash, s, u);
        void *value = e->value;
        if (!value)
                return NULL;
        e->value = NULL;
        h->n--;
        /* Backward shift: re-place the rest of the probe run so no lookup stops at the hole. */
        size_t mask = h->size - 1;
        for (size_t i = ((size_t)(e - h->slots) + 1) & mask; h->slots[i].value;
             i = (i + 1) & mask) {
                Entry x = h->slots[i];
                h->slots[i].value = NULL;
                *find(h, h->slots, h->size, entry_hash(h, &x), x.key.s, x.key.u) = x;
        }
        return value;
}

int hashmap_put(Hashmap *h, const char *key, void *value)
{
        return put(h, key, 0, value);
}
int hashmap_put_u64(Hashmap *h, uint64_t key, void *value)
{
        return put(h, NULL, key, value);
}
void *hashmap_get(const Hashmap *h, const char *key)
{
        return get(h, key, 0);
}
void *hashmap_get_u64(const Hashmap *h, uint64_t key)
{
        return get(h, NULL, key);
}
void *hashmap_remove(Hashmap *h, const char *key)
{
        return remove_(h, key, 0);
}
void *hashmap_remove_u64(Hashmap *h, uint64_t key)
{
        return remove_(h, NULL, key);
}
