// paddock_exec_timer [--tsv FILE] LABEL RUNS 'COMMAND LINE' [LABEL RUNS 'COMMAND LINE' ...]
// Times whole programs, a posix_spawn + waitpid each (no shell in between), interleaved round
// robin so drift on a noisy machine hits every command alike: a command with fewer runs than
// the others is spread evenly over the rounds. The command line is split on whitespace. Prints
// one markdown row per command (median, p99, mean, median / the first command's median); a
// command that fails (non-zero exit) is reported with its output instead of numbers. --tsv also
// writes "LABEL<TAB>median<TAB>p99<TAB>mean" in µs (or "LABEL<TAB>failed") for scripts.
// A command line starting with `as:USER` runs as that user (root only): fork, setgroups,
// setgid, setuid, execvp, with no program in between; compare such rows with each other (the
// others are a posix_spawn, a fork is dearer).
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

#include "stats.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

struct Command {
  std::string label;
  int runs = 0;
  std::vector<std::string> words;
  std::vector<char*> argv;
  std::vector<double> us;
  bool as_user = false;  // `as:USER`: run as uid/gid
  uid_t uid = 0;
  gid_t gid = 0;
  int failures = 0;
  std::string failure;  // the first failed run's exit status and output
};

// The child's stdout and stderr go to one memfd, read only when a run fails.
class Output {
 public:
  Output() : fd_(::memfd_create("paddock-exec-timer", MFD_CLOEXEC)) {}
  int fd() const { return fd_; }
  void reset() {
    ::ftruncate(fd_, 0);
    ::lseek(fd_, 0, SEEK_SET);
  }
  std::string text() const {
    std::string s(4096, '\0');
    ssize_t n = ::pread(fd_, s.data(), s.size(), 0);
    s.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    // One table cell: no newlines or pipes.
    for (char& c : s) {
      if (c == '\n' || c == '\r') c = ' ';
      if (c == '|') c = '/';
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  }

 private:
  int fd_;
};

// Runs `c` once; returns the elapsed microseconds, or a negative number if it failed.
double run_once(Command& c, Output& out, posix_spawn_file_actions_t* actions) {
  out.reset();
  auto t = clock_type::now();
  pid_t pid = -1;
  int rc = 0;
  if (c.as_user) {
    pid = ::fork();
    if (pid == 0) {
      const int null = ::open("/dev/null", O_RDONLY);
      if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(out.fd(), 1) < 0 || ::dup2(out.fd(), 2) < 0 ||
          ::setgroups(0, nullptr) != 0 || ::setgid(c.gid) != 0 || ::setuid(c.uid) != 0) {
        ::_exit(126);
      }
      // The caller's runtime directory is not this user's: a paddock helper of this user's
      // lives in its own (/tmp/paddock-UID).
      ::unsetenv("XDG_RUNTIME_DIR");
      ::execvp(c.argv[0], c.argv.data());
      ::_exit(127);
    }
    if (pid < 0) rc = errno;
  } else {
    rc = posix_spawnp(&pid, c.argv[0], actions, nullptr, c.argv.data(), environ);
  }
  int status = 0;
  if (rc == 0) ::waitpid(pid, &status, 0);
  double us = std::chrono::duration<double, std::micro>(clock_type::now() - t).count();
  if (rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) return us;
  if (c.failures++ == 0) {
    if (rc != 0) {
      c.failure = std::string("posix_spawn: ") + std::strerror(rc);
    } else if (WIFEXITED(status)) {
      c.failure = "exit status " + std::to_string(WEXITSTATUS(status)) + ": " + out.text();
    } else {
      c.failure = "killed by signal " + std::to_string(WTERMSIG(status)) + ": " + out.text();
    }
  }
  return -1;
}

using bench::Stats;
using bench::stats;

