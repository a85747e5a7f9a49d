// libFuzzer target for proxy/http_head: the request-head parser, absolute-form targets, body
// framing and Basic credentials, fed the bytes a client could send. Beyond "no crash, no UB"
// it checks what the proxy relies on: the head it forwards is exactly the bytes up to the
// first CRLFCRLF, reading more bytes never changes a parse, and nothing it accepts carries a
// bare CR/LF or control character to the server behind it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "proxy/http_head.hpp"

using namespace paddock::proxy;

namespace {

// NetworkLimits::max_header_bytes' default, so the fuzzer probes the limit the proxy uses.
constexpr std::size_t kMaxHead = 16 * 1024;

// RFC 9110 token characters, restated here rather than shared so a bug there is not
// mirrored here.
bool is_tchar(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return is_tchar(c); });
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

bool iequals(std::string_view a, std::string_view b) {
  auto same = [](char x, char y) { return lower(x) == lower(y); };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), same);
}

// Every CR is followed by LF and every LF follows a CR.
bool crlf_only(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r' && (i + 1 == s.size() || s[i + 1] != '\n')) return false;
    if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) return false;
  }
  return true;
}

bool has_bare_lf(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) return true;
  }
  return false;
}

bool same_head(const HttpRequestHead& a, const HttpRequestHead& b) {
  return a.method == b.method && a.target == b.target && a.minor_version == b.minor_version &&
         a.headers == b.headers;
}

