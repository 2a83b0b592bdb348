/* SPDX-License-Identifier: MIT */
/*
 * What a ledger implementation (ledger.c's local one, ledger-etcd.c) fills in: the ledger.h
 * calls, dispatched. Private to those files.
 */
#pragma once

#include "supervisor/ledger.h"

typedef struct LedgerOps {
        const char *kind; /* ledger_kind() */
        int (*take)(Ledger *l, Team *t, const char *sid, char *why, size_t why_len);
        void (*release)(Ledger *l, Team *t, const char *sid);
        int (*leave)(Ledger *l);
        json_t *(*status)(const Ledger *l);
        void (*metrics)(const Ledger *l, FILE *f); /* may be NULL */
        void (*free)(Ledger *l);
} LedgerOps;

/* The first member of each implementation's struct. */
struct Ledger {
        const LedgerOps *ops;
};
