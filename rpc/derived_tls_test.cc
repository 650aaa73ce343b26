// The derived CA is the same in every process holding the secret and differs between secrets;
// a process's certificate verifies against its own secret's CA only, carries the names asked
// for, and is issued afresh (a new key) each time.
#include "rpc/derived_tls.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "framework/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

constexpr char kSecret[] = "0123456789abcdef-derived-tls-test";

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;

X509Ptr ParsePem(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return X509Ptr(x);
}

// Whether `cert` verifies against `ca` alone, as a TLS peer would check it.
bool Verifies(const std::string& cert_pem, const std::string& ca_pem) {
  X509Ptr cert = ParsePem(cert_pem), ca = ParsePem(ca_pem);
  if (cert == nullptr || ca == nullptr) return false;
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca.get());
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, cert.get(), nullptr);
  const bool ok = X509_verify_cert(ctx) == 1;
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return ok;
}

std::vector<std::string> AltNames(const std::string& cert_pem) {
  X509Ptr cert = ParsePem(cert_pem);
  std::vector<std::string> out;
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    int type = 0;
    const auto* value = static_cast<const ASN1_STRING*>(GENERAL_NAME_get0_value(name, &type));
    const std::string bytes(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                            ASN1_STRING_length(value));
    if (type == GEN_DNS) {
      out.push_back("DNS:" + bytes);
    } else if (type == GEN_IPADD) {
      char text[INET6_ADDRSTRLEN] = {};
      inet_ntop(bytes.size() == 4 ? AF_INET : AF_INET6, bytes.data(), text, sizeof(text));
      out.push_back(absl::StrCat("IP:", text));
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

TEST(DerivedTlsTest, EveryHolderOfTheSecretDerivesTheSameCa) {
  SL_ASSERT_OK_AND_ASSIGN(DerivedTls a, DeriveTls(kSecret, {"10.1.2.3"}));
  SL_ASSERT_OK_AND_ASSIGN(DerivedTls b, DeriveTls(kSecret, {}, absl::Now() - absl::Hours(5)));
  EXPECT_EQ(a.ca_pem, b.ca_pem);
  EXPECT_EQ(a.ca_fingerprint, b.ca_fingerprint);
  EXPECT_EQ(a.ca_fingerprint.size(), 16u);
  // Each issue is a new key and a new certificate.
  EXPECT_NE(a.key_pem, b.key_pem);
  EXPECT_NE(a.cert_pem, b.cert_pem);
  // Each certificate verifies against either process's CA.
  EXPECT_TRUE(Verifies(a.cert_pem, b.ca_pem));
  EXPECT_TRUE(Verifies(b.cert_pem, a.ca_pem));
  // Nothing of the secret is in what a peer sees.
  EXPECT_EQ(a.ca_pem.find(kSecret), std::string::npos);
  EXPECT_EQ(a.cert_pem.find(kSecret), std::string::npos);
}

TEST(DerivedTlsTest, AnotherSecretGivesAnotherCaThatTrustsNoneOfTheseCertificates) {
  SL_ASSERT_OK_AND_ASSIGN(DerivedTls ours, DeriveTls(kSecret, {"127.0.0.1"}));
  // One byte apart.
  std::string other_secret = kSecret;
  other_secret.back() ^= 1;
  SL_ASSERT_OK_AND_ASSIGN(DerivedTls theirs, DeriveTls(other_secret, {"127.0.0.1"}));
  EXPECT_NE(ours.ca_fingerprint, theirs.ca_fingerprint);
  EXPECT_NE(ours.ca_pem, theirs.ca_pem);
  EXPECT_FALSE(Verifies(theirs.cert_pem, ours.ca_pem));
  EXPECT_FALSE(Verifies(ours.cert_pem, theirs.ca_pem));
  EXPECT_TRUE(Verifies(ours.cert_pem, ours.ca_pem));
}

TEST(DerivedTlsTest, ServerCertificatesNameTheAddressesClientsDial) {
  SL_ASSERT_OK_AND_ASSIGN(DerivedTls remote, DeriveTls(kSecret, {"Worker-0.example.com"}));
  EXPECT_THAT(AltNames(remote.cert_pem), UnorderedElementsAre("DNS:worker-0.example.com"));
  SL_ASSERT_OK_AND_ASSIGN(DerivedTls ip, DeriveTls(kSecret, {"10.0.0.7"}));
  EXPECT_THAT(AltNames(ip.cert_pem), UnorderedElementsAre("IP:10.0.0.7"));
  // Loopback names bring the others: clients dial "localhost" and "127.0.0.1" alike.
  SL_ASSERT_OK_AND_ASSIGN(DerivedTls local, DeriveTls(kSecret, {"localhost"}));
  EXPECT_THAT(AltNames(local.cert_pem),
              UnorderedElementsAre("DNS:localhost", "IP:127.0.0.1", "IP:::1"));
  SL_ASSERT_OK_AND_ASSIGN(DerivedTls client, DeriveTls(kSecret, {}));
  EXPECT_TRUE(AltNames(client.cert_pem).empty());
}

TEST(DerivedTlsTest, RefusesWhatIsNotAHostAndAnEmptySecret) {
  for (const std::string& bad : std::vector<std::string>{"evil,DNS:x", std::string("a\0b", 3), "x y", std::string(300, 'a')}) {
    absl::Status s = DeriveTls(kSecret, {bad}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr("not a host name"));
  }
  EXPECT_EQ(DeriveTls("", {}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DerivedTlsTest, HostOfAddress) {
  EXPECT_EQ(HostOfAddress("10.0.0.2:2222"), "10.0.0.2");
  EXPECT_EQ(HostOfAddress("[::1]:2222"), "::1");
  EXPECT_EQ(HostOfAddress("worker0"), "worker0");
  EXPECT_EQ(HostOfAddress("fe80::1"), "fe80::1");
}

}  // namespace
}  // namespace sluice
