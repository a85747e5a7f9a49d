// Helpers of the path policy's unit tests: a scratch tree with a fake home, and the
// resolved rules as comparable lines.
#pragma once

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sandbox/path_policy.hpp"

namespace test::paths {

namespace fs = std::filesystem;
using paddock::FilesystemPolicy;
using paddock::sandbox::ResolvedFilesystem;

// A fresh directory (by its real path) in the tests' scratch directory, removed with
// everything in it. Not under /tmp: the sandbox's /tmp is private, so the policy treats the
// host's tree there as hidden (a test of that builds its paths under /tmp on purpose).
struct Tree {
  Tree() {
    fs::create_directories(TEST_SCRATCH_DIR);
    std::string pattern = std::string(TEST_SCRATCH_DIR) + "/paddock-paths-XXXXXX";
    std::vector<char> tmpl(pattern.begin(), pattern.end());
    tmpl.push_back('\0');
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    char real[PATH_MAX];
    REQUIRE(::realpath(tmpl.data(), real) != nullptr);
    root = real;
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  std::string operator()(const std::string& rel) const { return root + "/" + rel; }
  std::string dir(const std::string& rel) const {
    fs::create_directories((*this)(rel));
    return (*this)(rel);
  }
  std::string file(const std::string& rel, const std::string& content = "x") const {
    fs::create_directories(fs::path((*this)(rel)).parent_path());
    std::ofstream((*this)(rel)) << content;
    return (*this)(rel);
  }
  std::string link(const std::string& target, const std::string& rel) const {
    fs::create_directories(fs::path((*this)(rel)).parent_path());
    fs::create_symlink(target, (*this)(rel));
    return (*this)(rel);
  }
  std::string root;
};

// Only what a test asks for: no default denies, cwd not writable.
inline FilesystemPolicy bare() {
  FilesystemPolicy p;
  p.default_denies = false;
  p.allow_write_cwd = false;
  return p;
}

// The rules as "access path" lines, in order: a whole-list comparison shows order and the
// absence of no-ops at once.
inline std::vector<std::string> lines(const ResolvedFilesystem& r) {
  std::vector<std::string> out;
  for (const auto& rule : r.rules) {
    out.push_back(std::string(paddock::sandbox::to_string(rule.access)) + " " + rule.path);
  }
  return out;
}

// The rules under `prefix` only (defaults add host paths such as /etc/shadow).
inline std::vector<std::string> lines_under(const ResolvedFilesystem& r,
                                            const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& l : lines(r)) {
    if (l.find(" " + prefix) != std::string::npos) out.push_back(l);
  }
  return out;
}

inline const paddock::sandbox::PathRule* rule_at(const ResolvedFilesystem& r,
                                                 const std::string& path) {
  for (const auto& rule : r.rules) {
    if (rule.path == path) return &rule;
  }
  return nullptr;
}

inline bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace test::paths
