#include "rpc/derived_tls.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

// Changing either changes every cluster's CA: processes of different versions would no longer
// trust each other. Versioned so that a later scheme can live beside this one.
constexpr char kHkdfSalt[] = "sluice cluster secret";
constexpr char kCaKeyLabel[] = "sluice cluster CA key v1";

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using KdfPtr = std::unique_ptr<EVP_KDF, Deleter<EVP_KDF, EVP_KDF_free>>;
using KdfCtxPtr = std::unique_ptr<EVP_KDF_CTX, Deleter<EVP_KDF_CTX, EVP_KDF_CTX_free>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;

void FreeGeneralNames(GENERAL_NAMES* names) { GENERAL_NAMES_free(names); }
using NamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES, FreeGeneralNames>>;

// OpenSSL's reason for the last failure, for error messages.
std::string OpenSslError(absl::string_view what) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  char reason[256] = "unknown reason";
  if (code != 0) ERR_error_string_n(code, reason, sizeof(reason));
  return absl::StrCat("deriving the cluster's TLS credentials from its secret: ", what, " failed (",
                      reason, ")");
}

// Holds 32 bytes of key material and wipes them when done.
struct KeyBytes {
  std::array<unsigned char, 32> bytes{};
  ~KeyBytes() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
};

absl::Status Hkdf(absl::string_view secret, absl::string_view label, KeyBytes* out) {
  KdfPtr kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
  if (kdf == nullptr) return absl::InternalError(OpenSslError("HKDF"));
  KdfCtxPtr ctx(EVP_KDF_CTX_new(kdf.get()));
  if (ctx == nullptr) return absl::InternalError(OpenSslError("HKDF"));
  std::string digest = "SHA256";
  std::string salt = kHkdfSalt;
  std::string key(secret), info(label);
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest.data(), 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, key.data(), key.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt.data(), salt.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info.data(), info.size()),
      OSSL_PARAM_construct_end()};
  const int ok = EVP_KDF_derive(ctx.get(), out->bytes.data(), out->bytes.size(), params);
  OPENSSL_cleanse(key.data(), key.size());
  if (ok != 1) return absl::InternalError(OpenSslError("HKDF"));
  return absl::OkStatus();
}

absl::Status AddName(X509_NAME* name, const char* field, const std::string& value) {
  if (X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(value.data()),
                                 static_cast<int>(value.size()), -1, 0) != 1) {
    return absl::InternalError(OpenSslError("a certificate name"));
  }
  return absl::OkStatus();
}

