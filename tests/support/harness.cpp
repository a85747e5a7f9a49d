#include "support/harness.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <future>
#include <sstream>
#include <string_view>
#include <thread>

#include "sandbox/linux/netns_pool.hpp"

namespace test {

paddock::Runtime& shared_runtime() {
  static paddock::Runtime runtime(paddock::RuntimeOptions{2});
  return runtime;
}

Harness::Harness(paddock::Config config)
    : runtime(shared_runtime()), manager(runtime.executor(), std::move(config)) {}

paddock::BlockingResult Harness::exec(paddock::Command command, paddock::ExecOptions options) {
  std::promise<paddock::BlockingResult> done;
  auto f = done.get_future();
  manager.async_exec(std::move(command), std::move(options),
                     [&done](std::error_code ec, paddock::ExecResult r) {
                       done.set_value({ec, std::move(r)});
                     });
  return f.get();
}

paddock::Command argv(std::vector<std::string> args) {
  return paddock::Command::exec(std::move(args));
}
paddock::Command sh(std::string script) {
  return paddock::Command::shell_string(std::move(script));
}

std::map<int, std::string> open_fds() {
  std::map<int, std::string> fds;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    const int own = ::dirfd(d);
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      const int fd = std::atoi(e->d_name);
      if (fd == own) continue;
      char link[256] = {};
      std::string path = std::string("/proc/self/fd/") + e->d_name;
      if (::readlink(path.c_str(), link, sizeof(link) - 1) < 0) continue;  // closed meanwhile
      // Network namespaces are pooled on purpose (up to 64 idle ones, each with the sock_diag
      // socket that asks about it, and one handle per spawning thread to come back to): not a
      // leak.
      if (std::string_view(link).starts_with("net:[")) continue;
      if (std::string_view(link).starts_with("socket:[")) {
        int domain = 0, protocol = 0;
        socklen_t len = sizeof(int);
        if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_NETLINK &&
            ::getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) == 0 &&
            protocol == NETLINK_SOCK_DIAG) {
          continue;
        }
      }
      // Mount templates are kept on purpose (up to 8, each with its source when unprivileged;
      // sandbox/linux/mount_template.hpp), and so is the mount table they are checked against.
      if (std::string_view(link).starts_with("mnt:[")) continue;
      if (std::string_view(link) == "/proc/" + std::to_string(::getpid()) + "/mountinfo") continue;
      // paddock-init's image: one sealed memfd per process, made with the first Manager.
      if (std::string_view(link).starts_with("/memfd:paddock-init")) continue;
      fds.emplace(fd, link);
    }
    ::closedir(d);
  }
  return fds;
}

int count_open_fds() { return static_cast<int>(open_fds().size()); }

std::string fds_opened_since(const std::map<int, std::string>& before) {
  std::string added;
  for (const auto& [fd, link] : open_fds()) {
    auto it = before.find(fd);
    if (it != before.end() && it->second == link) continue;
    added += std::to_string(fd) + " -> " + link + "\n";
  }
  return added;
}

std::string fds_left_open_since(const std::map<int, std::string>& before,
                                std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  std::string added = fds_opened_since(before);
  while (!added.empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    added = fds_opened_since(before);
  }
  return added;
}

namespace {
// One byte with room for one descriptor (SCM_RIGHTS), to send or to receive; no allocation
// (a forked child of the threaded test process uses it).
struct OneFdMessage {
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  char byte = 's';
  iovec iov{&byte, 1};
  msghdr msg{};
  OneFdMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  OneFdMessage(const OneFdMessage&) = delete;
};
}  // namespace

int socket_in_netns(int ns, int userns, int domain, int type, int protocol) {
  if (userns < 0) {
    if (!paddock::sandbox::enter_network_namespace(ns)) return -1;
    const int s = ::socket(domain, type | SOCK_CLOEXEC, protocol);
    paddock::sandbox::leave_network_namespace();
    return s;
  }
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {  // async-signal-safe calls only: the test process has threads
    if (::setns(userns, CLONE_NEWUSER) != 0 || ::setns(ns, CLONE_NEWNET) != 0) ::_exit(1);
    int s = ::socket(domain, type | SOCK_CLOEXEC, protocol);
    if (s < 0) ::_exit(2);
    OneFdMessage m;
    cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    __builtin_memcpy(CMSG_DATA(c), &s, sizeof(int));
    ::_exit(::sendmsg(pair[1], &m.msg, 0) == 1 ? 0 : 3);
  }
  ::close(pair[1]);
  int got = -1;
  if (pid > 0) {
    OneFdMessage m;
    if (::recvmsg(pair[0], &m.msg, MSG_CMSG_CLOEXEC) == 1) {
      if (cmsghdr* c = CMSG_FIRSTHDR(&m.msg); c != nullptr && c->cmsg_type == SCM_RIGHTS) {
        std::memcpy(&got, CMSG_DATA(c), sizeof(int));
      }
    }
    ::waitpid(pid, nullptr, 0);
  }
  ::close(pair[0]);
  return got;
}

namespace {
// (state, ppid) of a process from /proc/PID/stat; state '?' if gone.
std::pair<char, pid_t> stat_of(pid_t pid) {
  // Not through iostreams: a process that exits between the open and the read fails the read
  // with ESRCH, which libstdc++'s filebuf throws through istreambuf_iterator.
  std::string text;
  const int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) text.assign(buf, static_cast<std::size_t>(n));
    ::close(fd);
  }
  auto close = text.rfind(')');
  if (close == std::string::npos) return {'?', 0};
  std::istringstream rest(text.substr(close + 2));
  char state = '?';
  pid_t ppid = 0;
  rest >> state >> ppid;
  return {state, ppid};
}
}  // namespace

std::vector<pid_t> zombie_children(std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    auto now = zombie_children_now();
    if (now.empty() || std::chrono::steady_clock::now() >= until) return now;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::vector<pid_t> zombie_children_now() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  if (DIR* d = ::opendir("/proc")) {
    while (dirent* e = ::readdir(d)) {
      pid_t pid = static_cast<pid_t>(std::atol(e->d_name));
      if (pid <= 0) continue;
      auto [state, ppid] = stat_of(pid);
      if (ppid == self && state == 'Z') out.push_back(pid);
    }
    ::closedir(d);
  }
  return out;
}

bool process_alive(pid_t pid) {
  auto [state, ppid] = stat_of(pid);
  (void)ppid;
  return state != '?' && state != 'Z' && state != 'X';
}

namespace {
std::size_t status_kib(const std::string& key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) == 0) return std::stoul(line.substr(key.size()));
  }
  return 0;
}
}  // namespace

std::size_t peak_rss_kib() { return status_kib("VmHWM:"); }
std::size_t rss_kib() { return status_kib("VmRSS:"); }
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// `paddock run` keeps a helper per user and context between runs (cli/run_helper.hpp): every
// test's scratch home would leave one behind for its idle time. The suite runs paddock in
// process unless a test asks for the helper itself (PADDOCK_HELPER=1, or its variable unset
// in a test of the default), whatever the developer's environment says (before main).
const bool g_no_helpers = ::setenv("PADDOCK_HELPER", "0", 1) == 0;

paddock::Config host_config() {
  paddock::Config c = unclassified();
  c.sandbox.enabled = false;
  // The paddock binary these run gets the suite's choice (above), not the default.
  c.env_allow.emplace_back("PADDOCK_HELPER");
  return c;
}

paddock::Config unclassified() {
  paddock::Config c = paddock::DefaultConfig();
  c.commands.classify = false;
  return c;
}

}  // namespace test
