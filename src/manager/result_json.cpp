#include "paddock/result_json.hpp"

#include "paddock/errors.hpp"
#include "runtime/text_encoding.hpp"

namespace paddock {
namespace {

// A command's bytes in JSON without loss: text when they are valid UTF-8, else base64 with
// `<name>_encoding: "base64"` beside them (a cap can also cut a character in two: then the
// kept bytes are not valid UTF-8 either, and are carried the same way).
void put_output(nlohmann::json& j, const char* name, const std::string& bytes) {
  if (is_valid_utf8(bytes)) {
    j[name] = bytes;
    return;
  }
  j[name] = base64_encode(bytes);
  j[std::string(name) + "_encoding"] = "base64";
}

}  // namespace

nlohmann::json to_json(const ExecResult& r, const std::error_code& ec) {
  nlohmann::json j;
  j["exit_code"] = r.exit_code;
  j["signal"] = r.signal;
  j["timed_out"] = r.timed_out;
  put_output(j, "stdout", r.stdout_data);
  put_output(j, "stderr", r.stderr_data);
  j["truncated"] = r.truncated;
  j["stdout_bytes_total"] = r.stdout_bytes_total;
  j["stderr_bytes_total"] = r.stderr_bytes_total;
  j["duration_ms"] = r.duration.count();
  j["sandboxed"] = r.sandboxed;
  j["decision"] = to_string(r.decision);
  if (!r.rule.empty()) j["rule"] = r.rule;
  if (!r.reason.empty()) j["reason"] = r.reason;
  auto& violations = j["violations"] = nlohmann::json::array();
  for (const auto& v : r.violations) {
    violations.push_back({{"operation", v.operation},
                          {"path", v.path},
                          {"detail", v.detail},
                          {"process", v.process},
                          {"raw", v.raw}});
  }
  // Only when there is something to say: a command that changed nothing has no set left.
  const ChangeSummary& c = r.changes;
  if (!c.id.empty() &&
      (c.added + c.modified + c.deleted > 0 || !c.held.empty() || !c.pending.empty())) {
    auto held = nlohmann::json::array();
    for (const auto& h : r.changes.held) held.push_back({{"path", h.path}, {"reason", h.reason}});
    j["changes"] = {{"id", r.changes.id},
                    {"added", r.changes.added},
                    {"modified", r.changes.modified},
                    {"deleted", r.changes.deleted},
                    {"bytes", r.changes.bytes},
                    {"held", held}};
    if (!r.changes.pending.empty()) j["changes"]["pending"] = r.changes.pending;
  }
  if (r.discarded.entries > 0 || r.discarded.bytes > 0 || r.discarded.at_least) {
    j["discarded"] = {{"where", "private /tmp and /var/tmp"},
                      {"entries", r.discarded.entries},
                      {"bytes", r.discarded.bytes}};
    if (r.discarded.at_least) j["discarded"]["at_least"] = true;
  }
  if (!r.unsandboxed_reason.empty()) j["unsandboxed_reason"] = r.unsandboxed_reason;
  if (ec) {
    j["error_code"] = std::string(code_string(ec));
    j["error"] = r.error.empty() ? ec.message() : r.error;
  }
  return j;
}

}  // namespace paddock

namespace paddock {

ExecResult result_from_json(const nlohmann::json& j, std::error_code* ec) {
  ExecResult r;
  auto get = [&j](const char* key, auto fallback) {
    const auto it = j.find(key);
    using T = decltype(fallback);
    if (it == j.end() || it->is_null()) return fallback;
    if constexpr (std::is_same_v<T, bool>) {
      return it->is_boolean() ? it->template get<bool>() : fallback;
    } else if constexpr (std::is_arithmetic_v<T>) {
      return it->is_number() ? it->template get<T>() : fallback;
    } else {
      return it->is_string() ? it->template get<std::string>() : fallback;
    }
  };
  auto bytes = [&](const char* name) {
    std::string text = get(name, std::string());
    if (get((std::string(name) + "_encoding").c_str(), std::string()) == "base64") {
      if (auto decoded = base64_decode(text)) return std::move(*decoded);
    }
    return text;
  };
  r.exit_code = get("exit_code", -1);
  r.signal = get("signal", 0);
  r.timed_out = get("timed_out", false);
  r.stdout_data = bytes("stdout");
  r.stderr_data = bytes("stderr");
  r.truncated = get("truncated", false);
  r.stdout_bytes_total = get("stdout_bytes_total", std::uint64_t{0});
  r.stderr_bytes_total = get("stderr_bytes_total", std::uint64_t{0});
  r.duration = std::chrono::milliseconds(get("duration_ms", std::int64_t{0}));
  r.sandboxed = get("sandboxed", false);
  const std::string decision = get("decision", std::string("sandboxed"));
  for (Decision d :
       {Decision::allow, Decision::sandboxed, Decision::escalated, Decision::forbidden}) {
    if (decision == to_string(d)) r.decision = d;
  }
  r.rule = get("rule", std::string());
  r.reason = get("reason", std::string());
  if (const auto it = j.find("violations"); it != j.end() && it->is_array()) {
    for (const auto& v : *it) {
      if (!v.is_object()) continue;
      r.violations.push_back({v.value("operation", ""), v.value("path", ""), v.value("detail", ""),
                              v.value("process", ""), v.value("raw", "")});
    }
  }
  if (const auto it = j.find("changes"); it != j.end() && it->is_object()) {
    const nlohmann::json& c = *it;
    auto count = [&c](const char* key) {
      const auto f = c.find(key);
      return f != c.end() && f->is_number_unsigned() ? f->get<std::uint64_t>() : std::uint64_t{0};
    };
    r.changes.id = c.value("id", "");
    r.changes.added = count("added");
    r.changes.modified = count("modified");
    r.changes.deleted = count("deleted");
    r.changes.bytes = count("bytes");
    r.changes.pending = c.value("pending", "");
    if (const auto held = c.find("held"); held != c.end() && held->is_array()) {
      for (const auto& h : *held) {
        if (h.is_object()) r.changes.held.push_back({h.value("path", ""), h.value("reason", "")});
      }
    }
  }
  if (const auto it = j.find("discarded"); it != j.end() && it->is_object()) {
    const nlohmann::json& d = *it;
    auto count = [&d](const char* key) {
      const auto f = d.find(key);
      return f != d.end() && f->is_number_unsigned() ? f->get<std::uint64_t>() : std::uint64_t{0};
    };
    r.discarded.entries = count("entries");
    r.discarded.bytes = count("bytes");
    r.discarded.at_least = d.value("at_least", false);
  }
  r.unsandboxed_reason = get("unsandboxed_reason", std::string());
  r.error = get("error", std::string());
  r.pid = get("pid", 0);
  if (ec != nullptr) {
    *ec = {};
    const std::string code = get("error_code", std::string());
    *ec = error_code_from_string(code);
    if (!code.empty() && !*ec) *ec = std::make_error_code(std::errc::protocol_error);
  }
  return r;
}

std::string to_json_line(const ExecResult& result, const std::error_code& ec) {
  // ensure_ascii: every non-ASCII character as \uXXXX. Lossless for a JSON reader, and a
  // command's C1 controls (U+009B is CSI to a UTF-8 terminal) never reach a terminal raw.
  // stdout/stderr are valid UTF-8 or base64 by now; `replace` is for the other strings a
  // command can influence (violation paths, error text), which are descriptions, not data.
  return to_json(result, ec).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

}  // namespace paddock
