// Helpers of the attack suites: a scratch tree outside /tmp with a workspace and an outside
// directory, host snapshots, and the attack program run in a sandbox.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/harness.hpp"

namespace test::attacks {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

inline const std::string kAttack = ATTACK_BINARY;

// A scratch tree outside /tmp (the sandbox's /tmp is private, which would make "outside"
// trivially invisible): <scratch>/<id>/ws is the writable workspace, <id>/outside is not.
struct Tree {
  Tree() {
    const char* base = std::getenv("PADDOCK_TEST_SCRATCH");
    fs::path scratch = base != nullptr ? base : TEST_SCRATCH_DIR;
    fs::create_directories(scratch);
    std::string tmpl = (scratch / "attack-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    root = tmpl;
    ws = root + "/ws";
    outside = root + "/outside";
    fs::create_directories(ws + "/.git/hooks");
    fs::create_directories(outside);
    write(outside + "/file", "original\n");
    write(ws + "/.git/config", "[core]\n");
    write(ws + "/.git/hooks/pre-commit", "#!/bin/sh\n");
    write(ws + "/.bashrc", "# rc\n");
    write(ws + "/work.txt", "work\n");
    ::chmod(root.c_str(), 0755);
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Every entry under `dir` with its type, size and content hash: compared before and after.
  static std::map<std::string, std::string> snapshot(const std::string& dir) {
    std::map<std::string, std::string> out;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::none);
         it != fs::recursive_directory_iterator(); ++it) {
      struct stat st {};
      ::lstat(it->path().c_str(), &st);
      std::string what = std::to_string(st.st_mode) + ":" + std::to_string(st.st_size);
      if (S_ISREG(st.st_mode))
        what += ":" + std::to_string(std::hash<std::string>{}(read(it->path())));
      out[it->path().string()] = what;
    }
    return out;
  }
  std::string root, ws, outside;
};

inline paddock::Config sandbox_config() {
  paddock::Config c = paddock::DefaultConfig();
  c.sandbox.enabled = true;
  c.sandbox.fallback = paddock::FallbackMode::strict;
  return c;
}

inline paddock::ExecOptions in(const std::string& cwd) {
  paddock::ExecOptions o;
  o.cwd = cwd;
  o.timeout = 20s;
  return o;
}

// Runs the attack program; returns its result after asserting it ran in a sandbox.
inline paddock::ExecResult attack(test::Harness& h, const Tree& t, std::vector<std::string> args) {
  args.insert(args.begin(), kAttack);
  auto r = h.exec(test::argv(args), in(t.ws));
  INFO("attack " << args[1] << ": " << r.result.stdout_data << r.result.stderr_data
                 << r.result.error);
  REQUIRE_FALSE(r.ec);
  REQUIRE(r.result.sandboxed);
  return r.result;
}

inline void require_denied(const paddock::ExecResult& r) {
  INFO(r.stdout_data << r.stderr_data);
  CHECK(r.exit_code == 1);
  CHECK(r.stdout_data.find("DENIED") != std::string::npos);
  CHECK(r.stdout_data.find("SUCCEEDED") == std::string::npos);
}

}  // namespace test::attacks
