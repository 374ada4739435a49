/* cudavision-run: the broker's TLS files read as libmosquitto reads them at each connect (OpenSSL,
 * PEM), so that a file it cannot read, or a key that is not the certificate's, stops `--check` and
 * the start with the config's line instead of failing every connect with a TLS error.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <string>

#include "runner/siteconfig.h"

namespace cuvrun {

/* Whether @broker's TLS files load as libmosquitto loads them: tls-ca-file as PEM certificates,
 * tls-cert-file as a PEM chain, tls-key-file as a PEM key without a passphrase (the runner has
 * none to give) that belongs to that certificate. Else false, with @key the config key at fault
 * and @why what is wrong, in OpenSSL's words where it gives them. */
bool tls_files_load (const BrokerConfig &broker, std::string *key, std::string *why);

}  // namespace cuvrun
