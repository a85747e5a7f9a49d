// paddock's own diagnostics (what it decided and why: the policy it resolved, the event
// backend, each proxied request, how the command ended), through spdlog, on stderr. The
// user-facing "paddock: ..." lines (say()) are not logs: they are always there.
//
// Level: PADDOCK_LOG=trace|debug|info|warn|error|off (default warn), or -v (info), -vv (debug),
// -vvv (trace); the more verbose of the two wins. Text lines read "paddock[LEVEL]: MESSAGE"
// with control bytes escaped; with --json each line is one JSON object
// {"time","level","message"} so a caller that parses stdout can parse stderr too.
#pragma once

#include <spdlog/common.h>

#include "paddock/network.hpp"

namespace paddock::cli {

// PADDOCK_LOG (may be null) and the -v count; throws BadValue for an unknown level name.
spdlog::level::level_enum log_level(const char* env, int verbosity);

// Installs the default logger: stderr, text or JSON lines.
void setup_logging(spdlog::level::level_enum level, bool json);

// One proxied request of the command, decided: "network: refused ..." (info) or "network:
// allowed ..." (debug). The same line in process and through a helper or daemon.
void log_network_event(const NetworkEvent& e);

}  // namespace paddock::cli
