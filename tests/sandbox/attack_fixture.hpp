// The attack suites' shared fixture: a scratch tree outside /tmp (the sandbox's /tmp is
// private, which would make "outside" trivially invisible) with a writable workspace, a
// directory outside it, snapshots to prove the host unchanged, and a strict sandbox config.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "paddock/config.hpp"
#include "paddock/manager.hpp"

namespace attack_fixture {

namespace fs = std::filesystem;

// <scratch>/<id>/ws is the writable workspace (with .git/hooks, .git/config, .bashrc),
// <id>/outside is not writable.
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
  Tree(const Tree&) = delete;
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
      if (S_ISREG(st.st_mode)) {
        what += ":" + std::to_string(std::hash<std::string>{}(read(it->path())));
      }
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
  o.timeout = std::chrono::seconds(20);
  return o;
}

}  // namespace attack_fixture
