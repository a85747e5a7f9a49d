// One client of `paddock serve`: its lines in, its events out, and the commands it started,
// all on one strand. Backpressure is by construction: the daemon reads a command's output
// pipes itself and only while the client's send queue is below a high-water mark, so a slow
// reader pauses the command (the kernel blocks its writes) instead of growing the daemon.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <asio/any_io_executor.hpp>
#include <asio/generic/stream_protocol.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/unique_fd.hpp"
#include "paddock/manager.hpp"
#include "serve/metrics.hpp"
#include "serve/protocol.hpp"

namespace paddock::serve {

struct ServeLimits {
  std::size_t max_commands = 1024;       // in flight, the whole daemon
  std::size_t max_per_connection = 256;  // in flight, one connection
  std::size_t max_line_bytes = 1024 * 1024;
  double exec_per_second = 200;            // per connection; a burst of as many
  std::size_t high_water_bytes = 1 << 20;  // above: command output is paused
  std::size_t hard_limit_bytes = 8 << 20;  // above: the client's own lines are not read
  std::size_t max_stdin_queued = 4 << 20;  // streamed stdin a connection's commands have not
                                           // read: above, its lines wait (TCP backpressure)
  std::size_t max_connections = 512;
  std::size_t max_sessions_per_connection = 16;  // open (or opening) at once
  std::size_t max_unauthenticated = 64;          // TCP connections that have not authenticated yet
  // Of those, from one peer address: past it that peer's oldest waits no longer (fairness:
  // a flood from one place cannot hold the slots others need).
  std::size_t max_unauthenticated_per_peer = 8;
  std::chrono::milliseconds write_timeout{300000};  // a client that reads nothing this long
  // A TCP client that has not proven it holds the token by then is closed, whatever it sent.
  std::chrono::milliseconds auth_deadline{5000};
  std::chrono::milliseconds exit_drain{500};  // output a command's leftovers may still send
};

class Connection;

// What the connections of one daemon share (owned by the Server, outliving them).
struct Shared {
  explicit Shared(Manager& m) : manager(m) {}
  Manager& manager;
  Metrics metrics;
  ServeLimits limits;
  RequestRules rules;
  std::optional<std::string> token;  // what a client that must authenticate sends in hello
  // Where commands may run (canonical directories); empty: anywhere, for peers with the
  // daemon's own uid (or root) only.
  std::vector<std::string> roots;
  // Per stream, when a request names none: its output is streamed and kept nowhere.
  std::size_t default_max_output = kUncappedOutput;
  nlohmann::json capabilities;  // the hello event's fields
  std::atomic<std::size_t> commands{0};
  std::atomic<std::size_t> unauthenticated{0};  // connections that have not authenticated
  std::map<std::string, std::size_t> unauthenticated_by_peer;  // under `mutex`
  std::atomic<bool> draining{false};
  // One line per command and per connection event: level ("info", "warn") and fields.
  std::function<void(const char* level, const nlohmann::json& fields)> log;
  bool clients_own_changes = false;  // ServeOptions::clients_own_changes
  // The addresses our unix listeners are bound to (sun_path's bytes as getsockname gives them).
  std::vector<std::string> listen_addresses;

  std::mutex mutex;
  std::vector<std::weak_ptr<Connection>> connections;  // for drain and shutdown
  // Sessions the daemon itself holds (`paddock session start`), by name (a string id): any
  // client of this daemon may run in them (`"session": NAME`) and close them. Under `mutex`.
  std::map<std::string, std::shared_ptr<Session>> named_sessions;
  // A named session was closed by a client (on the connection's strand).
  std::function<void(const std::string& name, const SessionSummary&)> on_named_session_closed;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `authenticated`: false for a peer that must present Shared::token in its hello first.
  // `peer_uid`, `peer_process`: a unix peer's (SO_PEERCRED, and its start time read when it
  // was accepted); none for TCP.
  Connection(std::shared_ptr<Shared> shared, asio::generic::stream_protocol::socket socket,
             bool authenticated, std::string peer, std::optional<uid_t> peer_uid = std::nullopt,
             std::optional<ExecOptions::ProcessRef> peer_process = std::nullopt);
  ~Connection();

  void start();
  // Thread-safe, idempotent: stops reading, kills this connection's commands (their events
  // are not sent), closes once they are gone.
  void close(std::string why);
  // Closed if it has not authenticated yet (the pre-authentication slots are full).
  void evict_unauthenticated(std::string why);
  const std::string& peer() const noexcept { return peer_; }
  bool authenticated() const noexcept { return authenticated_.load(); }
  // Picked for eviction already (set at once by the accept loop, before the close runs).
  bool mark_evicted() noexcept { return !evicted_.exchange(true); }
  bool evicting() const noexcept { return evicted_.load(); }
  std::chrono::steady_clock::time_point opened() const noexcept { return opened_; }
  // A draining daemon starts nothing new: pending approvals are answered with a denial.
  void deny_pending_approvals();
  std::size_t commands_running() const noexcept { return running_count_.load(); }

 private:
  struct Running;
  enum class Stream { out, err };

