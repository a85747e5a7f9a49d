// Shared helpers for the tests: a runtime + manager pair, a blocking exec that keeps the error
// code, and the host-side checks (open fds, zombies, process liveness).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "paddock/manager.hpp"
#include "paddock/runtime.hpp"

namespace test {

// DefaultConfig() without the classifier: supervision and isolation must hold on their own,
// so their tests run what the classifier would refuse or ask about (kill, chmod, &, nc, ...).
// The classifier's own tests use DefaultConfig().
paddock::Config unclassified();

// A Manager on the process-wide test runtime (2 threads). One runtime for all tests: an
// io_uring ring is charged to RLIMIT_MEMLOCK for unprivileged users and freed asynchronously,
// so a ring per test would run the unprivileged test run out of locked memory.
struct Harness {
  explicit Harness(paddock::Config config = unclassified());
  paddock::BlockingResult exec(paddock::Command command, paddock::ExecOptions options = {});
  paddock::Runtime& runtime;
  paddock::Manager manager;
};

paddock::Runtime& shared_runtime();

// DefaultConfig() without the sandbox: for the cases about host-side supervision itself.
paddock::Config host_config();

paddock::Command argv(std::vector<std::string> args);
paddock::Command sh(std::string script);

int count_open_fds();  // entries in /proc/self/fd (pooled netns handles aside)
// The descriptors open now (fd -> what it is), and those opened since such a snapshot, one
// "fd -> target" per line: empty when none, so a leak check names what leaked.
std::map<int, std::string> open_fds();
std::string fds_opened_since(const std::map<int, std::string>& before);
// The same, polled until none is left or the deadline passes: a socket the proxy session is
// done with is closed by its last handler, which may run just after the command's completion
// (paddock never closes a descriptor under an in-flight operation).
std::string fds_left_open_since(const std::map<int, std::string>& before,
                                std::chrono::milliseconds deadline = std::chrono::seconds(5));
// Our children in state Z, once none is left or the deadline passed: a sandbox's init is
// reaped just after its command completed (the command ends on the init's report, before the
// init's own exit; manager/exec_operation.cpp), so a leak is one that stays.
// A socket (as socket(2) takes them) made inside the pooled network namespace `ns`
// (sandbox/linux/netns_pool.hpp). Root's pool: this thread goes in and comes back. An
// unprivileged pool's (`userns` >= 0, NetnsLease::user_namespace): a forked child, with one
// thread, joins its user namespace first, then `ns`, and sends the socket back.
int socket_in_netns(int ns, int userns, int domain, int type, int protocol = 0);

std::vector<pid_t> zombie_children(std::chrono::milliseconds deadline = std::chrono::seconds(5));
std::vector<pid_t> zombie_children_now();
bool process_alive(pid_t pid);  // exists and is not a zombie
std::size_t peak_rss_kib();     // VmHWM
void reset_peak_rss();          // clear_refs 5
std::size_t rss_kib();          // VmRSS
double seconds_since(std::chrono::steady_clock::time_point t);

}  // namespace test
