// The operators' HTTP endpoint of `paddock serve` (/healthz, /readyz, /metrics): GET only, one
// request per connection, a head of at most 8 KiB read within 5 s. Its own port, apart from
// the protocol's, so a probe or a scraper never speaks the protocol and a client never HTTP.
#pragma once

#include <asio/any_io_executor.hpp>
#include <functional>
#include <memory>
#include <string>

namespace paddock::serve {

class OpsHttp {
 public:
  // `route(path, status)` answers a GET: the body, with `status` set. Throws
  // paddock::Error(config_invalid) for a bad HOST:PORT, (spawn_failed) if it cannot bind.
  using Route = std::function<std::string(const std::string& path, int& status)>;
  OpsHttp(asio::any_io_executor executor, const std::string& host_port, Route route);
  ~OpsHttp();
  std::string endpoint() const;  // HOST:PORT as bound

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace paddock::serve
