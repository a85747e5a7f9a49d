// The proxy's HTTP/1.x request-head parser: pure, allocation-bounded, no I/O (so it can be
// fuzzed alone). Strict where leniency lets a request mean one thing to us and another to
// the server behind us: CRLF line ends only, no obs-fold, no whitespace before the colon,
// one Content-Length, never Content-Length with Transfer-Encoding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace paddock::proxy {

struct HttpRequestHead {
  std::string method;
  std::string target;
  int minor_version = 1;                                     // HTTP/1.<minor>
  std::vector<std::pair<std::string, std::string>> headers;  // names as received

  // First header of that name (case-insensitive), or null.
  const std::string* find(std::string_view name) const;
};

enum class HeadStatus { complete, incomplete, invalid, too_large };

struct HeadParse {
  HeadStatus status = HeadStatus::incomplete;
  std::size_t head_bytes = 0;  // complete: bytes of the head, CRLFCRLF included
  std::string error;           // invalid / too_large: why, one line
};

inline constexpr std::size_t kMaxHeaderCount = 128;

// Parses the head at the start of `buffer`. `max_bytes` bounds the head (too_large once the
// buffer holds that many bytes without a complete head).
HeadParse parse_request_head(std::string_view buffer, std::size_t max_bytes, HttpRequestHead& out);

// An absolute-form target `http://authority/path?query`: the authority (host[:port], no
// userinfo) and the origin-form rest ("/" when empty). nullopt with *error for anything else
// (https:// in absolute form, other schemes, userinfo, fragments).
struct AbsoluteTarget {
  std::string authority;
  std::string origin_form;
};
std::optional<AbsoluteTarget> parse_absolute_http_target(std::string_view target,
                                                         std::string* error);

// The body framing of a request: none, a Content-Length, or chunked. nullopt with *error when
// the headers are contradictory (both, two lengths, a bad number, an unknown coding).
struct BodyFraming {
  bool chunked = false;
  std::uint64_t content_length = 0;
};
std::optional<BodyFraming> request_body_framing(const HttpRequestHead& head, std::string* error);

// Basic credentials from a `Proxy-Authorization` value: "user:password", or nullopt.
std::optional<std::string> decode_basic_credentials(std::string_view header_value);

}  // namespace paddock::proxy