std::string ms(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, us >= 10000 ? "%.1f ms" : "%.2f ms", us / 1000.0);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const char* tsv_path = nullptr;
  if (argc > 2 && std::strcmp(argv[1], "--tsv") == 0) {
    tsv_path = argv[2];
    argv += 2;
    argc -= 2;
  }
  if (argc < 4 || (argc - 1) % 3 != 0) {
    std::fprintf(stderr, "usage: %s LABEL RUNS 'COMMAND LINE' [LABEL RUNS 'COMMAND LINE' ...]\n",
                 argv[0]);
    return 2;
  }
  std::vector<Command> commands;
  for (int i = 1; i + 2 < argc; i += 3) {
    Command c;
    c.label = argv[i];
    c.runs = std::atoi(argv[i + 1]);
    std::istringstream words(argv[i + 2]);
    for (std::string w; words >> w;) c.words.push_back(w);
    if (!c.words.empty() && c.words.front().starts_with("as:")) {
      const std::string user = c.words.front().substr(3);
      const passwd* pw = ::getpwnam(user.c_str());
      if (pw == nullptr) {
        std::fprintf(stderr, "paddock_exec_timer: no user '%s' for '%s'\n", user.c_str(), argv[i]);
        return 2;
      }
      c.as_user = true;
      c.uid = pw->pw_uid;
      c.gid = pw->pw_gid;
      c.words.erase(c.words.begin());
    }
    if (c.runs < 1 || c.words.empty()) {
      std::fprintf(stderr, "paddock_exec_timer: bad RUNS or empty command for '%s'\n", argv[i]);
      return 2;
    }
    commands.push_back(std::move(c));
  }
  for (auto& c : commands) {
    for (auto& w : c.words) c.argv.push_back(w.data());
    c.argv.push_back(nullptr);
  }

  Output out;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd(), 1);
  posix_spawn_file_actions_adddup2(&actions, out.fd(), 2);

  // Warm-up (page cache, dynamic loader): a tenth of the runs, 1 to 20. A command that fails
  // here is not run again; its failure is the result.
  for (auto& c : commands) {
    int warm = std::clamp(c.runs / 10, 1, 20);
    for (int i = 0; i < warm && c.failures == 0; ++i) run_once(c, out, &actions);
  }

  int rounds = 0;
  for (const auto& c : commands) rounds = std::max(rounds, c.runs);
  for (int r = 0; r < rounds; ++r) {
    for (auto& c : commands) {
      if (c.failures > 0) continue;
      // Spread c.runs over `rounds`: run in round r when the scaled count steps up.
      long before = static_cast<long>(r) * c.runs / rounds;
      long after = static_cast<long>(r + 1) * c.runs / rounds;
      if (after == before) continue;
      double us = run_once(c, out, &actions);
      if (us >= 0) c.us.push_back(us);
    }
  }
  posix_spawn_file_actions_destroy(&actions);

  FILE* tsv = tsv_path != nullptr ? std::fopen(tsv_path, "w") : nullptr;
  if (tsv_path != nullptr && tsv == nullptr) std::perror(tsv_path);
  const Command& base = commands.front();
  const double base_median = base.failures == 0 ? stats(base.us).median : 0;
  for (const auto& c : commands) {
    if (c.failures > 0) {
      std::printf("| %s | failed | | | | %s |\n", c.label.c_str(), c.failure.c_str());
      if (tsv != nullptr) std::fprintf(tsv, "%s\tfailed\n", c.label.c_str());
      continue;
    }
    Stats s = stats(c.us);
    if (tsv != nullptr) {
      std::fprintf(tsv, "%s\t%.1f\t%.1f\t%.1f\n", c.label.c_str(), s.median, s.p99, s.mean);
    }
    char cell[32] = "";
    if (base_median > 0) std::snprintf(cell, sizeof cell, "%.1f×", s.median / base_median);
    std::printf("| %s | %zu | %s | %s | %s | %s |\n", c.label.c_str(), c.us.size(),
                ms(s.median).c_str(), ms(s.p99).c_str(), ms(s.mean).c_str(), cell);
  }
  if (tsv != nullptr) std::fclose(tsv);
  int failed = 0;
  for (const auto& c : commands) failed += c.failures > 0;
  return failed == 0 ? 0 : 3;
}
