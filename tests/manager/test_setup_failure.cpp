// A sandbox that could not be set up for a transient reason (a port in use, a process or
// descriptor limit, memory) must fail the command with E_SPAWN_FAILED, and under the warn
// fallback must never run it on the host: only a feature this platform lacks may.
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "manager/setup_failure.hpp"
#include "paddock/sandbox_policy.hpp"
#include "sandbox/linux/netns_pool.hpp"
#include "support/harness.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using paddock::manager::classify_setup_failure;

namespace {

constexpr int kSandboxFlags =
    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;

paddock::process::SpawnResult clone_failed(int err, const char* step = "clone",
                                           bool feature = true) {
  paddock::process::SpawnResult s;
  s.error = err;
  s.failed_step = step;
  s.feature_step = feature;
  return s;
}

paddock::process::SpawnResult child_failed(int err, const char* step, const char* path,
                                           bool feature) {
  paddock::process::SpawnResult s;
  s.pid = 4242;  // a child that exited before execve
  s.pidfd = -1;
  s.error = err;
  s.failed_step = step;
  s.failed_path = path;
  s.sandbox_failed = true;
  s.feature_step = feature;
  return s;
}

bool has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string scratch_dir(const std::string& name) {
  const char* base = std::getenv("PADDOCK_TEST_SCRATCH");
  fs::path dir = fs::path(base != nullptr ? base : TEST_SCRATCH_DIR) /
                 (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

paddock::Config warn_config(paddock::NetworkMode mode) {
  paddock::Config c = test::unclassified();
  c.sandbox.network.mode = mode;
  c.sandbox.fallback = paddock::FallbackMode::warn;
  return c;
}

// Runs a command that leaves a marker on the host if it runs at all, and checks that it did
// not: the set-up failed, the result says spawn_failed (exit 125 on the CLI), not unsandboxed.
void require_refused_not_run(paddock::Config config, const std::string& expected_step) {
  const std::string dir = scratch_dir("setup-failure");
  const std::string marker = dir + "/ran";
  test::Harness h(std::move(config));
  paddock::ExecOptions o;
  o.cwd = dir;
  o.timeout = 20s;
  auto r = h.exec(test::sh("echo ran > " + marker), o);
  INFO(r.ec.message() << ": " << r.result.error);
  CHECK(r.ec == paddock::errc::spawn_failed);
  CHECK(paddock::code_string(r.ec) == "E_SPAWN_FAILED");
  CHECK(has(r.result.error, expected_step));
  CHECK_FALSE(has(r.result.error, "UNSANDBOXED"));
  CHECK_FALSE(r.result.sandboxed);
  CHECK_FALSE(fs::exists(marker));
  fs::remove_all(dir);
}

}  // namespace

TEST_CASE("set-up failures: only a missing feature is the platform's", "[fallback]") {
  SECTION("clone refused with namespace flags: a feature this host lacks") {
    for (int err : {EPERM, EINVAL, ENOSYS, EACCES, EUSERS}) {
      auto f = classify_setup_failure(clone_failed(err), kSandboxFlags);
      REQUIRE(f);
      CHECK(f->platform);
      CHECK(has(f->reason, "sandbox unavailable"));
    }
  }
  SECTION("clone out of processes, memory or descriptors: this moment's") {
    for (int err : {EAGAIN, ENOMEM, EMFILE, ENFILE}) {
      auto f = classify_setup_failure(clone_failed(err), kSandboxFlags);
      REQUIRE(f);
      CHECK_FALSE(f->platform);
      CHECK(has(f->reason, "clone: " + std::string(std::strerror(err))));
    }
  }
  SECTION("clone at a namespace limit: the platform's only where the limit is 0") {
    bool switched_off = false;
    for (const char* kind : {"user", "mnt", "pid", "ipc", "uts", "cgroup"}) {
      std::ifstream in(std::string("/proc/sys/user/max_") + kind + "_namespaces");
      std::string v;
      if (std::getline(in, v) && v == "0") switched_off = true;
    }
    auto f = classify_setup_failure(clone_failed(ENOSPC), kSandboxFlags);
    REQUIRE(f);
    CHECK(f->platform == switched_off);
  }
  SECTION("entering the pooled namespace or making the child's stack: never the platform's") {
    for (int err : {EINVAL, EPERM, ENOMEM}) {
      auto setns = classify_setup_failure(clone_failed(err, "setns (network namespace)", false),
                                          kSandboxFlags);
      REQUIRE(setns);
      CHECK_FALSE(setns->platform);
      auto stack =
          classify_setup_failure(clone_failed(err, "mmap (child stack)", false), kSandboxFlags);
      REQUIRE(stack);
      CHECK_FALSE(stack->platform);
    }
  }
  SECTION("the proxy listener's port in use, descriptors or memory short: this moment's") {
    for (int err : {EADDRINUSE, EMFILE, ENFILE, ENOMEM, EAGAIN, ENOBUFS}) {
      auto f = classify_setup_failure(
          child_failed(err, "bind the proxy listener", "127.0.0.1", false), kSandboxFlags);
      REQUIRE(f);
      CHECK_FALSE(f->platform);
    }
    auto f = classify_setup_failure(
        child_failed(EADDRINUSE, "bind the proxy listener", "127.0.0.1", false), kSandboxFlags);
    CHECK(f->reason ==
          "sandbox set-up failed: bind the proxy listener 127.0.0.1: Address already in use");
  }
  SECTION("a feature step refused: the platform's; the same step short of memory: not") {
    for (int err : {EPERM, EACCES, EINVAL, ENOSYS, EOPNOTSUPP}) {
      CHECK(classify_setup_failure(child_failed(err, "mount proc", "/proc", true), kSandboxFlags)
                ->platform);
    }
    for (int err : {ENOMEM, EMFILE, EAGAIN, EBUSY, ENOSPC}) {
      CHECK_FALSE(
          classify_setup_failure(child_failed(err, "mount proc", "/proc", true), kSandboxFlags)
              ->platform);
    }
  }
  SECTION("a path step refused (EPERM/EACCES on a policy path): the command's, not the host's") {
    for (int err : {EPERM, EACCES, ENOENT, ELOOP}) {
      CHECK_FALSE(
          classify_setup_failure(child_failed(err, "attach mount", "/w/.git", false), kSandboxFlags)
              ->platform);
    }
  }
  SECTION("no set-up failure: nothing to classify") {
    CHECK_FALSE(classify_setup_failure(paddock::process::SpawnResult{4242, -1, 0}, kSandboxFlags));
    auto exec_failed = child_failed(ENOENT, "execve", nullptr, false);
    exec_failed.sandbox_failed = false;
    CHECK_FALSE(classify_setup_failure(exec_failed, kSandboxFlags));
  }
}

TEST_CASE("fallback warn or strict: a busy proxy port fails the command, never runs it on the host",
          "[netns][fallback]") {
  for (auto mode : {paddock::FallbackMode::warn, paddock::FallbackMode::strict}) {
    INFO((mode == paddock::FallbackMode::warn ? "warn" : "strict"));
    // Every idle namespace of the pool gets a listener on the proxy's port behind the pool's
    // back, after the pool checked it: the next child's bind fails with EADDRINUSE, whichever
    // namespace it is given (64: as many as the pool keeps idle).
    std::vector<int> handles, busy;
    int userns = -1;
    {
      std::vector<paddock::sandbox::NetnsLease> all;
      for (int i = 0; i < 64; ++i) {
        all.push_back(paddock::sandbox::lease_network_namespace());
        if (all.back().fd() < 0) {
          SUCCEED("no namespace is pooled here");
          return;
        }
        handles.push_back(::fcntl(all.back().fd(), F_DUPFD_CLOEXEC, 0));
        REQUIRE(handles.back() >= 0);
        userns = all.back().user_namespace();
      }
    }  // back to the pool, checked and idle
    for (const int ns : handles) {
      busy.push_back(test::socket_in_netns(ns, userns, AF_INET, SOCK_STREAM));
      REQUIRE(busy.back() >= 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(paddock::kSandboxProxyPort);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      REQUIRE(::bind(busy.back(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
      REQUIRE(::listen(busy.back(), 1) == 0);
    }

    auto config = warn_config(paddock::NetworkMode::filtered);
    config.sandbox.fallback = mode;
    require_refused_not_run(std::move(config), "bind the proxy listener 127.0.0.1");
    for (const int fd : busy) ::close(fd);
    for (const int fd : handles) ::close(fd);
  }
}

TEST_CASE("fallback warn: a process limit at clone fails the command and never runs it on the host",
          "[fallback]") {
  if (::geteuid() == 0) {
    SUCCEED("root is not held to RLIMIT_NPROC; the nobody run covers this");
    return;
  }
  // Every process of this user counts against the limit: 1 stops our next clone (EAGAIN).
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_NPROC, &saved) == 0);
  rlimit one = saved;
  one.rlim_cur = 1;
  REQUIRE(::setrlimit(RLIMIT_NPROC, &one) == 0);
  require_refused_not_run(warn_config(paddock::NetworkMode::blocked), "clone");
  require_refused_not_run(warn_config(paddock::NetworkMode::filtered), "clone");
  REQUIRE(::setrlimit(RLIMIT_NPROC, &saved) == 0);
}
