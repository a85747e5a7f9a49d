// A scratch tree with real git repositories for the git-state tests: the host's git runs with
// no machine config, no discovery above the tree, a fixed identity, and under a kill timeout.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "support/attack_fixture.hpp"

namespace test {

namespace fs = std::filesystem;

struct Scratch {
  // `under`: a directory of the test's own choosing (a host mount there must not sit below
  // the host's /tmp, where it would make every concurrent sandbox's /tmp private: see
  // test_host_tmp.cpp).
  explicit Scratch(const std::string& under = {}) {
    const char* base = std::getenv("PADDOCK_TEST_SCRATCH");
    fs::path scratch = !under.empty() ? under : base != nullptr ? base : TEST_SCRATCH_DIR;
    fs::create_directories(scratch);
    std::string tmpl = (scratch / "git-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    root = tmpl;
    ::chmod(root.c_str(), 0755);
    ws = root + "/ws";
    canary = root + "/canary";
    fs::create_directories(root + "/home");
    fs::create_directories(ws);
  }
  ~Scratch() {
    // Quarantined directories may keep the modes a command gave them.
    host("chmod -R u+rwx " + root + " 2>/dev/null; true");
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  // The environment both the host's and the sandbox's git run with: no system or user config
  // of the machine, no discovery above the scratch tree, a fixed identity.
  std::string env() const {
    return "export HOME=" + root + "/home GIT_CONFIG_NOSYSTEM=1 GIT_CEILING_DIRECTORIES=" + root +
           " GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t "
           "GIT_TERMINAL_PROMPT=0; ";
  }
  // Runs `script` on the host under a 20 s kill timeout; returns its status and output.
  struct Out {
    int status;
    std::string text;
  };
  Out host(const std::string& script) const {
    std::string cmd = "timeout -s KILL 20 sh -c '" + quote(env() + script) + "' 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string text;
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) text.append(buf, n);
    int status = ::pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), text};
  }
  static std::string quote(const std::string& s) {
    std::string out;
    for (char c : s) c == '\'' ? out += "'\\''" : out += c;
    return out;
  }
  // A repository with one commit at `dir`.
  void repo(const std::string& dir) const {
    auto r = host("git -c init.defaultBranch=main init -q " + dir + " && cd " + dir +
                  " && echo base > base.txt && git add base.txt && git commit -q -m base");
    INFO(r.text);
    REQUIRE(r.status == 0);
  }
  bool canary_appeared() const { return fs::exists(canary); }
  // Entries directly in `dir` whose name starts with `name` (or `.name`) + the quarantine
  // marker.
  static int quarantined(const std::string& dir, const std::string& name) {
    int n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string f = e.path().filename().string();
      // Special files are quarantined under a dot name (quarantine.hpp).
      if (f.starts_with(name + ".paddock-quarantine-") ||
          f.starts_with("." + name + ".paddock-quarantine-")) {
        ++n;
      }
    }
    return n;
  }
  std::string root, ws, canary;
};

// Git in a sandbox on a loaded machine: a longer bound than the attack suite's.
inline paddock::ExecOptions git_in(const std::string& cwd) {
  return in(cwd, std::chrono::seconds(60));
}

}  // namespace test
