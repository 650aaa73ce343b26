// Who may call a Sluice server: peers that complete a TLS handshake with a client certificate
// the cluster's CA signed. The CA and the certificates come either from a cluster secret (each
// process derives them itself, rpc/derived_tls.h: the secret never leaves the process) or from
// PEM files. Every channel this process opens presents the process's settings; `sluice serve`
// requires one of them unless told --insecure.
//
//   GrpcSecurity s;                                   // Or GrpcSecurityFromEnvironment().
//   SL_ASSIGN_OR_RETURN(s.secret, ReadSecretFile("/etc/sluice/secret"));
//   SL_RETURN_IF_ERROR(UseTlsFromSecret({"10.0.0.2"}, &s));  // A server: the names clients dial.
//   SetProcessGrpcSecurity(s);                        // Channels to peers present it.
//   builder.AddListeningPort(address, ServerCredentials(s));
//   service.set_security(s);                          // Calls without a certificate: refused.
//
// Environment (read once, by any process that has not set its own): SLUICE_CLUSTER_SECRET
// (the secret itself) or SLUICE_CLUSTER_SECRET_FILE (a file holding it), and SLUICE_TLS_CERT,
// SLUICE_TLS_KEY, SLUICE_TLS_CA (PEM files: this process's certificate and key, and the CA
// that signed every task's and client's certificate). With the files, the secret is not used.
#ifndef SLUICE_RPC_GRPC_SECURITY_H_
#define SLUICE_RPC_GRPC_SECURITY_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice {

// The request metadata key in which clients before derived TLS sent the cluster secret itself.
// Servers refuse every call that carries it (rpc/grpc_security.cc says how to upgrade).
inline constexpr char kLegacyClusterSecretMetadataKey[] = "sluice-cluster-secret";

struct GrpcSecurity {
  std::string secret;        // Empty: none.
  std::string tls_cert_pem;  // With tls_key_pem and tls_ca_pem: TLS both ways.
  std::string tls_key_pem;
  std::string tls_ca_pem;
  // The TLS fields were derived from `secret` (UseTlsFromSecret), not read from files.
  bool derived_tls = false;
  std::string ca_fingerprint;  // Of the derived CA, for messages.

  bool tls() const { return !tls_cert_pem.empty(); }
  bool insecure() const { return secret.empty() && !tls(); }
};

// A secret file's contents without a trailing newline; empty files and files shorter than 16
// bytes are refused (a short secret is guessable).
absl::StatusOr<std::string> ReadSecretFile(const std::string& path);
// TLS from PEM files; all three must be given.
absl::Status LoadTls(const std::string& cert_file, const std::string& key_file,
                     const std::string& ca_file, GrpcSecurity* security);
absl::StatusOr<GrpcSecurity> GrpcSecurityFromEnvironment();

// Derives the TLS fields from the secret (rpc/derived_tls.h) unless PEM files gave them:
// `names` are the host names or addresses clients dial this process by (none for a client).
// A no-op without a secret.
absl::Status UseTlsFromSecret(const std::vector<std::string>& names, GrpcSecurity* security);

// What this process's channels present: the security last set, with TLS derived from its
// secret if it has one and no files. Until set, the environment's (an error reading it shows
// as UNAUTHENTICATED on the first call, naming the variable).
void SetProcessGrpcSecurity(GrpcSecurity security);
GrpcSecurity ProcessGrpcSecurity();  // A copy: a server may set it meanwhile.

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const GrpcSecurity& security);
// With TLS, clients must present a certificate signed by the CA.
std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const GrpcSecurity& security);

// What a server asks of its callers.
struct CallerPolicy {
  bool require_certificate = false;  // A TLS client certificate of the cluster's CA.
  bool shared_identity = false;      // Certificates derived from a secret: one identity for all.
  static CallerPolicy For(const GrpcSecurity& security);
};

// UNAUTHENTICATED for a call that carries the legacy secret header (always: the secret has
// then travelled in clear), or that came without a verified client certificate where the
// policy asks for one (gRPC's TLS refuses those first; this is the second lock).
absl::Status AuthenticateCaller(const grpc::ServerContextBase& context, const CallerPolicy& policy);
// Whether the caller completed a TLS handshake with a certificate the server verified.
bool PeerAuthenticated(const grpc::ServerContextBase& context);

// Who calls, as far as the transport proved it: the subject of the caller's TLS client
// certificate (verified against the server's CA), or "" when there is none or all callers
// share one (a cluster secret says who may call, not who calls). The master keeps each
// session to its owner.
std::string CallerIdentity(const grpc::ServerContextBase& context, const CallerPolicy& policy);

}  // namespace sluice

#endif  // SLUICE_RPC_GRPC_SECURITY_H_
