// What a connection keeps for each command it started (connection.cpp reads the client,
// connection_commands.cpp runs the commands): shared by the two halves of Connection only.
#pragma once

#include <asio/cancellation_signal.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "serve/connection.hpp"

namespace paddock::serve {
namespace detail {

using clock = std::chrono::steady_clock;
inline constexpr std::size_t kReadChunk = 64 * 1024;
inline constexpr std::size_t kClientReadChunk = 16 * 1024;
// Before its hello with the token, a TCP client may send this much (and take
// ServeLimits::auth_deadline).
inline constexpr std::size_t kMaxUnauthenticatedLine = 4096;
inline constexpr std::size_t kMaxGather = 64;  // events per write

}  // namespace detail

struct Connection::Running {
  explicit Running(const asio::any_io_executor& ex) : drain_timer(ex) {}
  nlohmann::json id;
  std::string key;
  std::shared_ptr<ExecControl> control = std::make_shared<ExecControl>();
  asio::cancellation_signal cancel;
  struct Pipe {
    std::optional<asio::posix::stream_descriptor> fd;
    bool waiting = false;  // an async_wait is in flight: close only from its handler
    bool paused = false;
    bool eof = false;
    bool dropped = false;     // the client closed it (close_output)
    std::uint64_t total = 0;  // bytes the command wrote
    std::uint64_t kept = 0;   // bytes sent (the cap cuts the rest)
  } out, err;
  std::size_t cap = 0;
  std::uint64_t seq = 0;
  std::optional<asio::posix::stream_descriptor> in;
  std::deque<std::string> stdin_chunks;
  std::size_t stdin_queued = 0;
  bool stdin_writing = false;
  bool stdin_close = false;

  std::function<void(Approval)> respond;
  bool cancelled = false;
  bool started = false;
  bool finished = false;
  bool final_sent = false;     // its one exit or error went out already (a closing daemon's)
  bool drain_expired = false;  // the command ended exit_drain ago: empty pipes are done
  int pending_signal = 0;      // a signal sent before the command started
  std::string approval_key;    // what approve_session remembers, for this connection only
  std::optional<std::pair<std::error_code, ExecResult>> result;
  detail::clock::time_point requested = detail::clock::now();
  asio::steady_timer drain_timer;

  Pipe& pipe(Stream s) { return s == Stream::out ? out : err; }
};

}  // namespace paddock::serve
