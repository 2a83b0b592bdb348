/* SPDX-License-Identifier: MIT */
/*
 * The agent pod's only ways out (issue 24, DESIGN.md "The agent pod"), run by pome on its
 * sd-event loop over listening sockets made inside the pod's network namespace
 * (agentpod.h):
 *
 *   - a forward: each connection accepted on a listener is joined to a connection pome
 *     opens to a fixed host:port (a twin: pomed's gateway, or an in-process twin of
 *     --local), bytes copied both ways until either side closes;
 *   - a TLS listener: pome ends the agent's TLS itself (a certificate for the vendors' own
 *     names, signed by a CA only the pod trusts), the server name the agent asked for (SNI)
 *     picks a route, and the plaintext is joined to a connection to the route's host:port
 *     as a forward's bytes are, so `https://api.github.com` inside the pod reaches the
 *     GitHub twin;
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
 * is not held) and for a TLS handshake (then a close), connect_usec from the decision to
 * the connection being made, name resolution included (then 504 from the proxy, a close
 * from a forward or a TLS listener). The defaults are AGENT_NET_HEAD_TIMEOUT_USEC and
 * AGENT_NET_CONNECT_TIMEOUT_USEC; tests shorten them.
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

/* A name a TLS listener serves, and where its plaintext goes. */
typedef struct AgentNetRoute {
        const char *name; /* a TLS server name: "api.github.com", or "*.slack.com" (its
                           * subdomains, at any depth, not itself) */
        const char *host; /* an IP literal, or a name resolved as a forward's is */
        uint16_t port;
        const char *label; /* names it in the report ("github twin"); may be NULL */
} AgentNetRoute;

/*
 * Ends TLS on listen_fd (taken, also on error) for the names of routes (n_routes of them,
 * copied; none: every handshake fails), presenting cert_pem (PEM text: the leaf first, then
 * the chain up to and with its CA) with key_pem (PEM text: the leaf's private key). 0,
 * -EINVAL with why in err (errlen bytes) for a route whose name is not a host name or a "*."
 * suffix, whose host is neither an address nor a host name, or whose port is 0 (`TLS route
 * "name": why`), or for a certificate, chain or key that does not load or a key that is not
 * the leaf's (`TLS certificate: why`, `TLS certificate chain: why`, `TLS key: why`, with
 * OpenSSL's reason; an encrypted key is refused), -ENOMEM, or sd-event's errno.
 *
 * Each connection: a TLS 1.2 or 1.3 server handshake (RFC 8446, RFC 5246; no renegotiation,
 * no session resumption: every handshake is a full one) within the head deadline, else a
 * close. The client's server name (RFC 6066 §3: compared case-insensitively, a trailing dot
 * dropped) picks the route: an exact name first, else the first "*." route that takes it.
 * No server name, or one no route serves, fails the handshake with an unrecognized_name
 * alert. ALPN (RFC 7301): "http/1.1" is chosen when the client offers it, the handshake
 * fails with no_application_protocol when it offers only others (h2: pome passes HTTP/1.1
 * bytes through and never speaks HTTP/2), and none is chosen when it offers none. Then pome
 * connects to the route's host:port (the connect deadline, as a forward) and passes the
 * plaintext both ways as a forward does: the client's close_notify or its TCP EOF becomes
 * a shutdown(SHUT_WR) of the host's side, the host's EOF a close_notify (then a TCP FIN) to
 * the client, each once the bytes before it are delivered. The host's connection is plain
 * TCP: the route's host is pome's to trust (a twin, on the host's loopback).
 */
int agent_net_tls(AgentNet *n, int listen_fd, const char *cert_pem, const char *key_pem,
                  const AgentNetRoute *routes, size_t n_routes, char *err, size_t errlen);

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
 * What was recorded, as JSON for meta.json: {connections: [{via: "forward"|"tls"|"proxy",
 * label?, host, port, method?: "CONNECT"|"GET"…, allowed, status?, why?, bytes_up,
 * bytes_down, at: RFC 3339}, …], refused: N, allowed: N, dropped: N (past
 * AGENT_NET_RECORDS_MAX)}, in the order the connections were decided. host is as asked
 * (lower case, no trailing dot, an IPv6 address without brackets); for a 400 it is the host
 * as written when the target had one that did not parse ("2130706433"; printable ASCII, 255
 * bytes at most) and port is absent, and both are absent when there was none (its why says
 * what was wrong). For a proxy request that never had a whole head, why says so.
 *
 * "tls" (agent_net_tls): host is the server name the client asked for ("(no SNI)" when it
 * sent none; absent when no ClientHello came), port and label the route's (port absent when
 * no route served the name); allowed is false when the handshake failed or no route served
 * the name, with why (the TLS alert or OpenSSL's reason). A forward's label is the
 * listener's.
 *
 * status is the answer the proxy gave itself (200 for a CONNECT tunnel, 400, 403, 408, 431,
 * 502, 504), absent when the host's own answer was relayed and for forwards and TLS; why
 * says why a connection was refused or failed. bytes_up are the bytes pome wrote to the host
 * (a rewritten request head included), bytes_down the bytes it wrote to the agent from the
 * host (the proxy's own answers not included; over TLS, plaintext bytes both ways), live
 * while the connection lasts. at is when it was accepted (UTC, milliseconds). A new
 * reference, NULL on OOM.
 */
json_t *agent_net_report(const AgentNet *n);

/*
 * The connections not let through so far (every record with allowed false: a refused host,
 * a bad or missing request head, a failed TLS handshake or a server name no route serves),
 * past the cap included, for a quick check.
 */
size_t agent_net_refused(const AgentNet *n);

/* Frees n (agent_net_stop first). Accepts NULL; returns NULL. */
AgentNet *agent_net_free(AgentNet *n);
