#include "proxy/http_head.hpp"

#include <algorithm>
#include <charconv>

namespace paddock::proxy {
namespace {

bool is_tchar(unsigned char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
           return lower(x) == lower(y);
         });
}

HeadParse invalid(std::string why) {
  HeadParse r;
  r.status = HeadStatus::invalid;
  r.error = std::move(why);
  return r;
}

std::string_view trim_ows(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

}  // namespace

const std::string* HttpRequestHead::find(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return &v;
  }
  return nullptr;
}

HeadParse parse_request_head(std::string_view buffer, std::size_t max_bytes, HttpRequestHead& out) {
  const std::size_t end = buffer.find("\r\n\r\n");
  if (end == std::string_view::npos || end + 4 > max_bytes) {
    if (buffer.size() >= max_bytes || (end != std::string_view::npos && end + 4 > max_bytes)) {
      HeadParse r;
      r.status = HeadStatus::too_large;
      r.error = "request head larger than " + std::to_string(max_bytes) + " bytes";
      return r;
    }
    // A bare LF line end would only be found later by a more lenient server: refuse early.
    for (std::size_t i = 0; i < buffer.size(); ++i) {
      if (buffer[i] == '\n' && (i == 0 || buffer[i - 1] != '\r')) {
        return invalid("bare LF line ending in the request head");
      }
    }
    return {};
  }
  out = HttpRequestHead{};
  std::string_view head = buffer.substr(0, end + 2);  // every line ends with CRLF

  auto next_line = [&head]() -> std::optional<std::string_view> {
    auto crlf = head.find("\r\n");
    if (crlf == std::string_view::npos) return std::nullopt;
    std::string_view line = head.substr(0, crlf);
    head.remove_prefix(crlf + 2);
    return line;
  };

  auto line = next_line();
  if (!line || line->empty()) return invalid("empty request line");
  // method SP request-target SP HTTP-version
  auto sp1 = line->find(' ');
  auto sp2 = sp1 == std::string_view::npos ? sp1 : line->find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos ||
      line->find(' ', sp2 + 1) != std::string_view::npos) {
    return invalid("malformed request line");
  }
  std::string_view method = line->substr(0, sp1);
  std::string_view target = line->substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line->substr(sp2 + 1);
  if (method.empty() || !std::all_of(method.begin(), method.end(), [](char c) {
        return is_tchar(static_cast<unsigned char>(c));
      })) {
    return invalid("malformed method");
  }
  if (target.empty() || !std::all_of(target.begin(), target.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u > 0x20 && u < 0x7f;
      })) {
    return invalid("malformed request target");
  }
  if (version == "HTTP/1.1") {
    out.minor_version = 1;
  } else if (version == "HTTP/1.0") {
    out.minor_version = 0;
  } else {
    return invalid("unsupported HTTP version (HTTP/1.0 and HTTP/1.1 only)");
  }
  out.method = method;
  out.target = target;

  while (auto l = next_line()) {
    if (l->empty()) break;
    if (l->front() == ' ' || l->front() == '\t')
      return invalid("obsolete line folding in a header");
    auto colon = l->find(':');
    if (colon == std::string_view::npos || colon == 0) return invalid("malformed header line");
    std::string_view name = l->substr(0, colon);
    if (!std::all_of(name.begin(), name.end(),
                     [](char c) { return is_tchar(static_cast<unsigned char>(c)); })) {
      return invalid("malformed header name");
    }
    std::string_view value = trim_ows(l->substr(colon + 1));
    for (char c : value) {
      auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && u != '\t') || u == 0x7f) return invalid("control character in a header");
    }
    if (out.headers.size() >= kMaxHeaderCount) {
      HeadParse r;
      r.status = HeadStatus::too_large;
      r.error = "more than " + std::to_string(kMaxHeaderCount) + " headers";
      return r;
    }
    out.headers.emplace_back(name, value);
  }
  HeadParse r;
  r.status = HeadStatus::complete;
  r.head_bytes = end + 4;
  return r;
}

std::optional<AbsoluteTarget> parse_absolute_http_target(std::string_view target,
                                                         std::string* error) {
  auto fail = [&](std::string why) -> std::optional<AbsoluteTarget> {
    if (error != nullptr) *error = std::move(why);
    return std::nullopt;
  };
  auto scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos) {
    return fail("the request target is not absolute (a proxy needs http://host/path or CONNECT)");
  }
  std::string_view scheme = target.substr(0, scheme_end);
  if (iequals(scheme, "https")) {
    return fail("https:// in absolute form is not proxied: use CONNECT (HTTPS_PROXY)");
  }
  if (!iequals(scheme, "http")) return fail("scheme '" + std::string(scheme) + "' is not proxied");
  std::string_view rest = target.substr(scheme_end + 3);
  auto path_start = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, path_start);
  if (authority.empty()) return fail("empty host in the request target");
  if (authority.find('@') != std::string_view::npos) {
    return fail("userinfo (user@host) in the request target is refused");
  }
  AbsoluteTarget out;
  out.authority = authority;
  if (path_start == std::string_view::npos) {
    out.origin_form = "/";
  } else {
    std::string_view path = rest.substr(path_start);
    if (path.find('#') != std::string_view::npos) return fail("fragment in the request target");
    // (Built by append: GCC 12's -Wrestrict misfires on "/" + std::string at -O3.)
    if (path.front() == '?') out.origin_form = "/";
    out.origin_form.append(path);
  }
  return out;
}

std::optional<BodyFraming> request_body_framing(const HttpRequestHead& head, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<BodyFraming> {
    if (error != nullptr) *error = std::move(why);
    return std::nullopt;
  };
  BodyFraming f;
  const std::string* length = nullptr;
  bool te = false;
  for (const auto& [k, v] : head.headers) {
    if (iequals(k, "content-length")) {
      if (length != nullptr && *length != v) return fail("two different Content-Length headers");
      length = &v;
    } else if (iequals(k, "transfer-encoding")) {
      if (te || !iequals(v, "chunked")) {
        return fail("Transfer-Encoding other than a single 'chunked' is not supported");
      }
      te = true;
    }
  }
  if (te && length != nullptr) return fail("both Content-Length and Transfer-Encoding");
  if (te) {
    f.chunked = true;
    return f;
  }
  if (length != nullptr) {
    auto [end, ec] =
        std::from_chars(length->data(), length->data() + length->size(), f.content_length);
    if (length->empty() || ec != std::errc() || end != length->data() + length->size()) {
      return fail("malformed Content-Length");
    }
  }
  return f;
}

std::optional<std::string> decode_basic_credentials(std::string_view value) {
  value = trim_ows(value);
  if (value.size() < 6 || !iequals(value.substr(0, 6), "basic ")) return std::nullopt;
  value = trim_ows(value.substr(6));
  auto sextet = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (value.empty() || value.size() % 4 != 0 || value.size() > 1024) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < value.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      char c = value[i + j];
      if (c == '=' && i + 4 == value.size() && j >= 2) {
        v[j] = 0;
        ++pad;
      } else if (pad > 0 || (v[j] = sextet(c)) < 0) {
        return std::nullopt;
      }
    }
    unsigned n =
        (unsigned(v[0]) << 18) | (unsigned(v[1]) << 12) | (unsigned(v[2]) << 6) | unsigned(v[3]);
    out += static_cast<char>((n >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(n & 0xff);
  }
  if (out.find(':') == std::string::npos) return std::nullopt;
  return out;
}

}  // namespace paddock::proxy
