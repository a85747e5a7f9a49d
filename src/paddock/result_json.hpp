// The JSON shape of a result (docs/cli.md, `--json`; and the serve protocol's `exit`).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "paddock/exec_result.hpp"

namespace paddock {

// exit_code, signal, timed_out, stdout, stderr, truncated, duration_ms, sandboxed, decision,
// violations[]; plus error / error_code when paddock itself failed. stdout/stderr are the
// bytes as text when they are valid UTF-8; otherwise base64, with stdout_encoding /
// stderr_encoding set to "base64" (the field is absent for text). Nothing is replaced.
nlohmann::json to_json(const ExecResult& result, const std::error_code& ec = {});

// The other way (a client of the serve protocol reading an `exit`): every field to_json
// writes; stdout/stderr decoded when present. `ec` (may be null) gets error_code's code.
ExecResult result_from_json(const nlohmann::json& j, std::error_code* ec = nullptr);

// One line of JSON (no newline), safe for any output bytes.
std::string to_json_line(const ExecResult& result, const std::error_code& ec = {});

}  // namespace paddock
