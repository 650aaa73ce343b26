// Mutual TLS derived from a cluster secret, so that the secret itself never goes on the wire.
//
// Every process that holds the secret computes the same cluster CA: an Ed25519 key whose 32
// bytes are HKDF-SHA256 of the secret (with a fixed salt and label), and a self-signed
// certificate whose every field is fixed (Ed25519 signatures are deterministic), so all
// processes get byte-identical CA certificates without exchanging anything. Each process then
// issues itself a certificate, in memory, for a fresh P-256 key, signed by that CA: servers put
// the names their clients dial in it (subjectAltName), clients need none. A peer proves it
// holds the secret by presenting a certificate the CA signed; nothing that would let a
// listener sign one is ever sent.
//
//   SL_ASSIGN_OR_RETURN(DerivedTls tls, DeriveTls(secret, {"10.0.0.2"}));
//   // tls.ca_pem is the trust root, tls.cert_pem/tls.key_pem this process's identity.
#ifndef SLUICE_RPC_DERIVED_TLS_H_
#define SLUICE_RPC_DERIVED_TLS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sluice {

// The subject organization of every derived certificate; a server tells callers holding one
// (one shared identity: the secret says who may call, not who calls) from named ones.
inline constexpr char kDerivedTlsOrganization[] = "sluice cluster (derived from its secret)";

// How long a process's own certificate is valid. It lives only in the process's memory and
// dies with it; the figure bounds how long a server may run between restarts.
inline constexpr absl::Duration kDerivedCertificateLifetime = absl::Hours(24 * 400);

struct DerivedTls {
  std::string ca_pem;    // The cluster CA's certificate: identical in every process.
  std::string cert_pem;  // This process's certificate, signed by the CA.
  std::string key_pem;   // Its private key (PKCS#8), never written anywhere.
  std::string ca_fingerprint;  // First 8 bytes of SHA-256 of the CA's public key, in hex.
};

// `names`: host names or IP addresses for the certificate's subjectAltName (a server's
// address as clients dial it; a loopback name brings the other loopback names along, a host
// name its addresses). Empty for a client-only certificate.
absl::StatusOr<DerivedTls> DeriveTls(absl::string_view secret, const std::vector<std::string>& names,
                                     absl::Time now = absl::Now());

// The host of "host:port", "[v6]:port" or a bare host, without brackets.
std::string HostOfAddress(absl::string_view address);

}  // namespace sluice

#endif  // SLUICE_RPC_DERIVED_TLS_H_
