#include "client/mutual_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "paddock/errors.hpp"

namespace paddock::client {
namespace {

std::string hex(const unsigned char* data, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 0xf];
  }
  return out;
}

}  // namespace

std::string random_nonce() {
  unsigned char bytes[32];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(errc::spawn_failed, std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  return hex(bytes, sizeof bytes);
}

bool well_formed_nonce(std::string_view nonce) {
  if (nonce.size() != 64) return false;
  for (char c : nonce) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string auth_proof(std::string_view token, AuthRole role, std::string_view client_nonce,
                       std::string_view server_nonce) {
  std::string message(role == AuthRole::daemon ? "paddock-daemon\n" : "paddock-client\n");
  message.append(client_nonce).append("\n").append(server_nonce);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac,
           &length) == nullptr) {
    throw Error(errc::spawn_failed, "HMAC-SHA256 failed");
  }
  return hex(mac, length);
}

bool same_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace paddock::client
