/* SPDX-License-Identifier: MIT */
/*
 * The slot ledger (DESIGN.md "Where the next parts live"): who holds which of a team's
 * concurrency slots (sessions_quota). One interface, two implementations; nothing else in
 * pomed knows which is on:
 *   - the local ledger (ledger.c, the default): slots counted in this pomed's memory;
 *   - the etcd ledger (ledger-etcd.c, pomed.conf `fleet:`): one key per slot,
 *     <prefix>/slots/<team>/<sid>, bound to this node's lease and admitted by one etcd
 *     transaction, so a team's quota holds across every pomed of a fleet; this node's
 *     membership is <prefix>/nodes/<node> on the same lease, and teams and their keys are
 *     read and watched under <prefix>/teams/ (docs/fleet.md).
 *
 * Counts: Team.used is the team's slots in use everywhere the ledger sees (local: this pomed;
 * etcd: the fleet, as last read or watched), Team.used_here this pomed's. Either ledger sets
 * them through teams_set_used(), which tells the teams' observer (D-Bus, STATUS=).
 *
 * Threads: every function here runs on the sd-event loop's thread, and so does every hook.
 * The etcd ledger's background work (keeping its lease alive, the watch) runs on a thread of
 * its own and reaches the loop through an event source; no Team is touched off the loop.
 */
#pragma once

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-event.h>

#include "supervisor/config.h"
#include "supervisor/teams.h"

typedef struct Ledger Ledger;

typedef struct LedgerHooks {
        /*
         * Slots this node held were lost for good: its lease expired while the ledger was out
         * of reach, and on its return the team had no room to take them again (others were
         * admitted meanwhile). The sandbox sid must end (reason slot_lost); its slot is already
         * gone, so the manager must not release it. May be NULL.
         */
        void (*slot_lost)(const char *sid, void *userdata);
        /*
         * The ledger's teams changed (etcd: a put or delete under <prefix>/teams/, or the first
         * read at start): teams[0..n) is the whole new list, borrowed for the call, applied as
         * a reload applies pomed.conf's. May be NULL.
         */
        void (*teams_changed)(const TeamConfig *teams, size_t n, void *userdata);
} LedgerHooks;

/* The default: slots counted here. ts is borrowed and must outlive the ledger. 0 or -ENOMEM. */
int ledger_new_local(Teams *ts, Ledger **ret);

/*
 * The fleet's ledger on etcd (fc from pomed.conf `fleet:`; copied). Before returning it joins:
 * grants this node's lease (revoking the one a previous run of the same node left, read from
 * <prefix>/nodes/<node>, so a restart within the TTL counts nothing twice), writes the
 * membership key, reads the teams (hooks->teams_changed is called before this returns) and the
 * slot counts, and starts keeping the lease alive and watching. ts, e and hooks are borrowed
 * and must outlive the ledger. Returns 0; -EHOSTUNREACH, -ETIMEDOUT or -ECONNREFUSED when no
 * endpoint answers (why says which and how), -EPROTO for an answer that is not etcd's,
 * -EADDRINUSE when another pomed (another host's, or one running here) is fleet.node now,
 * -ENOMEM.
 */
int ledger_new_etcd(const FleetConfig *fc, Teams *ts, sd_event *e, const LedgerHooks *hooks,
                    void *userdata, Ledger **ret, char *why, size_t why_len);

/* Stops the background work and frees; slots are not released (see ledger_leave). NULL-safe. */
Ledger *ledger_free(Ledger *l);

/*
 * Takes one of team t's slots for sandbox sid (ses_…, unique). Returns:
 *   0             taken; Team.used and Team.used_here counted;
 *   -EDQUOT       the team's slots are all in use (t->used says how many, fleet-wide);
 *   -EHOSTUNREACH the ledger cannot say (etcd out of reach, no quorum, this node's lease
 *                 lost): why says what failed, in a sentence an operator can act on. Nothing
 *                 is admitted that the ledger did not admit.
 *   -ENOMEM.
 * May block the loop for at most FleetConfig.timeout_usec (one etcd transaction, retried
 * while other nodes' admissions race it).
 */
int ledger_take(Ledger *l, Team *t, const char *sid, char *why, size_t why_len);

/* Gives back sid's slot (taken by ledger_take, not lost). Never blocks; never fails (a slot
 * the etcd ledger cannot delete goes with its lease). A sid this node does not hold (lost, or
 * never taken) is nothing to give back. */
void ledger_release(Ledger *l, Team *t, const char *sid);

/*
 * Leaves the fleet cleanly (`systemctl stop`, after the drain): every slot of this node and
 * its membership go at once (the lease is revoked). Local: nothing to do. Blocks for at most
 * FleetConfig.timeout_usec. 0 or a negative errno (the slots then go with the lease's TTL).
 */
int ledger_leave(Ledger *l);

/* "local" or "etcd". */
const char *ledger_kind(const Ledger *l);

/*
 * The ledger's state, for /healthz: {"ledger": "local"} or {"ledger":
 * "etcd", "node", "endpoints", "reachable", "lease_id", "lease_ttl_ms",
 * "last_renewed_ms_ago", "error"?}. New reference, NULL on -ENOMEM.
 */
json_t *ledger_status_json(const Ledger *l);

/*
 * Appends the ledger's own lines to GET /metrics (Prometheus text exposition): the etcd
 * ledger's pome_ledger_reachable, pome_ledger_txn_seconds (a summary of admission
 * transactions), pome_ledger_txn_retries_total, pome_ledger_refused_total{reason}; the local
 * ledger none.
 */
void ledger_write_metrics(const Ledger *l, FILE *f);
