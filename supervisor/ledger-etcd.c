/* SPDX-License-Identifier: MIT */
/* The etcd ledger (placeholder until it lands: refuses to start). */
#include <errno.h>
#include <stdio.h>

#include "common/util.h"
#include "supervisor/ledger-impl.h"

int ledger_new_etcd(const FleetConfig *fc _unused_, Teams *ts _unused_, sd_event *e _unused_,
                    const LedgerHooks *hooks _unused_, void *userdata _unused_,
                    Ledger **ret _unused_, char *why, size_t why_len)
{
        snprintf(why, why_len, "the etcd ledger is not built in");
        return -EOPNOTSUPP;
}
