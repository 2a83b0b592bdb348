/* SPDX-License-Identifier: MIT */
/*
 * pomed's D-Bus surface (DESIGN.md "Surfaces"), the only module that includes sd-bus:
 *
 *   sh.pome.Supervisor1 at /sh/pome/Supervisor1
 *     ListTeams() → a(suuso), ListSandboxes(s state) → a(ssssstt),
 *     StopSandbox(s id, b discard), SetQuota(s team, u quota),
 *     signal SandboxStateChanged(s id, s team, s state, s reason),
 *     properties Version, MissingLayers
 *   sh.pome.Team1 at /sh/pome/Supervisor1/team/<escaped id>, one per team
 *     properties Id, SessionsUsed, SessionsQuota, PlanTier (PropertiesChanged on change)
 *
 * Reads are open to everyone; StopSandbox and SetQuota are for root, enforced here as well
 * as by packaging/dbus/sh.pome.Supervisor1.conf. A bus that is missing, drops us or refuses
 * the name is logged and retried on a timer: pomed keeps serving HTTP meanwhile.
 */
#pragma once

#include <systemd/sd-event.h>

#include "supervisor/manager.h"

typedef struct Bus Bus;

/*
 * Starts the D-Bus surface on spec: "system", "user" or a D-Bus address such as
 * "unix:path=/run/pome/bus"; "none" (or NULL) disables D-Bus and returns 0 with *ret = NULL.
 * The first connection attempt happens now, later ones on a timer of e (1 s, doubling up to
 * 60 s); failing to connect or to own the name is logged, never returned. m must outlive the
 * Bus. Returns 0, -EINVAL (spec is none of the above; nothing is logged), -ENOMEM.
 */
int bus_new(sd_event *e, Manager *m, const char *spec, Bus **ret);

/*
 * Flushes and closes the connection. StopSandbox calls still waiting for a teardown get an
 * error reply. Call it before manager_free(): sandboxes being stopped for a D-Bus caller hold
 * the Bus as their teardown waiter's userdata. Accepts NULL; returns NULL.
 */
Bus *bus_free(Bus *b);

/*
 * fn(userdata) runs each time pomed owns sh.pome.Supervisor1 on the bus (the first time and
 * after every reconnect): what main waits for before READY=1. The first RequestName reply
 * arrives on the loop, so setting this right after bus_new() misses nothing.
 */
void bus_set_acquired_handler(Bus *b, void (*fn)(void *userdata), void *userdata);

/* For ManagerObserver.state_changed: emits SandboxStateChanged. b may be NULL (no D-Bus). */
void bus_sandbox_changed(Bus *b, Sandbox *s);

/*
 * For ManagerObserver.team_changed: emits one PropertiesChanged on t's object naming exactly
 * the properties whose values differ from the ones last announced (none: no signal). b may
 * be NULL.
 */
void bus_team_changed(Bus *b, Team *t);
