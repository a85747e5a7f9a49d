// The filtered network's extension points for embedders: who resolves names, who approves a
// domain the allowlist does not know, and where the proxy's per-request log goes.
#pragma once

#include <asio/ip/address.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "paddock/asio_config.hpp"  // first: the Asio macros this library was built with
#include "paddock/network_event.hpp"

namespace paddock {

// Name lookups for the proxy. The default runs getaddrinfo on a small pool of threads of its
// own (never the event loop's). `done` may be called on any thread, exactly once.
class Resolver {
 public:
  using Done = std::function<void(std::error_code, std::vector<asio::ip::address>)>;
  virtual ~Resolver() = default;
  virtual void resolve(const std::string& host, Done done) = 0;
};

// A getaddrinfo pool: `threads` lookups at once, at most `queue` waiting (more fail at once
// with resource_unavailable_try_again), each answered within `timeout` (timed_out after it;
// the lookup's late answer is dropped).
std::shared_ptr<Resolver> make_thread_pool_resolver(
    unsigned threads = 4, std::size_t queue = 1024,
    std::chrono::milliseconds timeout = std::chrono::seconds(5));

// A request for a host that network.allowedDomains does not list (and no deny rule matches).
struct ApprovalRequest {
  std::string host;  // canonical
  std::uint16_t port = 0;
  std::string process;  // the command that asked
};
// Call `respond(true)` to allow this one request, `respond(false)` to deny; from any thread,
// at most once. No answer within NetworkLimits::approval_timeout denies (fail closed).
using DomainApproval =
    std::function<void(const ApprovalRequest&, std::function<void(bool)> respond)>;

// Bounds of the proxy: a slow or hostile client cannot hold the loop or its memory.
struct NetworkLimits {
  std::size_t max_header_bytes = 16 * 1024;
  std::chrono::milliseconds handshake_timeout = std::chrono::seconds(10);  // until tunnelling
  std::chrono::milliseconds connect_timeout = std::chrono::seconds(10);    // per upstream dial
  std::chrono::milliseconds idle_timeout = std::chrono::minutes(5);        // tunnel, no bytes
  std::chrono::milliseconds approval_timeout = std::chrono::seconds(30);
  std::size_t max_connections = 16384;             // all sessions together
  std::size_t max_connections_per_session = 1024;  // one command
  // Name lookups one command may have in flight: the resolver pool is shared, and one command
  // asking for names whose DNS never answers must not queue out everyone else's.
  std::size_t max_lookups_per_session = 64;
};

// What a Manager's filtered network uses beyond Config (which stays plain, comparable data).
struct NetworkHooks {
  std::shared_ptr<Resolver> resolver;  // null: make_thread_pool_resolver()
  DomainApproval approval;             // null: unknown domains are denied
  NetworkEventSink on_event;           // null: no log
  NetworkLimits limits;
};

}  // namespace paddock
