// What `paddock serve` counts for its operators, in Prometheus' text format (/metrics): every
// field an atomic, bumped from any connection's strand.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "paddock/exec_result.hpp"
#include "paddock/manager.hpp"

namespace paddock::serve {

struct Metrics {
  // Started commands by decision (allow, sandboxed, escalated, forbidden).
  std::array<std::atomic<std::uint64_t>, 4> started{};
  // Finished commands by outcome.
  enum Outcome { exited, signalled, timed_out, cancelled, refused, failed, kOutcomes };
  std::array<std::atomic<std::uint64_t>, kOutcomes> finished{};
  std::atomic<std::int64_t> in_flight{0};
  std::atomic<std::int64_t> connections{0};
  std::atomic<std::uint64_t> connections_total{0};
  std::atomic<std::uint64_t> connections_refused{0};  // peer credentials, token, limits
  std::atomic<std::int64_t> queued_bytes{0};          // in every connection's send queue
  std::atomic<std::uint64_t> output_bytes{0};         // command output sent to clients
  std::atomic<std::uint64_t> protocol_errors{0};
  std::atomic<std::uint64_t> overloaded{0};
  std::atomic<std::uint64_t> network_denials{0};
  std::atomic<std::uint64_t> backpressure_pauses{0};
  // Request -> started (the spawn and the sandbox set-up; approvals excluded), seconds.
  static constexpr std::array<double, 12> kBuckets = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                                      0.1,   0.25,  0.5,   1,    2.5,  10};
  std::array<std::atomic<std::uint64_t>, kBuckets.size() + 1> spawn_latency{};
  std::atomic<std::uint64_t> spawn_latency_sum_us{0};
  std::atomic<std::uint64_t> spawn_latency_count{0};

  void observe_spawn(std::chrono::microseconds took) noexcept;
  void count_finish(const ExecResult& r, std::error_code ec, bool was_cancelled) noexcept;
  // `warm`: the Manager's sandboxes made ahead (Manager::warm_sandbox_counts).
  std::string prometheus(bool ready, const Manager::WarmSandboxCounts& warm) const;
};

}  // namespace paddock::serve
