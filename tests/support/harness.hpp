// Shared helpers for the tests: a runtime + manager pair, a blocking exec that keeps the error
// code, and the host-side checks (open fds, zombies, process liveness).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "paddock/manager.hpp"
#include "paddock/runtime.hpp"

namespace test {

// A Manager on the process-wide test runtime (2 threads). One runtime for all tests: an
// io_uring ring is charged to RLIMIT_MEMLOCK for unprivileged users and freed asynchronously,
// so a ring per test would run the unprivileged test run out of locked memory.
struct Harness {
  explicit Harness(paddock::Config config = paddock::DefaultConfig());
  paddock::BlockingResult exec(paddock::Command command, paddock::ExecOptions options = {});
  paddock::Runtime& runtime;
  paddock::Manager manager;
};

paddock::Runtime& shared_runtime();

// DefaultConfig() without the sandbox: for the cases about host-side supervision itself.
paddock::Config host_config();

paddock::Command argv(std::vector<std::string> args);
paddock::Command sh(std::string script);

int count_open_fds();                  // entries in /proc/self/fd
std::vector<pid_t> zombie_children();  // our children in state Z
bool process_alive(pid_t pid);         // exists and is not a zombie
std::size_t peak_rss_kib();            // VmHWM
void reset_peak_rss();                 // clear_refs 5
std::size_t rss_kib();                 // VmRSS
double seconds_since(std::chrono::steady_clock::time_point t);

}  // namespace test
