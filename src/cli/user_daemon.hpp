// Daemons of the user's own behind a unix socket: `paddock session start`'s (one session each)
// and `paddock run`'s helper (cli/run_helper.cpp). Their sockets live in a directory of this
// user alone, $XDG_RUNTIME_DIR/paddock/<sub>, else /tmp/paddock-UID/<sub>: every level made
// 0700 and checked to be ours and no link, so a socket there is never another user's stand-in.
#pragma once

#include <sys/types.h>

#include <asio/any_io_executor.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "base/unique_fd.hpp"

namespace paddock::cli {

// A directory of ours alone: made 0700 when missing; Error(config_invalid) when it is a link,
// another user's, or open to others.
void own_directory(const std::string& dir);

// The runtime directory <base>/<sub> (above), made and checked.
std::string user_runtime_dir(const std::string& sub);

// `dir`/`file`, or Error(config_invalid) when too long for a unix socket's address.
std::string socket_path(const std::string& dir, const std::string& file);

// A connection to the unix socket `path` whose peer is a process of this uid (what we send
// may be our environment: a socket swapped in by someone else must not get it), or -1.
int connect_own(const std::string& path);

// Whether a process of this uid accepts connections at the unix socket `path`.
bool answers(const std::string& path);

// A daemon's name in its directory is three files: <base>.sock, <base>.json (what it says of
// itself) and <base>.lock. The daemon holds the lock for its whole life (start_daemon) and,
// holding it, removes all three when it ends (remove_name), so nothing of it stays behind.
//
// Takes the lock <base>.lock without waiting: the held descriptor, or -1 with errno
// EWOULDBLOCK (a live daemon's, or one starting) or why it could not be opened. A lock taken
// is the one named there now: one opened just before its holder removed it names nothing, and
// two callers could each hold one of two files of one name.
UniqueFd take_name_lock(const std::string& base);
// <base> from <base>.sock, a daemon's socket path.
std::string name_of_socket(const std::string& socket);
// Removes <base>.sock, <base>.json (and a .json.part being written) and <base>.lock, the lock
// last; the caller holds the lock.
void remove_name(const std::string& base);
// Whether a process holds <base>.lock now (a daemon, one starting, or a sweep for a moment).
bool name_held(const std::string& base);
// Removes the names in `dir` whose lock nobody holds: daemons killed before they could
// (SIGKILL, a crash), whose .json may name a pid reused since.
void remove_dead_names(const std::string& dir);

// Forks a detached daemon (no thread may exist yet: call before any). The child starts a
// session of its own, keeps nothing of the caller's (stdio on /dev/null; a pipe the caller
// reads to its end sees EOF once the caller is done) but `lock_fd` (moved to fd 4) and a
// readiness pipe (fd 3), and exits with `body(3)`. `body` writes one line on it: "ok ..." once
// it serves, or why not. Returns the child's pid and what it wrote (empty: it died first).
struct DaemonStart {
  pid_t pid = -1;
  std::string line;
};
DaemonStart start_daemon(int lock_fd, const std::function<int(int ready)>& body);

// Writes `line` and a newline on a daemon's readiness pipe.
void tell_ready(int ready, const std::string& line);

// A daemon's life on its loop `ex` (run by other threads): `check` runs now and then on the
// loop and says when to look again, or nullopt once the daemon should end; SIGINT, SIGTERM
// and SIGHUP end it too. Returns then.
void run_until_ended(asio::any_io_executor ex,
                     const std::function<std::optional<std::chrono::milliseconds>()>& check);

}  // namespace paddock::cli
