// The serve protocol's TCP authentication: both sides prove they hold the daemon's token and
// neither sends it. The client opens with a nonce; the daemon answers with its own nonce and
// its proof; only a client that has checked that proof sends its own. A listener that is not
// the daemon (a local user who bound the port during a restart) learns nothing it can replay:
// each proof is an HMAC-SHA256 over both nonces and the side's role.
//   client → {"type":"hello","version":1,"nonce":C}
//   daemon → {"type":"challenge","nonce":S,"proof":HMAC(token, "paddock-daemon\n" C "\n" S)}
//   client → {"type":"auth","proof":HMAC(token, "paddock-client\n" C "\n" S)}
//   daemon → {"type":"hello", ...capabilities}
#pragma once

#include <string>
#include <string_view>

namespace paddock::client {

enum class AuthRole { daemon, client };

// 32 random bytes from the kernel (getrandom), as 64 lower-case hex digits.
std::string random_nonce();

// A nonce as random_nonce() makes them (what a peer sent is checked before use).
bool well_formed_nonce(std::string_view nonce);

// HMAC-SHA256(token, role "\n" client_nonce "\n" server_nonce) as 64 hex digits (Nettle:
// a well-kept implementation, not ours).
std::string auth_proof(std::string_view token, AuthRole role, std::string_view client_nonce,
                       std::string_view server_nonce);

// Equal, in time that does not depend on where they differ.
bool same_secret(std::string_view a, std::string_view b);

}  // namespace paddock::client
