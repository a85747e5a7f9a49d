// `paddock serve`: the listeners (unix sockets with peer credentials, TCP with a token,
// systemd socket activation), the operators' HTTP endpoint, and the drain on shutdown. The
// protocol itself is per connection (connection.hpp, protocol.hpp).
#pragma once

#include <sys/types.h>

#include <asio/any_io_executor.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/endpoint.hpp"
#include "paddock/manager.hpp"
#include "serve/connection.hpp"

namespace paddock::serve {

struct ServeOptions {
  // "unix:PATH" or "tcp:HOST:PORT", one or more (none: only sockets systemd passed).
  std::vector<std::string> listen;
  // HOST:PORT of the HTTP endpoint: /healthz, /readyz, /metrics. Empty: none.
  std::string http;
  // TCP clients send it in their hello; required for any TCP listener. Unix peers are
  // checked by their credentials (SO_PEERCRED) instead.
  std::optional<std::string> token;
  // A TCP listener (or --http) beyond loopback is refused unless this is set (and a token is).
  bool allow_remote = false;
  // Where commands may run: a request's cwd must be under one of these. Without any, only
  // unix peers with the daemon's own uid (or root) may run commands.
  std::vector<std::string> roots;
  mode_t socket_mode = 0600;
  std::optional<gid_t> socket_group;
  // Unix peers allowed: these uids, or members of these groups (primary or supplementary,
  // SO_PEERCRED / SO_PEERGROUPS); both empty: the daemon's own uid (and root).
  std::vector<uid_t> allowed_uids;
  std::vector<gid_t> allowed_gids;
  // Unix peers must also be in these namespaces of the daemon's ("user", "mnt", ...: names
  // under /proc/PID/ns). A daemon of one user's (`paddock run`'s helper, a session) refuses a
  // peer inside a sandbox this way, wherever that sandbox can see its socket (hostile review:
  // a command allowed unix sockets ran commands through a helper of a wider policy).
  std::vector<std::string> peer_namespaces;
  // A unix peer's commands have their change sets owned by the peer's process
  // (ExecOptions::changes_owner): a client killed while its command runs leaves the set
  // abandoned, not applied, as a `paddock run` in process would. `paddock run`'s helper.
  bool clients_own_changes = false;
  // systemd socket activation: take the listening sockets it passed (LISTEN_FDS).
  bool socket_activation = true;
  ServeLimits limits;
  RequestRules rules;
  // Running commands get this long after SIGTERM before they are killed.
  std::chrono::milliseconds drain_grace{30000};
  std::function<void(const char* level, const nlohmann::json& fields)> log;
};

class Server {
 public:
  // Throws paddock::Error(config_invalid) for a bad address or a missing token, and
  // (spawn_failed) for a socket that cannot be bound.
  Server(asio::any_io_executor executor, Manager& manager, ServeOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Where clients reach it (unix:PATH, tcp:HOST:PORT with the bound port), and the HTTP one.
  std::vector<std::string> endpoints() const;
  std::string http_endpoint() const;

  // SIGTERM: /readyz answers 503 and nothing new is accepted; running commands get
  // drain_grace, then every connection is closed (its commands killed). `done` runs once
  // nothing is left. Thread-safe; once.
  void drain(std::function<void()> done);
  // Closes every connection now (their commands are killed, each gets E_MANAGER_CLOSED).
  void close_all(const std::string& why);
  // Connections open now (a daemon of one user's ends once it has none for a while).
  std::size_t connection_count() const;
  bool ready() const noexcept;
  Metrics& metrics() noexcept;
  const std::shared_ptr<Shared>& shared() const noexcept;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// client/endpoint.hpp's grammar, with the host an IP address (a daemon listens on one, and
// the CLI connects to one); throws Error(config_invalid) naming `flag`.
using Endpoint = client::Endpoint;
Endpoint parse_endpoint(const std::string& text, const std::string& flag = "--listen");

// The listening sockets systemd passed to this process (sd_listen_fds(3)'s protocol: LISTEN_PID
// is ours, LISTEN_FDS of them from fd 3); the variables are removed so children do not see
// them. Hand-written: the protocol is three environment variables, not worth libsystemd.
std::vector<int> systemd_listen_fds();

}  // namespace paddock::serve
