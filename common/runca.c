/* SPDX-License-Identifier: MIT */
#include "common/runca.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>

#include "common/util.h"

#define VALID_BEFORE_SEC (60L * 60)       /* notBefore: an hour ago (clock skew) */
#define VALID_SEC        (2L * 24 * 3600) /* notAfter: two days on */

/* -EIO with OpenSSL's last reason (or what) in err. */
static int ssl_fail(char *err, size_t errlen, const char *what)
{
        unsigned long e = ERR_get_error();
        char reason[256] = "";
        if (e)
                ERR_error_string_n(e, reason, sizeof(reason));
        snprintf(err, errlen, "%s%s%s", what, e ? ": " : "", reason);
        ERR_clear_error();
        return -EIO;
}

/* A random positive 128-bit serial number (RFC 5280 §4.1.2.2: at most 20 octets). */
static int set_serial(X509 *x)
{
        unsigned char b[16];
        if (RAND_bytes(b, sizeof(b)) != 1)
                return -1;
        b[0] &= 0x7f;
        b[0] |= 0x01;
        BIGNUM *bn = BN_bin2bn(b, sizeof(b), NULL);
        int ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
        BN_free(bn);
        return ok ? 0 : -1;
}

/* Adds extension nid with value (as openssl.cnf would write it) to x, issued by issuer. */
static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
        X509V3_CTX ctx;
        X509V3_set_ctx_nodb(&ctx);
        X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
        X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
        if (!ext)
                return -1;
        int ok = X509_add_ext(x, ext, -1);
        X509_EXTENSION_free(ext);
        return ok ? 0 : -1;
}

/* A certificate for key with subject CN=cn, issued by issuer (NULL: itself), unsigned. */
static X509 *new_cert(EVP_PKEY *key, const char *cn, X509 *issuer)
{
        X509 *x = X509_new();
        X509_NAME *name = x ? X509_get_subject_name(x) : NULL;
        if (!x || X509_set_version(x, 2) != 1 || set_serial(x) < 0 ||
            !X509_gmtime_adj(X509_getm_notBefore(x), -VALID_BEFORE_SEC) ||
            !X509_gmtime_adj(X509_getm_notAfter(x), VALID_SEC) || X509_set_pubkey(x, key) != 1 ||
            X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, (const unsigned char *)"Pome", -1,
                                       -1, 0) != 1 ||
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1,
                                       0) != 1 ||
            X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name) != 1) {
                X509_free(x);
                return NULL;
        }
        return x;
}

/* PEM of a certificate or a private key, as a new string. */
static char *to_pem(X509 *x, EVP_PKEY *key)
{
        BIO *b = BIO_new(BIO_s_mem());
        char *data, *out = NULL;
        if (b && (x ? PEM_write_bio_X509(b, x)
                    : PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL)) == 1) {
                long n = BIO_get_mem_data(b, &data);
                if (n > 0)
                        out = strndup(data, (size_t)n);
        }
        BIO_free(b);
        return out;
}

int run_ca_make(const char *label, const char *const *names, RunCa *ret, char *err, size_t errlen)
{
        if (!names || !names[0])
                return -EINVAL;
        *ret = (RunCa){};
        EVP_PKEY *ca_key = EVP_EC_gen("P-256"), *leaf_key = EVP_EC_gen("P-256");
        X509 *ca = NULL, *leaf = NULL;
        char *san = NULL, *chain = NULL, *leaf_pem = NULL;
        size_t san_len = 0;
        int r = -EIO;
        char cn[128];
        snprintf(cn, sizeof(cn), "Pome run %s", label ? label : "CA");
        if (!ca_key || !leaf_key) {
                r = ssl_fail(err, errlen, "cannot make an EC P-256 key");
                goto out;
        }
        ca = new_cert(ca_key, cn, NULL);
        if (!ca || add_ext(ca, ca, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
            add_ext(ca, ca, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
            add_ext(ca, ca, NID_subject_key_identifier, "hash") < 0 ||
            X509_sign(ca, ca_key, EVP_sha256()) <= 0) {
                r = ssl_fail(err, errlen, "cannot make the run's CA certificate");
                goto out;
        }
        FILE *f = open_memstream(&san, &san_len);
        if (!f) {
                r = -ENOMEM;
                goto out;
        }
        for (const char *const *n = names; *n; n++)
                fprintf(f, "%sDNS:%s", n == names ? "" : ",", *n);
        if (fclose(f) != 0) {
                r = -ENOMEM;
                goto out;
        }
        leaf = new_cert(leaf_key, names[0], ca);
        if (!leaf || add_ext(leaf, ca, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
            add_ext(leaf, ca, NID_key_usage, "critical,digitalSignature") < 0 ||
            add_ext(leaf, ca, NID_ext_key_usage, "serverAuth") < 0 ||
            add_ext(leaf, ca, NID_subject_alt_name, san) < 0 ||
            add_ext(leaf, ca, NID_authority_key_identifier, "keyid:always") < 0 ||
            X509_sign(leaf, ca_key, EVP_sha256()) <= 0) {
                r = ssl_fail(err, errlen, "cannot make the run's server certificate");
                goto out;
        }
        ret->ca_pem = to_pem(ca, NULL);
        leaf_pem = to_pem(leaf, NULL);
        ret->leaf_key_pem = to_pem(NULL, leaf_key);
        if (!ret->ca_pem || !leaf_pem || !ret->leaf_key_pem ||
            asprintf(&chain, "%s%s", leaf_pem, ret->ca_pem) < 0) {
                chain = NULL;
                r = -ENOMEM;
                goto out;
        }
        ret->leaf_chain_pem = TAKE_PTR(chain);
        r = 0;
out:
        free(san);
        free(leaf_pem);
        X509_free(ca);
        X509_free(leaf);
        EVP_PKEY_free(ca_key);
        EVP_PKEY_free(leaf_key);
        if (r < 0)
                run_ca_done(ret);
        return r;
}

void run_ca_done(RunCa *ca)
{
        if (ca->leaf_key_pem)
                explicit_bzero(ca->leaf_key_pem, strlen(ca->leaf_key_pem));
        free(ca->ca_pem);
        free(ca->leaf_chain_pem);
        free(ca->leaf_key_pem);
        *ca = (RunCa){};
}
