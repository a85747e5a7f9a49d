// A generated tree shaped like a JavaScript project's node_modules: packages of 100 files in
// four directories (package.json, lib/, lib/internal/, dist/), and a .bin/ of symlinks. Used
// by the scan-cache tests and by bench/scan_bench.cpp (one generator for both).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <string>

namespace test {

// Creates about `files` files (rounded up to whole packages) under `dir`/node_modules; false
// on the first failure (errno says why).
inline bool make_package_tree(const std::string& dir, std::size_t files) {
  auto touch = [](const std::string& p) {
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    return fd >= 0 && ::close(fd) == 0;
  };
  const std::string nm = dir + "/node_modules";
  if (::mkdir(nm.c_str(), 0755) != 0 || ::mkdir((nm + "/.bin").c_str(), 0755) != 0) return false;
  for (std::size_t pkg = 0, made = 0; made < files; ++pkg) {
    const std::string p = nm + "/package-" + std::to_string(pkg);
    for (const char* sub : {"", "/lib", "/lib/internal", "/dist"}) {
      if (::mkdir((p + sub).c_str(), 0755) != 0) return false;
    }
    if (!touch(p + "/package.json") || !touch(p + "/README.md")) return false;
    for (int i = 0; i < 98; ++i) {
      const char* sub = i < 40 ? "/lib/" : i < 60 ? "/lib/internal/" : "/dist/";
      if (!touch(p + sub + "module" + std::to_string(i) + ".js")) return false;
    }
    made += 100;
    if (pkg % 10 == 0 &&
        ::symlink(("../package-" + std::to_string(pkg) + "/dist/module60.js").c_str(),
                  (nm + "/.bin/tool-" + std::to_string(pkg)).c_str()) != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace test