absl::Status AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (ext == nullptr || X509_add_ext(cert, ext.get(), -1) != 1) {
    return absl::InternalError(OpenSslError(absl::StrCat("certificate extension ", value)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CertPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return absl::InternalError(OpenSslError("writing a certificate"));
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

absl::StatusOr<std::string> KeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_secmem()));  // Wiped when freed.
  if (bio == nullptr ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return absl::InternalError(OpenSslError("writing a key"));
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}
bool IsWildcard(const std::string& host) { return host.empty() || host == "0.0.0.0" || host == "::"; }

// The names a certificate for `names` carries: each, and for a loopback or wildcard one every
// loopback spelling (clients dial "localhost" and "127.0.0.1" alike), and for a wildcard this
// machine's host name.
std::vector<std::string> CertificateNames(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  auto add = [&](const std::string& n) {
    if (!n.empty() && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  for (const std::string& name : names) {
    const std::string host = absl::AsciiStrToLower(name);
    if (!IsWildcard(host)) add(host);
    if (IsLoopback(host) || IsWildcard(host)) {
      add("localhost");
      add("127.0.0.1");
      add("::1");
    }
    if (IsWildcard(host)) {
      char hostname[256] = {};
      if (gethostname(hostname, sizeof(hostname) - 1) == 0) add(absl::AsciiStrToLower(hostname));
    }
    // A host name's addresses too: clients may dial a task by either.
    in6_addr ignored;
    if (!IsWildcard(host) && !IsLoopback(host) && inet_pton(AF_INET, host.c_str(), &ignored) != 1 &&
        inet_pton(AF_INET6, host.c_str(), &ignored) != 1) {
      addrinfo hints{};
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* found = nullptr;
      if (getaddrinfo(host.c_str(), nullptr, &hints, &found) == 0) {
        for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
          char text[INET6_ADDRSTRLEN] = {};
          const void* raw = a->ai_family == AF_INET
                                ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr)
                                : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
          if (inet_ntop(a->ai_family, raw, text, sizeof(text)) != nullptr) add(text);
        }
        freeaddrinfo(found);
      }
    }
  }
  return out;
}

absl::StatusOr<NamesPtr> SubjectAltNames(const std::vector<std::string>& names) {
  NamesPtr out(GENERAL_NAMES_new());
  if (out == nullptr) return absl::InternalError(OpenSslError("subjectAltName"));
  for (const std::string& name : names) {
    unsigned char ip[16];
    GENERAL_NAME* entry = GENERAL_NAME_new();
    if (entry == nullptr) return absl::InternalError(OpenSslError("subjectAltName"));
    int ip_bytes = 0;
    if (inet_pton(AF_INET, name.c_str(), ip) == 1) ip_bytes = 4;
    if (inet_pton(AF_INET6, name.c_str(), ip) == 1) ip_bytes = 16;
    bool ok;
    if (ip_bytes > 0) {
      ASN1_OCTET_STRING* value = ASN1_OCTET_STRING_new();
      ok = value != nullptr && ASN1_OCTET_STRING_set(value, ip, ip_bytes) == 1;
      if (ok) GENERAL_NAME_set0_value(entry, GEN_IPADD, value);
      else ASN1_OCTET_STRING_free(value);
    } else {
      // Host names of a cluster spec: letters, digits, '-', '.', '_' only.
      const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
      });
      if (!plain || name.size() > 253) {
        GENERAL_NAME_free(entry);
        return absl::InvalidArgumentError(
            absl::StrCat("cannot issue a certificate for the host name '", absl::CHexEscape(name),
                         "': not a host name or IP address"));
      }
      ASN1_IA5STRING* value = ASN1_IA5STRING_new();
      ok = value != nullptr && ASN1_STRING_set(value, name.data(), static_cast<int>(name.size())) == 1;
      if (ok) GENERAL_NAME_set0_value(entry, GEN_DNS, value);
      else ASN1_IA5STRING_free(value);
    }
    if (!ok || sk_GENERAL_NAME_push(out.get(), entry) == 0) {
      GENERAL_NAME_free(entry);
      return absl::InternalError(OpenSslError("subjectAltName"));
    }
  }
  return out;
}

}  // namespace

std::string HostOfAddress(absl::string_view address) {
  if (absl::StartsWith(address, "[")) {
    const size_t close = address.find(']');
    if (close != absl::string_view::npos) return std::string(address.substr(1, close - 1));
  }
  const size_t colon = address.rfind(':');
  // A bare IPv6 address has several colons and no port.
  if (colon == absl::string_view::npos || address.find(':') != colon) return std::string(address);
  return std::string(address.substr(0, colon));
}

