#include "cli/user_daemon.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <asio/post.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <string_view>
#include <vector>

#include "base/directory_entries.hpp"
#include "base/unique_fd.hpp"
#include "paddock/errors.hpp"

namespace paddock::cli {

void own_directory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw Error(errc::config_invalid, dir + ": " + std::strerror(errno));
  }
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 077) != 0) {
    throw Error(errc::config_invalid, dir +
                                          ": not a private directory of this user (mode 0700, "
                                          "owned by uid " +
                                          std::to_string(::geteuid()) + ", no link)");
  }
}

std::string user_runtime_dir(const std::string& sub) {
  std::string base;
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && *runtime == '/') {
    struct stat st;
    if (::stat(runtime, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid()) {
      base = std::string(runtime) + "/paddock";
    }
  }
  if (base.empty()) base = "/tmp/paddock-" + std::to_string(::geteuid());
  own_directory(base);
  own_directory(base + "/" + sub);
  return base + "/" + sub;
}

std::string socket_path(const std::string& dir, const std::string& file) {
  const std::string path = dir + "/" + file;
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    throw Error(errc::config_invalid, path + ": too long for a unix socket");
  }
  return path;
}

int connect_own(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(a.sun_path, path.c_str(), path.size());
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return -1;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
      cred.uid != ::geteuid()) {
    errno = EPERM;
    return -1;
  }
  return fd.release();
}

bool answers(const std::string& path) { return UniqueFd(connect_own(path)).get() >= 0; }

namespace {

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The lock at `path`, taken without waiting and still the file of that name; `create` makes a
// missing one.
UniqueFd take_lock(const std::string& path, bool create) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    UniqueFd fd(
        ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0), 0600));
    if (fd.get() < 0) return fd;
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      const int why = errno;  // not the close's
      fd.reset();
      errno = why;
      return fd;
    }
    struct stat held, named;
    if (::fstat(fd.get(), &held) == 0 && ::lstat(path.c_str(), &named) == 0 &&
        same_file(held, named)) {
      return fd;
    }
    // Its holder removed it between our open and our flock (remove_name): the name is free,
    // but not through this file. Open it again.
    if (!create) break;
  }
  errno = EAGAIN;
  return UniqueFd();
}

}  // namespace

UniqueFd take_name_lock(const std::string& base) { return take_lock(base + ".lock", true); }

std::string name_of_socket(const std::string& socket) {
  return socket.substr(0, socket.size() - std::string_view(".sock").size());
}

void remove_name(const std::string& base) {
  for (const char* suffix : {".sock", ".json", ".json.part", ".lock"}) {
    ::unlink((base + suffix).c_str());
  }
}

bool name_held(const std::string& base) {
  const UniqueFd fd(::open((base + ".lock").c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
  return fd.get() >= 0 && ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

void remove_dead_names(const std::string& dir) {
  UniqueFd listing(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (listing.get() < 0) return;
  std::vector<std::string> locks;
  base::for_each_directory_entry(listing.get(), [&](const char* name, unsigned char) {
    const std::string_view n(name);
    if (n.size() > 5 && n.ends_with(".lock")) locks.emplace_back(n.substr(0, n.size() - 5));
    return true;
  });
  for (const std::string& stem : locks) {
    const std::string base = dir + "/" + stem;
    const UniqueFd lock = take_lock(base + ".lock", false);
    if (lock.get() < 0) continue;  // held: a live daemon's, or one starting
    spdlog::info("removing {}: no daemon holds its lock", base);
    remove_name(base);
  }
}

DaemonStart start_daemon(int lock_fd, const std::function<int(int ready)>& body) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) {
    throw Error(errc::spawn_failed, std::string("pipe: ") + std::strerror(errno));
  }
  DaemonStart started;
  started.pid = ::fork();
  if (started.pid < 0) {
    const int e = errno;
    ::close(ready[0]);
    ::close(ready[1]);
    throw Error(errc::spawn_failed, std::string("fork: ") + std::strerror(e));
  }
  if (started.pid == 0) {
    ::setsid();
    // Detached: the shell that started us may close its terminal, and a pipe it gave us
    // (a `$(paddock session start)`) must see EOF once the caller returns: nothing of the
    // caller's is kept but the readiness pipe, moved to fd 3, and the lock, fd 4. Both first
    // above any fd they could land on (either may be 3 or 4 now).
    const int keep_ready = ::fcntl(ready[1], F_DUPFD_CLOEXEC, 10);
    const int keep_lock = ::fcntl(lock_fd, F_DUPFD_CLOEXEC, 10);
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
    ::dup2(keep_ready, 3);
    ::dup2(keep_lock, 4);
    ::close_range(5, ~0U, 0);
    ::fcntl(3, F_SETFD, FD_CLOEXEC);
    ::fcntl(4, F_SETFD, FD_CLOEXEC);
    spdlog::set_level(spdlog::level::off);
    ::_exit(body(3));
  }
  ::close(ready[1]);
  char buf[512];
  ssize_t n;
  // One line: the daemon's children (sandboxes it makes) may hold the pipe open past it.
  while (started.line.find('\n') == std::string::npos &&
         ((n = ::read(ready[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))) {
    if (n > 0) started.line.append(buf, static_cast<size_t>(n));
  }
  ::close(ready[0]);
  return started;
}

void run_until_ended(asio::any_io_executor ex,
                     const std::function<std::optional<std::chrono::milliseconds>()>& check) {
  // On a strand, and owned by its handlers: one that comes after we returned (the loop's
  // threads go on) finds `stopped` and touches nothing of the caller's.
  struct State {
    explicit State(const asio::strand<asio::any_io_executor>& s)
        : poll(s), signals(s, SIGINT, SIGTERM, SIGHUP) {}
    asio::steady_timer poll;
    asio::signal_set signals;
    std::function<std::optional<std::chrono::milliseconds>()> check;
    bool stopped = false;
    std::promise<void> ended;
    void end() {
      if (stopped) return;
      stopped = true;
      poll.cancel();
      signals.cancel();
      ended.set_value();
    }
    static void look(const std::shared_ptr<State>& s) {
      if (s->stopped) return;
      const auto next = s->check();
      if (!next) return s->end();
      s->poll.expires_after(*next);
      s->poll.async_wait([s](const std::error_code& ec) {
        if (!ec) look(s);
      });
    }
  };
  const auto strand = asio::make_strand(ex);
  auto state = std::make_shared<State>(strand);
  state->check = check;
  auto ended = state->ended.get_future();
  asio::post(strand, [state] { State::look(state); });
  state->signals.async_wait([state](const std::error_code& ec, int) {
    if (!ec) state->end();
  });
  ended.wait();
}

void tell_ready(int ready, const std::string& line) {
  const std::string text = line + "\n";
  if (::write(ready, text.data(), text.size()) < 0) return;
}

}  // namespace paddock::cli
