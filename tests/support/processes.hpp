// Processes on the host by a marker in their command line, polled against a deadline (never
// a fixed sleep): for tests that check a command and what it started are running, or gone.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>

namespace test {

// The real uid of process `pid` (its status file), or -1 once it is gone.
inline long real_uid_of(const char* pid) {
  const int fd = ::open((std::string("/proc/") + pid + "/status").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[4096];
  const ssize_t got = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (got <= 0) return -1;
  buf[got] = '\0';
  const char* uid = std::strstr(buf, "\nUid:");
  return uid != nullptr ? std::strtol(uid + 5, nullptr, 10) : -1;
}

// Processes of this user (real uid) whose command line (arguments joined by spaces) contains
// `marker`; `skip_pid`, when given, is not counted. A zombie has no command line left. Only
// this user's: ctest runs the suite as root and its copy as nobody at the same time, with the
// same markers, and a sandboxed command runs under its supervisor's uid.
inline int processes_with(const std::string& marker, int skip_pid = 0) {
  int n = 0;
  const long me = static_cast<long>(::getuid());
  DIR* d = ::opendir("/proc");
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    if (skip_pid > 0 && std::atoi(e->d_name) == skip_pid) continue;
    if (real_uid_of(e->d_name) != me) continue;
    // read(2), not a stream: a process that exits meanwhile fails the read (ESRCH), and
    // libstdc++'s filebuf throws for that.
    const int fd =
        ::open((std::string("/proc/") + e->d_name + "/cmdline").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[4096];
    const ssize_t got = ::read(fd, buf, sizeof buf);
    ::close(fd);
    if (got <= 0) continue;
    std::string line(buf, static_cast<std::size_t>(got));
    for (auto& c : line) c = c == '\0' ? ' ' : c;
    if (line.find(marker) != std::string::npos) ++n;
  }
  ::closedir(d);
  return n;
}

// "started" means the sandbox's init has the command; the command's own processes follow.
inline bool running_within(const std::string& marker, int count, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (processes_with(marker) < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

inline bool gone_within(const std::string& marker, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (processes_with(marker) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polled against a deadline
  }
  return false;
}

}  // namespace test
