// One listener and the connections accepted on it: a sandboxed command's proxy (its
// listener lives in the command's network namespace) or the standalone `paddock proxy`.
// Every request on it is attributed to `process`; its denials become that command's
// violations.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/strand.hpp>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "paddock/exec_result.hpp"
#include "proxy/proxy_core.hpp"

namespace paddock::proxy {

class ClientConnection;

// A command that retries a denied host in a loop must not grow its result without bound.
inline constexpr std::size_t kMaxViolations = 1000;

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `credential` is "user:password" that clients must present (Proxy-Authorization Basic,
  // SOCKS5 username/password); nullopt: no authentication (the standalone proxy's --no-auth).
  Session(std::shared_ptr<ProxyCore> core, asio::any_io_executor executor, std::string process,
          std::optional<std::string> credential);
  ~Session();

  // Starts accepting on a listening TCP socket (ownership taken; any executor).
  void start(asio::ip::tcp::acceptor acceptor);
  void start(int listening_fd, asio::ip::tcp protocol = asio::ip::tcp::v4());
  // Stops accepting and closes every connection. Thread-safe, idempotent. `on_closed` runs
  // (on the session's strand) once the listener's descriptor is closed.
  void close(std::function<void()> on_closed = {});

  // A call's own domain rules, checked after the core's (they only narrow). Before start().
  void set_call_rules(std::shared_ptr<const net::DomainRules> rules) {
    call_rules_ = std::move(rules);
  }
  const std::shared_ptr<const net::DomainRules>& call_rules() const noexcept { return call_rules_; }
  // A call's own sink for its requests' outcomes (ExecOptions::on_network), beside the
  // core's NetworkHooks::on_event. Before start().
  void set_call_sink(NetworkEventSink sink) { call_sink_ = std::move(sink); }
  // One request decided: the core's sink, then the call's (a throwing sink is ignored: the
  // connection that reported must still be answered).
  void emit(const NetworkEvent& e) const noexcept;

  std::vector<Violation> take_violations();
  // Keeps `thing` until the session is gone (its listener closed, its connections ended):
  // a reused network namespace must not go back to the pool while our listener is bound in it.
  void hold(std::shared_ptr<void> thing) { held_ = std::move(thing); }

  // For connections.
  const std::shared_ptr<ProxyCore>& core() const noexcept { return core_; }
  const std::string& process() const noexcept { return process_; }
  const std::optional<std::string>& credential() const noexcept { return credential_; }
  void deny(const std::string& protocol, const std::string& target, const std::string& reason,
            const std::string& raw);
  void connection_closed(ClientConnection* c);
  // The per-command budget of lookups in flight (NetworkLimits::max_lookups_per_session).
  // The count is shared with the lookups' answers, which come on a resolver thread and must
  // not hold the session itself (its last reference could go there).
  using LookupCount = std::shared_ptr<std::atomic<std::size_t>>;
  bool begin_lookup() noexcept;
  const LookupCount& lookups() const noexcept { return lookups_; }
  asio::ip::tcp::endpoint local_endpoint() const;

 private:
  void accept_next();
  void admit(int fd);   // strand: an accepted client, within the budgets or dropped
  void finish_close();  // strand: no accept in flight

  std::shared_ptr<ProxyCore> core_;
  std::shared_ptr<const net::DomainRules> call_rules_;
  NetworkEventSink call_sink_;
  asio::strand<asio::any_io_executor> strand_;
  std::string process_;
  std::optional<std::string> credential_;
  // Declared before the acceptor so it is destroyed after it: what it keeps (the network
  // namespace's lease) must outlive the listener bound in that namespace.
  std::shared_ptr<void> held_;
  std::optional<asio::ip::tcp::acceptor> acceptor_;
  const LookupCount lookups_ = std::make_shared<std::atomic<std::size_t>>(0);
  bool accepting_ = false;           // strand: an accept is in flight
  std::function<void()> on_closed_;  // strand after close()

  std::mutex mutex_;  // the fields below
  bool closed_ = false;
  std::vector<Violation> violations_;
  std::size_t violations_dropped_ = 0;  // past kMaxViolations: counted, not kept
  std::unordered_map<ClientConnection*, std::weak_ptr<ClientConnection>> connections_;
  std::size_t open_ = 0;
};

}  // namespace paddock::proxy
