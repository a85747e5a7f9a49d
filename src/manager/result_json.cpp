#include "paddock/result_json.hpp"

#include "paddock/errors.hpp"

namespace paddock {
nlohmann::json to_json(const ExecResult& r, const std::error_code& ec) {
  nlohmann::json j;
  j["exit_code"] = r.exit_code;
  j["signal"] = r.signal;
  j["timed_out"] = r.timed_out;
  j["stdout"] = r.stdout_data;
  j["stderr"] = r.stderr_data;
  j["truncated"] = r.truncated;
  j["stdout_bytes_total"] = r.stdout_bytes_total;
  j["stderr_bytes_total"] = r.stderr_bytes_total;
  j["duration_ms"] = r.duration.count();
  j["sandboxed"] = r.sandboxed;
  j["decision"] = to_string(r.decision);
  auto& violations = j["violations"] = nlohmann::json::array();
  for (const auto& v : r.violations) {
    violations.push_back({{"operation", v.operation},
                          {"path", v.path},
                          {"detail", v.detail},
                          {"process", v.process},
                          {"raw", v.raw}});
  }
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
  return to_json(result, ec).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

}  // namespace paddock
