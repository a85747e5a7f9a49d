#include "support/seccomp_child.hpp"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <sstream>

namespace test {
namespace {

// What the sandboxed child does before execve, minus the namespaces: drop every capability,
// NO_NEW_PRIVS, then the raw seccomp() syscall.
void confine(const paddock::sandbox::SeccompProgram& program, const Reporter& out) {
  for (int cap = 0; cap < 64; ++cap) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);  // EPERM as nobody
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) {
    out("confine_capset", -1);
    ::_exit(3);
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    out("confine_nnp", -1);
    ::_exit(3);
  }
  out("confined", ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, program.fprog()));
  if (::syscall(SYS_capget, &header, data) == 0) {
    out("cap_effective", static_cast<long>(data[0].effective | data[1].effective));
  }
}

}  // namespace

void Reporter::operator()(const char* name, long rc) const {
  const int err = rc < 0 ? errno : 0;
  char line[160];
  int n = std::snprintf(line, sizeof line, "%s %ld %d\n", name, rc, err);
  if (n > 0) (void)!::write(fd, line, static_cast<std::size_t>(n));
}

void Reporter::fd_result(const char* name, long rc) const {
  const int err = errno;
  if (rc >= 0) ::close(static_cast<int>(rc));
  errno = err;
  (*this)(name, rc < 0 ? rc : 0);
}

std::string ChildRun::operator[](const std::string& name) const {
  auto it = outcomes.find(name);
  if (it == outcomes.end()) return name + " (not reported)";
  const char* err = it->second.second == 0 ? "0" : ::strerrorname_np(it->second.second);
  return name + " " + std::to_string(it->second.first) + " " + (err ? err : "?");
}

std::string ChildRun::succeeded(const std::string& name) const {
  auto it = outcomes.find(name);
  if (it != outcomes.end() && it->second.first >= 0) return name + " ok";
  return (*this)[name];
}

ChildRun run_child(const paddock::sandbox::SeccompProgram* program, ChildBody body, void* context) {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(30);
    Reporter out{fds[1]};
    if (program != nullptr) confine(*program, out);
    body(out, context);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  ChildRun run;
  while (::waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
  }
  std::istringstream lines(text);
  std::string name;
  long rc = 0;
  int err = 0;
  while (lines >> name >> rc >> err) run.outcomes[name] = {rc, err};
  return run;
}

long wait_status(pid_t pid) {
  if (pid < 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool killed_by(int status, int sig) { return WIFSIGNALED(status) && WTERMSIG(status) == sig; }

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by ") + ::sigabbrev_np(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace test
