#include "client/mutual_auth.hpp"

#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
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
  struct hmac_sha256_ctx context;
  hmac_sha256_set_key(&context, token.size(), reinterpret_cast<const std::uint8_t*>(token.data()));
  hmac_sha256_update(&context, message.size(),
                     reinterpret_cast<const std::uint8_t*>(message.data()));
  std::uint8_t mac[SHA256_DIGEST_SIZE];
  hmac_sha256_digest(&context, sizeof mac, mac);
  return hex(mac, sizeof mac);
}

bool same_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  // In constant time: how much of a guess matched must not show in how long it took.
  return memeql_sec(a.data(), b.data(), a.size()) != 0;
}

}  // namespace paddock::client
