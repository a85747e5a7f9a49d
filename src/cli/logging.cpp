#include "cli/logging.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/option_values.hpp"
#include "cli/terminal.hpp"

namespace paddock::cli {
namespace {

const char* level_name(spdlog::level::level_enum l) {
  switch (l) {
    case spdlog::level::trace:
      return "trace";
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    case spdlog::level::err:
      return "error";
    case spdlog::level::critical:
      return "critical";
    default:
      return "off";
  }
}

std::string utc_time(spdlog::log_clock::time_point t) {
  const auto since = t.time_since_epoch();
  const std::time_t secs = std::chrono::duration_cast<std::chrono::seconds>(since).count();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(since).count() % 1000;
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[40];
  std::size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof(buf) - n, ".%03dZ", static_cast<int>(ms));
  return buf;
}

// One write(2) per line, so lines from the loop thread and the resolver pool never interleave
// mid-line with each other or with the command's own stderr that the CLI forwards.
class StderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit StderrSink(bool json) : json_(json) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string_view text(msg.payload.data(), msg.payload.size());
    std::string line;
    if (json_) {
      nlohmann::json j = {
          {"time", utc_time(msg.time)}, {"level", level_name(msg.level)}, {"message", text}};
      // Messages carry command-controlled text (argv, hosts): ASCII-only JSON, never raw bytes.
      line = j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
    } else {
      line = "paddock[" + std::string(level_name(msg.level)) + "]: " + terminal_safe(text);
    }
    line += '\n';
    std::string_view rest = line;
    while (!rest.empty()) {
      ssize_t n = ::write(STDERR_FILENO, rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void flush_() override {}

 private:
  bool json_;
};

}  // namespace

spdlog::level::level_enum log_level(const char* env, int verbosity) {
  auto level = spdlog::level::warn;
  if (env != nullptr && *env != '\0') {
    const std::string_view name(env);
    static constexpr std::pair<std::string_view, spdlog::level::level_enum> kNames[] = {
        {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug},
        {"info", spdlog::level::info},   {"warn", spdlog::level::warn},
        {"error", spdlog::level::err},   {"off", spdlog::level::off}};
    bool known = false;
    for (auto [n, l] : kNames) {
      if (n == name) level = l, known = true;
    }
    if (!known) {
      throw BadValue("expected trace, debug, info, warn, error or off, got '" + std::string(name) +
                     "'");
    }
  }
  if (verbosity > 0) {
    const auto from_flag = verbosity == 1   ? spdlog::level::info
                           : verbosity == 2 ? spdlog::level::debug
                                            : spdlog::level::trace;
    level = std::min(level, from_flag);
  }
  return level;
}

void setup_logging(spdlog::level::level_enum level, bool json) {
  auto logger = std::make_shared<spdlog::logger>("paddock", std::make_shared<StderrSink>(json));
  logger->set_level(level);
  spdlog::set_default_logger(std::move(logger));
}

void log_network_event(const NetworkEvent& e) {
  if (e.allowed) {
    spdlog::debug("network: allowed {} {} via {} for {}", e.protocol, e.target, e.address,
                  e.process);
  } else {
    spdlog::info("network: refused {} {} for {}: {}", e.protocol, e.target, e.process, e.reason);
  }
}

}  // namespace paddock::cli
