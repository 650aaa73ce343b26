// Who may call a Sluice server: a cluster secret checked on every call, TLS with client
// certificates (gRPC's own credentials), or both. Every channel this process opens presents
// the process's settings; `sluice serve` requires one of them unless told --insecure.
//
//   GrpcSecurity s;                                   // Or GrpcSecurityFromEnvironment().
//   SL_ASSIGN_OR_RETURN(s.secret, ReadSecretFile("/etc/sluice/secret"));
//   SetProcessGrpcSecurity(s);                        // Channels to peers present it.
//   builder.AddListeningPort(address, ServerCredentials(s));
//   service.set_cluster_secret(s.secret);             // Calls without it: UNAUTHENTICATED.
//
// Environment (read once, by any process that has not set its own): SLUICE_CLUSTER_SECRET
// (the secret itself) or SLUICE_CLUSTER_SECRET_FILE (a file holding it), and SLUICE_TLS_CERT,
// SLUICE_TLS_KEY, SLUICE_TLS_CA (PEM files: this process's certificate and key, and the CA
// that signed every task's and client's certificate).
#ifndef SLUICE_RPC_GRPC_SECURITY_H_
#define SLUICE_RPC_GRPC_SECURITY_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice {

// The request metadata key that carries the cluster secret.
inline constexpr char kClusterSecretMetadataKey[] = "sluice-cluster-secret";

struct GrpcSecurity {
  std::string secret;        // Empty: none.
  std::string tls_cert_pem;  // With tls_key_pem and tls_ca_pem: TLS both ways.
  std::string tls_key_pem;
  std::string tls_ca_pem;

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

// What this process's channels present. Until set, the environment's (an error reading it
// shows as UNAUTHENTICATED on the first call, naming the variable).
void SetProcessGrpcSecurity(GrpcSecurity security);
GrpcSecurity ProcessGrpcSecurity();  // A copy: a server may set it meanwhile.

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const GrpcSecurity& security);
// With TLS, clients must present a certificate signed by the CA.
std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const GrpcSecurity& security);

// OK when `secret` is empty or the call carries it; UNAUTHENTICATED otherwise. Compares in
// time independent of where the presented value differs.
absl::Status AuthenticateCaller(const grpc::ServerContextBase& context, const std::string& secret);

// Who calls, as far as the transport proved it: the subject of the caller's TLS client
// certificate (verified against the server's CA), or "" when there is none (a shared cluster
// secret says who may call, not who calls). The master keeps each session to its owner.
std::string CallerIdentity(const grpc::ServerContextBase& context);

}  // namespace sluice

#endif  // SLUICE_RPC_GRPC_SECURITY_H_
