#include "support/attack_fixture.hpp"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sandbox/change_set.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace test {

Tree::Tree() {
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

Tree::~Tree() {
  std::error_code ec;
  fs::remove_all(root, ec);
}

void Tree::write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string Tree::read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::map<std::string, std::string> Tree::snapshot(const std::string& dir) {
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

paddock::Config sandbox_config() {
  paddock::Config c = unclassified();
  c.sandbox.enabled = true;
  c.sandbox.fallback = paddock::FallbackMode::strict;
  return c;
}

bool sandbox_wrote(const std::string& rel) {
  const char* home = std::getenv("HOME");
  for (const auto& store : paddock::sandbox::change_stores("", home != nullptr ? home : "")) {
    std::error_code ec;
    for (const auto& set : fs::directory_iterator(store, ec)) {
      for (const auto& root : fs::directory_iterator(set.path() / "roots", ec)) {
        if (fs::exists(root.path() / "upper" / rel, ec)) return true;
      }
    }
  }
  return false;
}

paddock::ExecOptions in(const std::string& cwd, std::chrono::seconds timeout) {
  paddock::ExecOptions o;
  o.cwd = cwd;
  o.timeout = timeout;
  return o;
}

paddock::ExecResult attack(Harness& h, const Tree& t, std::vector<std::string> args) {
  args.insert(args.begin(), ATTACK_BINARY);
  auto r = h.exec(argv(args), in(t.ws));
  INFO("attack " << args[1] << ": " << r.result.stdout_data << r.result.stderr_data
                 << r.result.error);
  REQUIRE_FALSE(r.ec);
  REQUIRE(r.result.sandboxed);
  return r.result;
}

void require_denied(const paddock::ExecResult& r) {
  INFO(r.stdout_data << r.stderr_data);
  CHECK(r.exit_code == 1);
  CHECK(r.stdout_data.find("DENIED") != std::string::npos);
  CHECK(r.stdout_data.find("SUCCEEDED") == std::string::npos);
}

int bound_unix_socket(int type, const std::string& path) {
  int fd = ::socket(AF_UNIX, type | SOCK_NONBLOCK, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  return fd;
}

}  // namespace test
