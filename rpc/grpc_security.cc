#include "rpc/grpc_security.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "framework/file_util.h"
#include "framework/status.h"
#include "rpc/derived_tls.h"

namespace sluice {
namespace {

// Secrets, certificates and keys are a few KiB; anything larger is not one.
constexpr uint64_t kMaxCredentialFileBytes = 1 << 20;


absl::StatusOr<std::string> ReadFile(const std::string& path, absl::string_view what) {
  return ReadRegularFile(path, what, kMaxCredentialFileBytes);
}

struct ProcessSecurity {
  absl::Mutex mu;
  bool set ABSL_GUARDED_BY(mu) = false;
  GrpcSecurity security ABSL_GUARDED_BY(mu);
};

ProcessSecurity& Process() {
  static ProcessSecurity* p = new ProcessSecurity;  // Never destroyed: channels live to exit.
  return *p;
}

}  // namespace

absl::StatusOr<std::string> ReadSecretFile(const std::string& path) {
  SL_ASSIGN_OR_RETURN(std::string secret, ReadFile(path, "cluster secret file"));
  absl::string_view trimmed = secret;
  absl::ConsumeSuffix(&trimmed, "\n");
  absl::ConsumeSuffix(&trimmed, "\r");
  if (trimmed.size() < 16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster secret file '", path, "' holds ", trimmed.size(),
        " bytes; a secret needs at least 16 (e.g. head -c 32 /dev/urandom | base64 > FILE)"));
  }
  return std::string(trimmed);
}

absl::Status LoadTls(const std::string& cert_file, const std::string& key_file,
                     const std::string& ca_file, GrpcSecurity* security) {
  if (cert_file.empty() || key_file.empty() || ca_file.empty()) {
    return absl::InvalidArgumentError(
        "TLS needs a certificate, its key and the cluster's CA (all three)");
  }
  SL_ASSIGN_OR_RETURN(security->tls_cert_pem, ReadFile(cert_file, "TLS certificate"));
  SL_ASSIGN_OR_RETURN(security->tls_key_pem, ReadFile(key_file, "TLS key"));
  SL_ASSIGN_OR_RETURN(security->tls_ca_pem, ReadFile(ca_file, "TLS CA"));
  return absl::OkStatus();
}

absl::StatusOr<GrpcSecurity> GrpcSecurityFromEnvironment() {
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v == nullptr ? "" : v);
  };
  GrpcSecurity s;
  s.secret = env("SLUICE_CLUSTER_SECRET");
  if (s.secret.empty() && !env("SLUICE_CLUSTER_SECRET_FILE").empty()) {
    SL_ASSIGN_OR_RETURN(s.secret, ReadSecretFile(env("SLUICE_CLUSTER_SECRET_FILE")),
                        "SLUICE_CLUSTER_SECRET_FILE");
  }
  const std::string cert = env("SLUICE_TLS_CERT"), key = env("SLUICE_TLS_KEY"),
                    ca = env("SLUICE_TLS_CA");
  if (!cert.empty() || !key.empty() || !ca.empty()) {
    SL_RETURN_IF_ERROR(LoadTls(cert, key, ca, &s), "SLUICE_TLS_CERT, SLUICE_TLS_KEY, SLUICE_TLS_CA");
  }
  return s;
}

absl::Status UseTlsFromSecret(const std::vector<std::string>& names, GrpcSecurity* security) {
  if (security->secret.empty() || (security->tls() && !security->derived_tls)) return absl::OkStatus();
  SL_ASSIGN_OR_RETURN(DerivedTls tls, DeriveTls(security->secret, names));
  security->tls_ca_pem = std::move(tls.ca_pem);
  security->tls_cert_pem = std::move(tls.cert_pem);
  security->tls_key_pem = std::move(tls.key_pem);
  security->ca_fingerprint = std::move(tls.ca_fingerprint);
  security->derived_tls = true;
  return absl::OkStatus();
}

void SetProcessGrpcSecurity(GrpcSecurity security) {
  ProcessSecurity& p = Process();
  absl::MutexLock lock(&p.mu);
  p.security = std::move(security);
  p.set = true;
}

GrpcSecurity ProcessGrpcSecurity() {
  ProcessSecurity& p = Process();
  absl::MutexLock lock(&p.mu);
  if (!p.set) {
    auto env = GrpcSecurityFromEnvironment();
    if (env.ok()) {
      p.security = *std::move(env);
    } else {
      // Calls then go without credentials, and a secured server refuses them.
      std::fprintf(stderr, "sluice: %s\n", StatusToString(env.status()).c_str());
    }
    p.set = true;
  }
  if (!p.security.secret.empty() && !p.security.tls()) {
    // A client's certificate: no names (servers do not check clients' names).
    if (absl::Status s = UseTlsFromSecret({}, &p.security); !s.ok()) {
      std::fprintf(stderr, "sluice: %s\n", StatusToString(s).c_str());
      p.security.secret.clear();  // Fails the next call as "no credentials", not each differently.
    }
  }
  return p.security;
}

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const GrpcSecurity& security) {
  if (!security.tls()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = security.tls_ca_pem;
  options.pem_private_key = security.tls_key_pem;
  options.pem_cert_chain = security.tls_cert_pem;
  return grpc::SslCredentials(options);
}

std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const GrpcSecurity& security) {
  if (!security.tls()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = security.tls_ca_pem;
  options.pem_key_cert_pairs.push_back({security.tls_key_pem, security.tls_cert_pem});
  return grpc::SslServerCredentials(options);
}

CallerPolicy CallerPolicy::For(const GrpcSecurity& security) {
  CallerPolicy policy;
  policy.require_certificate = security.tls() || !security.secret.empty();
  policy.shared_identity = policy.require_certificate && (security.derived_tls || !security.tls());
  return policy;
}

bool PeerAuthenticated(const grpc::ServerContextBase& context) {
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  return auth != nullptr && auth->IsPeerAuthenticated();
}

absl::Status AuthenticateCaller(const grpc::ServerContextBase& context, const CallerPolicy& policy) {
  if (context.client_metadata().count(kLegacyClusterSecretMetadataKey) > 0) {
    return absl::UnauthenticatedError(
        "this client sent the cluster secret itself in the call's metadata, as Sluice clients "
        "did before TLS derived from the secret; servers refuse it. Upgrade the client: it then "
        "proves it holds the "
        "secret with TLS certificates derived from it, and never sends it. The secret has "
        "crossed the network in clear: make a new one for the cluster");
  }
  if (policy.require_certificate && !PeerAuthenticated(context)) {
    return absl::UnauthenticatedError(
        "this server requires a TLS client certificate of the cluster (set SLUICE_CLUSTER_SECRET "
        "or SLUICE_CLUSTER_SECRET_FILE where the client runs, or SLUICE_TLS_CERT, SLUICE_TLS_KEY "
        "and SLUICE_TLS_CA)");
  }
  return absl::OkStatus();
}

std::string CallerIdentity(const grpc::ServerContextBase& context, const CallerPolicy& policy) {
  if (policy.shared_identity || !PeerAuthenticated(context)) return "";
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  std::vector<grpc::string_ref> names = auth->FindPropertyValues("x509_subject");
  if (names.empty()) names = auth->GetPeerIdentity();
  std::string identity;
  for (const grpc::string_ref& name : names) {
    if (!identity.empty()) identity += ",";
    identity.append(name.data(), name.size());
  }
  return identity;
}

}  // namespace sluice
