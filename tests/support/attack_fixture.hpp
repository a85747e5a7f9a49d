// The attack suite's fixture: a scratch tree on the host with a writable workspace and a
// directory outside it, host snapshots to compare before and after, and a runner for the
// attack program (support/attack.cpp) inside a strict sandbox.
#pragma once

#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
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
