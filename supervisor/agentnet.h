/* SPDX-License-Identifier: MIT */
/*
 * The agent pod's only ways out (issue 24, DESIGN.md "The agent pod"), run by pome on its
 * sd-event loop over listening sockets made inside the pod's network namespace
 * (agentpod.h):
 *
 *   - a forward: each connection accepted on a listener is joined to a connection pome
 *     opens to a fixed host:port (a twin: pomed's gateway, or an in-process twin of
 *     --local), bytes copied both ways until either side closes;
 *   - the proxy: an HTTP proxy (HTTP_PROXY/HTTPS_PROXY inside the pod) that takes
 *     `CONNECT host:port` (then a tunnel) and absolute-form requests (`GET http://host/…`,
 *     forwarded as origin-form with the request's bytes as they came) for the hosts of an
 *     allow-list only. An allow-list entry is a host name ("api.anthropic.com", matched
 *     case-insensitively and without a trailing dot), a suffix ("*.anthropic.com": its
 *     subdomains, not itself) or either with ":port" (else any port). An address literal
 *     (IPv4, [IPv6]) is allowed only when the list names it: a raw IP does not pass as a
 *     host name. A refused request gets 403 with why, and is recorded.
 *
 * Every connection (forward or proxy, allowed or refused) is recorded: what the agent asked
 * for, what it was told, bytes each way, and when (agent_net_report), so a run shows what
 * its agent reached and what it tried to reach.
 */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#define AGENT_NET_HEADER_MAX           (16u << 10) /* bytes of a proxy request's head */
#define AGENT_NET_RECORDS_MAX          10000u      /* connections recorded (then counted only) */
#define AGENT_NET_HEAD_TIMEOUT_USEC    (10 * UINT64_C(1000000)) /* a proxy request's whole head */
#define AGENT_NET_CONNECT_TIMEOUT_USEC (30 * UINT64_C(1000000)) /* to resolve and connect */

typedef struct AgentNet AgentNet;

/* A new set of ways out on loop e. 0 or -ENOMEM. */
int agent_net_new(sd_event *e, AgentNet **ret);

/*
 * Changes the deadlines of connections accepted from now on, in µs (0 keeps the current one):
 * head_usec for a proxy request's whole head (then 408 and close: a slow or silent client
 * is not held), connect_usec from the decision to the connection being made, name
 * resolution included (then 504 from the proxy, a close from a forward). The defaults are
 * AGENT_NET_HEAD_TIMEOUT_USEC and AGENT_NET_CONNECT_TIMEOUT_USEC; tests shorten them.
 */
void agent_net_set_deadlines(AgentNet *n, uint64_t head_usec, uint64_t connect_usec);

/*
 * Forwards every connection accepted on listen_fd (taken: n closes it, also on error) to
 * host:port (an IP literal, or a name resolved by pome's resolver when each connection is
 * made, on a thread: never on the loop) in pome's own network, bytes both ways with
 * half-closes passed on, until both sides are done or one fails. label names it in the
 * report ("github twin"). 0, -EINVAL (port 0, a host that is neither an address nor a host
 * name), -ENOMEM, or sd-event's errno.
 */
int agent_net_forward(AgentNet *n, int listen_fd, const char *host, uint16_t port,
                      const char *label);

/*
 * Serves the HTTP proxy on listen_fd (taken, also on error) for the hosts of allow
 * (NULL-terminated; NULL or empty: none). 0, -EINVAL for an entry that is not a host, a "*."
 * suffix, or either with ":port" (with why in err, errlen bytes: `--allow-net "x": why`),
 * -ENOMEM, or sd-event's errno.
 *
 * One request per connection: its head (RFC 9112 §2–§5; CRLF or bare LF lines, empty lines
 * before the request line skipped) of at most AGENT_NET_HEADER_MAX bytes (else 431) within
 * the head deadline (else 408), then:
 *   - `CONNECT host:port` (RFC 9110 §9.3.6; authority-form, RFC 9112 §3.2.3, port required):
 *     allowed → pome connects, answers `200 Connection Established` and tunnels bytes both
 *     ways, those that came after the head first;
 *   - an absolute-form `http://host[:port]/path?query` target (RFC 9112 §3.2.2; port 80 by
 *     default): allowed → sent to the host with the target in origin-form ("/" for an empty
 *     path), the received Host dropped and one made from the target (§3.2.2 requires it),
 *     the hop-by-hop fields dropped (RFC 9110 §7.6.1: Connection, Proxy-Connection,
 *     Keep-Alive, TE, Upgrade, Proxy-Authorization), `Connection: close` added, the other
 *     fields and the body's bytes as received; the host's answer comes back unparsed and
 *     the connection ends with the host's, so every byte on a connection goes to the host
 *     its one head named;
 *   - a host off the allow-list → 403 with a text body saying what the pod may reach and
 *     `pass --allow-net HOST`;
 *   - anything else → 400 with why: an origin-form or `*` target, an https:// or other
 *     scheme in absolute-form (HTTPS goes through CONNECT), user information, a fragment,
 *     a host that is neither a name nor an address (a numeric name such as "127.1" or
 *     "2130706433" included), a malformed request line or field line (obs-fold, a bare CR,
 *     a NUL), a version other than HTTP/1.0 and HTTP/1.1.
 * An allowed host that cannot be reached gets 502 (504 past the connect deadline). Every
 * answer of the proxy's own says `Connection: close`, and the connection closes after it.
 * Names are resolved by pome's resolver in pome's network, on a thread (never on the loop).
 */
int agent_net_proxy(AgentNet *n, int listen_fd, char *const *allow, char *err, size_t errlen);

/* Closes every listener and connection (the pod is gone). Recorded connections stay. */
void agent_net_stop(AgentNet *n);

/*
 * What was recorded, as JSON for meta.json: {connections: [{via: "forward"|"proxy", label?,
 * host, port, method?: "CONNECT"|"GET"…, allowed, status?, why?, bytes_up, bytes_down, at:
 * RFC 3339}, …], refused: N, allowed: N, dropped: N (past AGENT_NET_RECORDS_MAX)}, in the
 * order the connections were decided. host is as asked (lower case, no trailing dot, an
 * IPv6 address without brackets); for a 400 it is the host as written when the target had
 * one that did not parse ("2130706433"; printable ASCII, 255 bytes at most) and port is
 * absent, and both are absent when there was none (its why says what was wrong). For a
 * proxy request that never had a whole head, why says so. status is the answer the proxy
 * gave itself (200 for a CONNECT tunnel, 400, 403, 408, 431, 502, 504), absent when the
 * host's own answer was relayed; why says why a connection was refused or failed. bytes_up
 * are the bytes pome wrote to the host (a rewritten request head included), bytes_down the
 * bytes it wrote to the agent from the host (the proxy's own answers not included), live
 * while the connection lasts. at is when it was accepted (UTC, milliseconds). A new
 * reference, NULL on OOM.
 */
json_t *agent_net_report(const AgentNet *n);

/*
 * The connections not let through so far (every record with allowed false: a refused host,
 * a bad or missing request head), past the cap included, for a quick check.
 */
size_t agent_net_refused(const AgentNet *n);

/* Frees n (agent_net_stop first). Accepts NULL; returns NULL. */
AgentNet *agent_net_free(AgentNet *n);
