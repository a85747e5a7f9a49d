// What proxy_bench's drivers (proxy_bench.cpp) and its helper modes (proxy_bench_load.cpp)
// both use: the clock, the bulk-transfer buffer, fatal errors, blocking dial, send and listen.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace proxy_bench {

using clock_type = std::chrono::steady_clock;

// The bulk-transfer buffer of the client and of the sink: the same 256 KiB as the proxy's relay
// buffer (client_connection.cpp kScratch), so no side of any variant moves bytes in smaller
// pieces than the others. Socket buffers are left to the kernel's autotuning everywhere.
constexpr std::size_t kBulkBuffer = 256 * 1024;

double us_since(clock_type::time_point t);

[[noreturn]] void die(const char* what);

// A connected TCP socket to HOST:PORT (the first address that answers), or -1.
int dial(const std::string& host, const std::string& port);

// Sends all N bytes (MSG_NOSIGNAL, retrying on EINTR); false if the peer is gone.
bool write_all(int fd, const char* p, std::size_t n);

// A socket listening on 127.0.0.1, an ephemeral port (written to *PORT); dies if it cannot.
int listen_loopback(uint16_t* port);

}  // namespace proxy_bench
