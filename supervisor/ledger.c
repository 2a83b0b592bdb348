/* SPDX-License-Identifier: MIT */
/* The ledger.h calls, dispatched, and the local ledger: slots counted in this pomed. */
#include "supervisor/ledger.h"

#include <errno.h>
#include <stdlib.h>

#include "common/util.h"
#include "supervisor/ledger-impl.h"

int ledger_take(Ledger *l, Team *t, const char *sid, char *why, size_t why_len)
{
        return l->ops->take(l, t, sid, why, why_len);
}

void ledger_release(Ledger *l, Team *t, const char *sid)
{
        l->ops->release(l, t, sid);
}

int ledger_leave(Ledger *l)
{
        return l->ops->leave(l);
}

const char *ledger_kind(const Ledger *l)
{
        return l->ops->kind;
}

json_t *ledger_status_json(const Ledger *l)
{
        return l->ops->status(l);
}

void ledger_write_metrics(const Ledger *l, FILE *f)
{
        if (l->ops->metrics)
                l->ops->metrics(l, f);
}

Ledger *ledger_free(Ledger *l)
{
        if (l)
                l->ops->free(l);
        return NULL;
}

/* ---- the local ledger ---- */

typedef struct LocalLedger {
        Ledger base;
        Teams *teams;
} LocalLedger;

static int local_take(Ledger *l, Team *t, const char *sid _unused_, char *why _unused_,
                      size_t why_len _unused_)
{
        LocalLedger *ll = (LocalLedger *)l;
        if (t->used >= t->quota)
                return -EDQUOT;
        teams_set_used(ll->teams, t, t->used + 1, t->used_here + 1);
        return 0;
}

static void local_release(Ledger *l, Team *t, const char *sid _unused_)
{
        LocalLedger *ll = (LocalLedger *)l;
        teams_set_used(ll->teams, t, t->used ? t->used - 1 : 0,
                       t->used_here ? t->used_here - 1 : 0);
}

static int local_leave(Ledger *l _unused_)
{
        return 0;
}

static json_t *local_status(const Ledger *l _unused_)
{
        return json_pack("{s:s}", "ledger", "local");
}

static void local_free(Ledger *l)
{
        free(l);
}

static const LedgerOps local_ops = {
        .kind = "local",
        .take = local_take,
        .release = local_release,
        .leave = local_leave,
        .status = local_status,
        .free = local_free,
};

int ledger_new_local(Teams *ts, Ledger **ret)
{
        LocalLedger *ll = calloc(1, sizeof(*ll));
        if (!ll)
                return -ENOMEM;
        ll->base.ops = &local_ops;
        ll->teams = ts;
        *ret = &ll->base;
        return 0;
}