  void read_more();
  // read_more for a unix peer, through recvmsg: descriptors (RequestRules::given_descriptors)
  // and who wrote each segment (a writer in other namespaces than the client's closes it).
  void receive_more();
  void note_peer_namespaces();  // peer_namespaces_, when the client connects
  // `started`: the writer's start time (sandbox::process_start_time), 0 if unreadable.
  bool sender_allowed(const ucred& sender, std::uint64_t started);
  bool same_writer(const ucred& sender, std::uint64_t started);  // RequestRules::one_writer
  // The received descriptors the line being handled may take (those that came with its bytes).
  std::vector<UniqueFd> take_given(std::size_t count);
  void on_read(std::size_t n);
  void handle_line(std::string_view line);
  void dispatch(Request& r);
  void exec(Request& r);
  // Sessions (paddock/session.hpp): this connection's, closed with it.
  void open_session(Request& r);
  void close_session(Request& r);
  // The session an exec names (none named: null, no refusal), or null and why not.
  std::shared_ptr<Session> session_for(const ExecRequest& req, std::string& refusal) const;
  void send(std::string line);
  void write_more();
  void on_written(std::size_t count);
  void arm_write_deadline();

  void wait_output(const std::shared_ptr<Running>& r, Stream s);
  void on_readable(const std::shared_ptr<Running>& r, Stream s, std::error_code ec);
  void resume_paused();
  void write_stdin(const std::shared_ptr<Running>& r);
  void release_stdin(const std::shared_ptr<Running>& r);
  // Why a request's working directory may not be used by this peer, or nothing.
  std::optional<std::string> cwd_refusal(ExecRequest& req) const;
  void close_stdin(const std::shared_ptr<Running>& r);
  void on_done(const std::shared_ptr<Running>& r, std::error_code ec, ExecResult result);
  void maybe_finish(const std::shared_ptr<Running>& r);
  void do_close(const std::string& why);
  void no_longer_unauthenticated();
  void log_line(const char* level, nlohmann::json fields);

  std::shared_ptr<Shared> shared_;
  asio::strand<asio::any_io_executor> strand_;
  asio::generic::stream_protocol::socket socket_;
  asio::steady_timer write_timer_;
  // Its own timer: the write deadline re-arms write_timer_ for every write, and the
  // challenge after a hello is one (the deadline was lost there, so a client that said hello
  // and never proved the token held its slot for good).
  asio::steady_timer auth_timer_;
  std::string peer_;
  std::optional<uid_t> peer_uid_;
  std::optional<ExecOptions::ProcessRef> peer_process_;
  const std::chrono::steady_clock::time_point opened_ = std::chrono::steady_clock::now();
  std::atomic<bool> authenticated_;
  std::atomic<bool> evicted_{false};  // written on the strand; read by the accept loop too
  // TCP authentication in progress: the client's nonce, ours, and its hello to answer.
  std::optional<std::string> client_nonce_;
  std::string server_nonce_;
  std::optional<Request> hello_;
  std::string line_key_;  // RequestRules::keyed_lines: given in the hello's answer
  std::optional<ExecOptions::ProcessRef> writer_;  // RequestRules::one_writer: the first's

  // strand
  std::string input_;      // bytes read, not yet a whole line
  bool skipping_ = false;  // inside an oversize line: dropped up to its newline
  bool first_line_ = true;
  bool reading_ = false;
  bool read_paused_ = false;      // the send queue is past the hard limit
  std::size_t stdin_queued_ = 0;  // streamed stdin its commands have not read yet
  bool stdin_was_full_ = false;   // past max_stdin_queued: its lines wait (release_stdin)
  std::set<std::string> approved_for_session_;  // approve_session, this connection's only
  std::vector<char> read_buffer_;
  static constexpr std::size_t kMaxGiven = 3;  // stdin, stdout, stderr
  // Descriptors that came with the client's bytes, by the stream offsets of the read that
  // brought them (the kernel may join bytes sent before them to that read): a line whose
  // bytes meet that range may take them; once every line in it is handled, they go.
  struct Received {
    std::uint64_t begin, end;
    UniqueFd fd;
  };
  std::deque<Received> received_fds_;
  std::uint64_t received_bytes_ = 0;  // the stream offset after the last read
  std::uint64_t line_begin_ = 0;      // the offsets of the line being handled
  std::uint64_t line_end_ = 0;        // (past its newline)
  // The namespaces of the process that connected (st_dev, st_ino of /proc/PID/ns/...), taken
  // when it did: every other writer must share them (sender_allowed). Empty: not readable.
  std::vector<std::pair<dev_t, ino_t>> peer_namespaces_;
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  std::size_t writing_count_ = 0;  // front entries in the write in flight
  std::uint64_t write_generation_ = 0;
  bool closing_after_flush_ = false;
  bool closed_ = false;
  std::string close_reason_;
  double tokens_;  // the exec rate limiter's bucket
  std::chrono::steady_clock::time_point refilled_;
  std::map<std::string, std::shared_ptr<Running>> running_;
  // By id key; null while it is being opened (the slot is taken: a second open waits not).
  std::map<std::string, std::shared_ptr<Session>> sessions_;
  std::vector<std::pair<std::weak_ptr<Running>, Stream>> paused_;
  std::vector<char> output_buffer_;  // one read of a command's pipe at a time (the strand)
  std::atomic<std::size_t> running_count_{0};
};

}  // namespace paddock::serve
