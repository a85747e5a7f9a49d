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
  if (!r.unsandboxed_reason.empty()) j["unsandboxed_reason"] = r.unsandboxed_reason;
  if (ec) {
    j["error_code"] = std::string(code_string(ec));
    j["error"] = r.error.empty() ? ec.message() : r.error;
  }
  return j;
}

}  // namespace paddock

namespace paddock {

std::string to_json_line(const ExecResult& result, const std::error_code& ec) {
  // ensure_ascii: every non-ASCII character as \uXXXX. Lossless for a JSON reader, and a
  // command's C1 controls (U+009B is CSI to a UTF-8 terminal) never reach a terminal raw.
  // stdout/stderr are valid UTF-8 or base64 by now; `replace` is for the other strings a
  // command can influence (violation paths, error text), which are descriptions, not data.
  return to_json(result, ec).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

}  // namespace paddock