absl::StatusOr<DerivedTls> DeriveTls(absl::string_view secret, const std::vector<std::string>& names,
                                     absl::Time now) {
  if (secret.empty()) return absl::InvalidArgumentError("no cluster secret to derive TLS from");
  DerivedTls out;

  // The CA: a key from the secret, a certificate of fixed fields.
  KeyBytes ca_seed;
  if (absl::Status s = Hkdf(secret, kCaKeyLabel, &ca_seed); !s.ok()) return s;
  PkeyPtr ca_key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, ca_seed.bytes.data(),
                                              ca_seed.bytes.size()));
  if (ca_key == nullptr) return absl::InternalError(OpenSslError("the CA key"));
  unsigned char public_key[32];
  size_t public_key_size = sizeof(public_key);
  if (EVP_PKEY_get_raw_public_key(ca_key.get(), public_key, &public_key_size) != 1) {
    return absl::InternalError(OpenSslError("the CA's public key"));
  }
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(public_key, public_key_size, digest);
  out.ca_fingerprint =
      absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), 8));

  X509Ptr ca(X509_new());
  if (ca == nullptr || X509_set_version(ca.get(), 2) != 1) {
    return absl::InternalError(OpenSslError("the CA certificate"));
  }
  {
    BnPtr serial(BN_bin2bn(digest, 8, nullptr));
    if (serial == nullptr) return absl::InternalError(OpenSslError("the CA serial"));
    BN_clear_bit(serial.get(), 63);  // Positive, as serials must be.
    if (BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(ca.get())) == nullptr) {
      return absl::InternalError(OpenSslError("the CA serial"));
    }
  }
  X509_NAME* ca_name = X509_get_subject_name(ca.get());
  if (absl::Status s = AddName(ca_name, "O", kDerivedTlsOrganization); !s.ok()) return s;
  if (absl::Status s = AddName(ca_name, "CN", absl::StrCat("sluice cluster CA ", out.ca_fingerprint));
      !s.ok()) {
    return s;
  }
  if (X509_set_issuer_name(ca.get(), ca_name) != 1 ||
      ASN1_TIME_set_string_X509(X509_getm_notBefore(ca.get()), "20240101000000Z") != 1 ||
      ASN1_TIME_set_string_X509(X509_getm_notAfter(ca.get()), "99991231235959Z") != 1 ||
      X509_set_pubkey(ca.get(), ca_key.get()) != 1) {
    return absl::InternalError(OpenSslError("the CA certificate"));
  }
  for (const auto& [nid, value] : std::vector<std::pair<int, const char*>>{
           {NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
           {NID_key_usage, "critical,keyCertSign,cRLSign"},
           {NID_subject_key_identifier, "hash"}}) {
    if (absl::Status s = AddExtension(ca.get(), ca.get(), nid, value); !s.ok()) return s;
  }
  if (X509_sign(ca.get(), ca_key.get(), nullptr) <= 0) {
    return absl::InternalError(OpenSslError("signing the CA certificate"));
  }
  auto ca_pem = CertPem(ca.get());
  if (!ca_pem.ok()) return ca_pem.status();
  out.ca_pem = *std::move(ca_pem);

  // This process's certificate: a fresh key, signed by the CA.
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (key == nullptr) return absl::InternalError(OpenSslError("a P-256 key"));
  X509Ptr cert(X509_new());
  if (cert == nullptr || X509_set_version(cert.get(), 2) != 1) {
    return absl::InternalError(OpenSslError("a certificate"));
  }
  {
    unsigned char random[16];
    if (RAND_bytes(random, sizeof(random)) != 1) return absl::InternalError(OpenSslError("a serial"));
    BnPtr serial(BN_bin2bn(random, sizeof(random), nullptr));
    if (serial == nullptr) return absl::InternalError(OpenSslError("a serial"));
    BN_clear_bit(serial.get(), 127);
    if (BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr) {
      return absl::InternalError(OpenSslError("a serial"));
    }
  }
  const std::vector<std::string> cert_names = CertificateNames(names);
  auto san = SubjectAltNames(cert_names);
  if (!san.ok()) return san.status();
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (absl::Status s = AddName(name, "O", kDerivedTlsOrganization); !s.ok()) return s;
  if (absl::Status s = AddName(name, "CN", cert_names.empty() ? "sluice client" : "sluice task");
      !s.ok()) {
    return s;
  }
  const time_t issued = absl::ToTimeT(now);
  // An hour back: clocks of a cluster's machines differ a little.
  if (X509_set_issuer_name(cert.get(), ca_name) != 1 ||
      ASN1_TIME_set(X509_getm_notBefore(cert.get()), issued - 3600) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert.get()),
                    issued + absl::ToInt64Seconds(kDerivedCertificateLifetime)) == nullptr ||
      X509_set_pubkey(cert.get(), key.get()) != 1) {
    return absl::InternalError(OpenSslError("a certificate"));
  }
  for (const auto& [nid, value] : std::vector<std::pair<int, const char*>>{
           {NID_basic_constraints, "critical,CA:FALSE"},
           {NID_key_usage, "critical,digitalSignature"},
           {NID_ext_key_usage, "serverAuth,clientAuth"},
           {NID_authority_key_identifier, "keyid:always"}}) {
    if (absl::Status s = AddExtension(cert.get(), ca.get(), nid, value); !s.ok()) return s;
  }
  if (!cert_names.empty()) {
    if (X509_add1_ext_i2d(cert.get(), NID_subject_alt_name, san->get(), 0, X509V3_ADD_DEFAULT) != 1) {
      return absl::InternalError(OpenSslError("subjectAltName"));
    }
  }
  if (X509_sign(cert.get(), ca_key.get(), nullptr) <= 0) {
    return absl::InternalError(OpenSslError("signing a certificate"));
  }
  auto cert_pem = CertPem(cert.get());
  if (!cert_pem.ok()) return cert_pem.status();
  out.cert_pem = *std::move(cert_pem);
  auto key_pem = KeyPem(key.get());
  if (!key_pem.ok()) return key_pem.status();
  out.key_pem = *std::move(key_pem);
  return out;
}

}  // namespace sluice