std::string base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    unsigned n = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) n |= static_cast<unsigned char>(in[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

void check_fields(const HttpRequestHead& h) {
  FUZZ_CHECK(is_token(h.method));
  FUZZ_CHECK(!h.target.empty());
  FUZZ_CHECK(std::all_of(h.target.begin(), h.target.end(), [](char c) {
    return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
  }));
  FUZZ_CHECK(h.minor_version == 0 || h.minor_version == 1);
  FUZZ_CHECK(h.headers.size() <= kMaxHeaderCount);
  for (std::size_t i = 0; i < h.headers.size(); ++i) {
    const auto& [name, value] = h.headers[i];
    FUZZ_CHECK(is_token(name));
    // A CR, LF or NUL in a forwarded value is header injection on the server's side.
    for (char c : value) {
      auto u = static_cast<unsigned char>(c);
      FUZZ_CHECK((u >= 0x20 || u == '\t') && u != 0x7f);
    }
    FUZZ_CHECK(value.empty() || (value.front() != ' ' && value.front() != '\t' &&
                                 value.back() != ' ' && value.back() != '\t'));
    // find() gives the first header of that name, whatever its case.
    const std::string* found = h.find(name);
    FUZZ_CHECK(found != nullptr);
    std::size_t first = 0;
    while (!iequals(h.headers[first].first, name)) ++first;
    FUZZ_CHECK(first <= i && found == &h.headers[first].second);
  }
}

void check_framing(const HttpRequestHead& h) {
  std::string error;
  auto f = request_body_framing(h, &error);
  const std::string* te = h.find("transfer-encoding");
  const std::string* cl = h.find("CONTENT-LENGTH");
  if (!f) {
    FUZZ_CHECK(fuzz::one_line(error));
    return;
  }
  if (f->chunked) {
    // Chunked only when the single coding is chunked, and never alongside a length: the
    // CL/TE ambiguity is the classic request-smuggling vector.
    FUZZ_CHECK(te != nullptr && iequals(*te, "chunked") && cl == nullptr);
    FUZZ_CHECK(f->content_length == 0);
    return;
  }
  FUZZ_CHECK(te == nullptr);
  if (cl == nullptr) {
    FUZZ_CHECK(f->content_length == 0);
    return;
  }
  FUZZ_CHECK(!cl->empty() &&
             std::all_of(cl->begin(), cl->end(), [](char c) { return c >= '0' && c <= '9'; }));
  // Every Content-Length header says the same thing.
  for (const auto& [k, v] : h.headers) {
    if (iequals(k, "content-length")) FUZZ_CHECK(v == *cl);
  }
  std::string digits = *cl;
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  FUZZ_CHECK((digits.empty() ? std::string("0") : digits) == std::to_string(f->content_length));
}

void check_absolute_target(const std::string& target) {
  std::string error;
  auto t = parse_absolute_http_target(target, &error);
  if (!t) {
    FUZZ_CHECK(fuzz::one_line(error));
    return;
  }
  auto sep = target.find("://");
  FUZZ_CHECK(sep != std::string::npos && iequals(target.substr(0, sep), "http"));
  FUZZ_CHECK(!t->authority.empty() && t->authority.find_first_of("/?#@") == std::string::npos);
  FUZZ_CHECK(!t->origin_form.empty() && t->origin_form.front() == '/');
  FUZZ_CHECK(t->origin_form.find('#') == std::string::npos);
  // Nothing is lost or invented: the target is http:// + authority + the rest as sent
  // (where "/" stands for an empty path and is put before a bare query).
  std::string_view rest = std::string_view(target).substr(sep + 3);
  FUZZ_CHECK(rest.substr(0, t->authority.size()) == t->authority);
  std::string_view tail = rest.substr(t->authority.size());
  FUZZ_CHECK(tail == t->origin_form || (tail.empty() && t->origin_form == "/") ||
             (tail.front() == '?' && "/" + std::string(tail) == t->origin_form));
}

void check_credentials(std::string_view in) {
  // Whatever a header value holds, a decoded credential is user:password.
  auto raw = decode_basic_credentials(in);
  if (raw) FUZZ_CHECK(raw->find(':') != std::string::npos && raw->size() <= in.size());

  // And any user:password the client encodes comes back unchanged.
  std::string_view creds = in.substr(0, 700);  // 1024 base64 characters at most
  std::string encoded = base64(creds);
  for (std::string value : {"Basic " + encoded, " basic  " + encoded + "\t", "BASIC " + encoded}) {
    auto decoded = decode_basic_credentials(value);
    if (creds.find(':') == std::string_view::npos) {
      FUZZ_CHECK(!decoded);
    } else {
      FUZZ_CHECK(decoded && *decoded == creds);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::size_t blank = in.find("\r\n\r\n");

  HttpRequestHead head;
  const HeadParse r = parse_request_head(in, kMaxHead, head);
  switch (r.status) {
    case HeadStatus::complete: {
      // The head is the bytes up to and including the first blank line, no more, no less.
      FUZZ_CHECK(r.head_bytes <= size && r.head_bytes <= kMaxHead);
      FUZZ_CHECK(blank != std::string_view::npos && r.head_bytes == blank + 4);
      const std::string_view bytes = in.substr(0, r.head_bytes);
      FUZZ_CHECK(bytes.substr(bytes.size() - 4) == "\r\n\r\n");
      FUZZ_CHECK(crlf_only(bytes));
      check_fields(head);

      // What follows the head (a body, a pipelined request) never changes it.
      HttpRequestHead alone;
      auto r2 = parse_request_head(bytes, kMaxHead, alone);
      FUZZ_CHECK(r2.status == HeadStatus::complete && r2.head_bytes == r.head_bytes);
      FUZZ_CHECK(same_head(alone, head));

      // The proxy parses again after every read: a shorter prefix of a good head must ask
      // for more, not be refused or accepted early.
      for (std::size_t cut : {r.head_bytes - 1, r.head_bytes - 2, r.head_bytes - 3,
                              r.head_bytes / 2, std::size_t{1}, std::size_t{0}}) {
        HttpRequestHead partial;
        FUZZ_CHECK(parse_request_head(bytes.substr(0, cut), kMaxHead, partial).status ==
                   HeadStatus::incomplete);
      }

      // The limit is inclusive of the CRLFCRLF: one byte less is too large.
      HttpRequestHead bounded;
      FUZZ_CHECK(parse_request_head(in, r.head_bytes, bounded).status == HeadStatus::complete);
      FUZZ_CHECK(parse_request_head(in, r.head_bytes - 1, bounded).status == HeadStatus::too_large);

      check_framing(head);
      check_absolute_target(head.target);
      for (const auto& [name, value] : head.headers) {
        if (iequals(name, "proxy-authorization")) check_credentials(value);
      }
      break;
    }
    case HeadStatus::incomplete:
      FUZZ_CHECK(size < kMaxHead && blank == std::string_view::npos && !has_bare_lf(in));
      break;
    case HeadStatus::invalid:
      FUZZ_CHECK(fuzz::one_line(r.error));
      break;
    case HeadStatus::too_large:
      FUZZ_CHECK(fuzz::one_line(r.error));
      // Too many bytes, or too many header lines.
      FUZZ_CHECK(size >= kMaxHead || static_cast<std::size_t>(
                                         std::count(in.begin(), in.end(), '\n')) > kMaxHeaderCount);
      break;
  }

  // A tighter limit only ever refuses: it never yields a different head.
  const std::size_t small = size / 2 + 1;
  HttpRequestHead tight;
  const HeadParse rs = parse_request_head(in, small, tight);
  if (r.status == HeadStatus::complete) {
    if (r.head_bytes <= small) {
      FUZZ_CHECK(rs.status == HeadStatus::complete && rs.head_bytes == r.head_bytes);
      FUZZ_CHECK(same_head(tight, head));
    } else {
      FUZZ_CHECK(rs.status == HeadStatus::too_large);
    }
  } else {
    FUZZ_CHECK(rs.status != HeadStatus::complete);
  }

  // The helpers are also called on values the parser did not produce: no crash, no UB.
  std::string error;
  (void)parse_absolute_http_target(in, &error);
  (void)parse_absolute_http_target(in, nullptr);
  check_credentials(in);
  return 0;
}
