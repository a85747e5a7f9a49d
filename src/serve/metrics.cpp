#include "serve/metrics.hpp"

#include <cstdio>

#include "paddock/errors.hpp"

namespace paddock::serve {

void Metrics::observe_spawn(std::chrono::microseconds took) noexcept {
  const double seconds = static_cast<double>(took.count()) / 1e6;
  std::size_t i = 0;
  while (i < kBuckets.size() && seconds > kBuckets[i]) ++i;
  spawn_latency[i].fetch_add(1, std::memory_order_relaxed);
  spawn_latency_sum_us.fetch_add(static_cast<std::uint64_t>(took.count()),
                                 std::memory_order_relaxed);
  spawn_latency_count.fetch_add(1, std::memory_order_relaxed);
}

void Metrics::count_finish(const ExecResult& r, std::error_code ec, bool was_cancelled) noexcept {
  Outcome o = exited;
  if (was_cancelled) {
    o = cancelled;
  } else if (ec == errc::timeout) {
    o = timed_out;
  } else if (ec == errc::forbidden_command || ec == errc::escalated_command ||
             ec == errc::sandbox_violation) {
    o = refused;
  } else if (ec) {
    o = failed;
  } else if (r.signal != 0) {
    o = signalled;
  }
  finished[o].fetch_add(1, std::memory_order_relaxed);
  for (const auto& v : r.violations) {
    if (v.operation == "network") network_denials.fetch_add(1, std::memory_order_relaxed);
  }
}

std::string Metrics::prometheus(bool ready, const Manager::WarmSandboxCounts& warm) const {
  std::string out;
  auto metric = [&out](const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  auto value = [&out](const std::string& series, auto v) {
    out += series + " " + std::to_string(v) + "\n";
  };
  auto get = [](const auto& a) { return a.load(std::memory_order_relaxed); };

  metric("paddock_ready", "gauge", "1 while accepting commands, 0 while draining");
  value("paddock_ready", ready ? 1 : 0);
  metric("paddock_commands_started_total", "counter", "Commands started, by decision");
  for (Decision d :
       {Decision::allow, Decision::sandboxed, Decision::escalated, Decision::forbidden}) {
    value(std::string("paddock_commands_started_total{decision=\"") + to_string(d) + "\"}",
          get(started[static_cast<std::size_t>(d)]));
  }
  metric("paddock_commands_finished_total", "counter", "Commands finished, by outcome");
  static constexpr const char* kOutcomeNames[] = {"exited",    "signalled", "timed_out",
                                                  "cancelled", "refused",   "failed"};
  for (std::size_t i = 0; i < kOutcomes; ++i) {
    value(std::string("paddock_commands_finished_total{outcome=\"") + kOutcomeNames[i] + "\"}",
          get(finished[i]));
  }
  metric("paddock_commands_in_flight", "gauge", "Commands running or waiting for approval");
  value("paddock_commands_in_flight", get(in_flight));
  metric("paddock_connections", "gauge", "Open client connections");
  value("paddock_connections", get(connections));
  metric("paddock_connections_total", "counter", "Client connections accepted");
  value("paddock_connections_total", get(connections_total));
  metric("paddock_connections_refused_total", "counter",
         "Connections refused (peer credentials, token, limits)");
  value("paddock_connections_refused_total", get(connections_refused));
  metric("paddock_send_queue_bytes", "gauge", "Bytes waiting in the clients' send queues");
  value("paddock_send_queue_bytes", get(queued_bytes));
  metric("paddock_output_bytes_total", "counter", "Command output sent to clients");
  value("paddock_output_bytes_total", get(output_bytes));
  metric("paddock_protocol_errors_total", "counter", "Lines answered with an error event");
  value("paddock_protocol_errors_total", get(protocol_errors));
  metric("paddock_overloaded_total", "counter", "Requests refused past a limit (E_OVERLOADED)");
  value("paddock_overloaded_total", get(overloaded));
  metric("paddock_network_denials_total", "counter", "Requests the filtering proxy refused");
  value("paddock_network_denials_total", get(network_denials));
  metric("paddock_backpressure_pauses_total", "counter",
         "Times a command's output was paused for a slow client");
  value("paddock_backpressure_pauses_total", get(backpressure_pauses));
  metric("paddock_warm_sandboxes_used_total", "counter",
         "Sandboxed commands that found a sandbox made ahead for their plan");
  value("paddock_warm_sandboxes_used_total", warm.used);
  metric("paddock_warm_sandboxes_missed_total", "counter",
         "Sandboxed commands that made their sandbox at their start");
  value("paddock_warm_sandboxes_missed_total", warm.made_at_start);
  metric("paddock_warm_sandboxes_waiting", "gauge", "Sandboxes made ahead, waiting for a command");
  value("paddock_warm_sandboxes_waiting", warm.waiting);
  metric("paddock_spawn_latency_seconds", "histogram",
         "From the exec request to the command's start (approval excluded)");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= kBuckets.size(); ++i) {
    cumulative += get(spawn_latency[i]);
    char le[32];
    if (i < kBuckets.size()) {
      std::snprintf(le, sizeof le, "%g", kBuckets[i]);
    } else {
      std::snprintf(le, sizeof le, "+Inf");
    }
    value(std::string("paddock_spawn_latency_seconds_bucket{le=\"") + le + "\"}", cumulative);
  }
  char sum[64];
  std::snprintf(sum, sizeof sum, "%.6f", static_cast<double>(get(spawn_latency_sum_us)) / 1e6);
  out += std::string("paddock_spawn_latency_seconds_sum ") + sum + "\n";
  value("paddock_spawn_latency_seconds_count", get(spawn_latency_count));
  return out;
}

}  // namespace paddock::serve
