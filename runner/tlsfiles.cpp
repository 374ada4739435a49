/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner/tlsfiles.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

namespace cuvrun {

namespace {

/* OpenSSL's reason for the last error on this thread, its queue then emptied */
std::string openssl_reason ()
{
  const unsigned long e = ERR_peek_last_error ();
  const char *reason = e ? ERR_reason_error_string (e) : nullptr;
  ERR_clear_error ();
  return reason ? reason : "no reason given";
}

/* The certificates in the PEM file @path (a CRL or a key alone hold none) */
int certificates_in (const std::string &path)
{
  BIO *bio = BIO_new_file (path.c_str (), "r");
  STACK_OF (X509_INFO) *infos = bio ? PEM_X509_INFO_read_bio (bio, nullptr, nullptr, nullptr) : nullptr;
  int n = 0;
  for (int i = 0; infos && i < sk_X509_INFO_num (infos); i++)
    n += sk_X509_INFO_value (infos, i)->x509 != nullptr;
  if (infos)
    sk_X509_INFO_pop_free (infos, X509_INFO_free);
  BIO_free (bio);
  ERR_clear_error ();
  return n;
}

/* a key that asks for a passphrase fails to load instead of prompting on the terminal */
int no_passphrase (char *, int, int, void *)
{
  return 0;
}

}  // namespace

bool tls_files_load (const BrokerConfig &broker, std::string *key, std::string *why)
{
  if (!broker.tls)
    return true;
  SSL_CTX *ctx = SSL_CTX_new (TLS_client_method ());
  if (!ctx) {
    *key = "tls";
    *why = "OpenSSL cannot make a TLS client (" + openssl_reason () + ")";
    return false;
  }
  SSL_CTX_set_default_passwd_cb (ctx, no_passphrase);
  const std::string &ca = broker.tls_ca_file, &cert = broker.tls_cert_file, &pkey = broker.tls_key_file;
  bool ok = false;
  /* the key before the certificate: a certificate that does not fit a loaded key drops it, where
   * a key that does not fit a loaded certificate fails to load with "key values mismatch" */
  if (!ca.empty () && SSL_CTX_load_verify_locations (ctx, ca.c_str (), nullptr) != 1)
    *key = "tls-ca-file", *why = "'" + ca + "' is not a file of PEM certificates OpenSSL reads (OpenSSL: " +
        openssl_reason () + ")";
  else if (!ca.empty () && certificates_in (ca) == 0)
    *key = "tls-ca-file", *why = "'" + ca + "' holds no certificate (a CRL or a key alone verifies no broker)";
  else if (!pkey.empty () && SSL_CTX_use_PrivateKey_file (ctx, pkey.c_str (), SSL_FILETYPE_PEM) != 1)
    *key = "tls-key-file", *why = "'" + pkey + "' is not a PEM private key that opens without a passphrase (OpenSSL: " +
        openssl_reason () + ")";
  else if (!cert.empty () && SSL_CTX_use_certificate_chain_file (ctx, cert.c_str ()) != 1)
    *key = "tls-cert-file", *why = "'" + cert + "' is not a PEM certificate (OpenSSL: " + openssl_reason () + ")";
  else if (!pkey.empty () && SSL_CTX_check_private_key (ctx) != 1)
    *key = "tls-key-file", *why = "'" + pkey + "' is not the key of tls-cert-file's certificate ('" + cert + "')";
  else
    ok = true;
  ERR_clear_error ();
  SSL_CTX_free (ctx);
  return ok;
}

}  // namespace cuvrun
