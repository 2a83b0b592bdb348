/* SPDX-License-Identifier: MIT */
/*
 * A certificate authority made for one `pome run` (issue 24, DESIGN.md "The agent pod"): the
 * sealed agent's pod trusts it (its CA bundle) and nothing else does, and pome serves the
 * vendors' own names (api.github.com, slack.com, api.stripe.com) to the agent with a leaf it
 * signs, terminating TLS in front of the twins. The CA's private key never leaves
 * run_ca_make: only the leaf's is kept, for pome's TLS server.
 *
 * Both are ECDSA P-256 with SHA-256 signatures, valid from an hour ago for two days (a run
 * lasts at most 30 minutes); the CA has basicConstraints CA:TRUE, pathlen 0, keyUsage
 * keyCertSign and cRLSign; the leaf CA:FALSE, digitalSignature, extendedKeyUsage serverAuth
 * and every name as a subjectAltName dNSName, as the CA/Browser Forum's baseline
 * requirements shape a server certificate (what Node, Python, curl and Go all accept).
 */
#pragma once

#include <stddef.h>

typedef struct RunCa {
        char *ca_pem;         /* the CA certificate, PEM: what the pod trusts */
        char *leaf_chain_pem; /* the leaf, then the CA, PEM: what pome's TLS server presents */
        char *leaf_key_pem;   /* the leaf's private key, PKCS#8 PEM (secret: wipe it) */
} RunCa;

/*
 * Makes a CA and a leaf for names (NULL-terminated, at least one; a "*.example.com" entry is
 * a wildcard name). label goes into the CA's common name ("Pome run ses_…"). Returns 0 with
 * *ret filled (free with run_ca_done), -EINVAL for no names, -ENOMEM, or -EIO with
 * OpenSSL's reason in err (errlen bytes).
 */
int run_ca_make(const char *label, const char *const *names, RunCa *ret, char *err, size_t errlen);

/* Frees what ret holds, the leaf key wiped first. Accepts a zeroed RunCa. */
void run_ca_done(RunCa *ca);
