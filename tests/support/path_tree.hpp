// Helpers of the path policy's unit tests: a scratch tree under /tmp with a fake home, and the
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

// A fresh directory under /tmp (by its real path), removed with everything in it.
struct Tree {
  Tree() {
    char tmpl[] = "/tmp/paddock-paths-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    char real[PATH_MAX];
    REQUIRE(::realpath(tmpl, real) != nullptr);
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

// The policy these tests start from: the trees live under /tmp, whose host contents a
// private /tmp hides (path_policy.cpp), so they are judged as any host path would be. The
// fake home is not hidden either (test_hidden_home.cpp has those rules).
inline FilesystemPolicy host_policy() {
  FilesystemPolicy p;
  p.private_tmp = false;
  p.hide_home = false;
  return p;
}

// Only what a test asks for: no default denies, cwd not writable.
inline FilesystemPolicy bare() {
  FilesystemPolicy p = host_policy();
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
