// The attack suite's fixture: a scratch tree on the host with a writable workspace and a
// directory outside it, host snapshots to compare before and after, and a runner for the
// attack program (support/attack.cpp) inside a strict sandbox.
#pragma once

#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "paddock/config.hpp"
#include "paddock/manager.hpp"
#include "support/harness.hpp"

namespace test {

// The host's own tools, run on the workspace after the sandbox ended, with nothing of ours in
// the environment. Returns the exit status of the shell line.
inline int host_shell(const std::string& line) {
  std::string cmd = "env -i PATH=/usr/bin:/bin " + line + " </dev/null >/dev/null 2>&1";
  return std::system(cmd.c_str());
}

// Another party racing the sandbox from outside (a second sandbox, the host): `step` runs in a
// loop on a thread of its own while racing. race(false) returns once the racer has finished
// its step and `settled()` says the tree is back as it started (it keeps stepping until then):
// a command started then runs undisturbed, so a test proves commands ran both ways.
class Racer {
 public:
  explicit Racer(
      std::function<void()> step, std::function<bool()> settled = [] { return true; })
      : step_(std::move(step)), settled_(std::move(settled)), thread_([this] { loop(); }) {}
  ~Racer() {
    stop_.store(true);
    thread_.join();
  }
  Racer(const Racer&) = delete;
  Racer& operator=(const Racer&) = delete;
  void race(bool on) {
    racing_.store(on);
    if (on) return;
    paused_.store(false);
    while (!paused_.load()) std::this_thread::yield();
  }

 private:
  void loop() {
    while (!stop_.load()) {
      if (racing_.load() || !settled_()) {
        step_();
        continue;
      }
      paused_.store(true);
    }
  }
  std::function<void()> step_;
  std::function<bool()> settled_;
  std::atomic<bool> stop_{false}, racing_{false}, paused_{true};
  std::thread thread_;  // last: started once the rest is set
};

// A small tmpfs mounted on the host at `path` (root only) for the test's duration.
struct HostTmpfs {
  explicit HostTmpfs(std::string where) : path(std::move(where)) {
    mounted = ::mount("none", path.c_str(), "tmpfs", 0, "size=64k") == 0;
  }
  ~HostTmpfs() {
    if (mounted) ::umount2(path.c_str(), MNT_DETACH);
  }
  HostTmpfs(const HostTmpfs&) = delete;
  HostTmpfs& operator=(const HostTmpfs&) = delete;
  std::string path;
  bool mounted = false;
};

// A scratch tree outside /tmp (the sandbox's writes to /tmp are private, which would make
// "outside is unchanged" trivially true): <scratch>/<id>/ws is the writable workspace,
// <id>/outside is not.
struct Tree {
  Tree();
  ~Tree();
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  static void write(const std::string& path, const std::string& text);
  static std::string read(const std::string& path);
  // Every entry under `dir` with its type, mode, size and content hash: compared before and
  // after.
  static std::map<std::string, std::string> snapshot(const std::string& dir);

  std::string root, ws, outside;
};

paddock::Config sandbox_config();  // DefaultConfig, sandbox strict
// A running sandboxed command wrote `rel` (below its writable root): it is in the upper layer
// of some change set in the default change stores. (The host's workspace shows it only once
// the command has ended and its set was applied.)
bool sandbox_wrote(const std::string& rel);
// That cwd and timeout.
paddock::ExecOptions in(const std::string& cwd,
                        std::chrono::seconds timeout = std::chrono::seconds(20));

// Runs the attack program; returns its result after asserting it ran in a sandbox.
paddock::ExecResult attack(Harness& h, const Tree& t, std::vector<std::string> args);
// The attack program said DENIED and exited 1.
void require_denied(const paddock::ExecResult& r);

// Unlinks `name` and links the same inode back through a second name `via`, as another mount
// namespace (the host, another sandbox) can: the kernel drops every mount on `name` in the
// other namespaces, while every identity check still matches. False if a step failed (link(2)
// does not follow a symlink: a link is re-linked itself).
inline bool relink_from_outside(const std::string& name, const std::string& via) {
  if (::link(name.c_str(), via.c_str()) != 0) return false;
  const bool ok = ::unlink(name.c_str()) == 0 && ::link(via.c_str(), name.c_str()) == 0;
  return ::unlink(via.c_str()) == 0 && ok;
}

// A non-blocking host socket of `type` bound to `path` (a listener the sandbox must not reach).
int bound_unix_socket(int type, const std::string& path);

}  // namespace test
