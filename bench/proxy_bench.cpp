// proxy_bench MODE [ARGS] [--tsv FILE]: paddock's proxy (proxy::Session on a paddock::Runtime,
// as a Manager runs it) against direct loopback and srt's proxy. Prints markdown table rows;
// --tsv FILE also appends "key<TAB>value" lines for compare_proxy.sh's verdicts.
//   throughput BYTES RUNS [--srt SRT SETTINGS] [--srt-node HOST:PORT USER:TOKEN NODE_PID]
//       BYTES from a loopback sink to a client: direct, through paddock's CONNECT tunnel, through
//       two minimal reference relays (recv/send and splice; not paddock), and through srt's
//       proxy (inside `srt`, and its Node HTTP proxy server alone), RUNS rounds interleaved;
//       median/min/max GB/s and CPU seconds per GB. PROXY_BENCH_ONLY=KEY (tp_paddock, ...)
//       runs one variant alone, for perf/strace.
//   rate SECONDS ROUNDS CONCURRENCY
//       CONNECT -> 200 -> close, CONCURRENCY clients at once for SECONDS (after 0.5 s warm-up),
//       ROUNDS rounds interleaved: HTTP CONNECT to localhost (resolved), to 127.0.0.1 (no
//       lookup), SOCKS5 to localhost. Median rate over rounds; latency median/p99 pooled.
//   tunnels N
//       N tunnels open at once: proxy RSS per idle tunnel, time to open, one byte through each.
// Helper modes (run by the ones above as separate processes; proxy_bench_load.cpp):
//   client BYTES HOST PORT [--proxy HOST:PORT --auth USER:PASS | --proxy-env]
//   rate-load PROXY_PORT SECONDS CONCURRENCY http|socks5 TARGET_HOST USER:PASS LATENCY_FILE
//   tunnels-load PROXY_PORT N USER:PASS          (driven over stdin/stdout)
// This file: main, the three drivers and their tables, and what they run in their own process
// (paddock's proxy, the reference relays, the throughput sink). What the drivers and the
// helper modes share is in proxy_bench_common.hpp.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "paddock/network.hpp"
#include "paddock/runtime.hpp"
#include "proxy/proxy_core.hpp"
#include "proxy/session.hpp"
#include "proxy_bench_common.hpp"
#include "proxy_bench_load.hpp"
#include "stats.hpp"

extern char** environ;

namespace proxy_bench {

namespace {

const char* kBackend = PADDOCK_IO_URING ? "io_uring" : "epoll";
const std::string kCredential = "paddock:bench-credential";

std::FILE* g_tsv = nullptr;
void tsv(const std::string& key, double value) {
  if (g_tsv != nullptr) std::fprintf(g_tsv, "%s\t%.6g\n", key.c_str(), value);
}

long status_kib(const char* key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(std::strlen(key)));
  }
  return -1;
}

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// The sink for throughput: a blocking thread per connection, sends what the client asks for
// with the same 256 KiB buffer.
void bulk_sink(int listen_fd) {
  for (;;) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    std::thread([fd] {
      long long want = 0;
      std::size_t have = 0;
      while (have < sizeof want) {
        ssize_t r = ::recv(fd, reinterpret_cast<char*>(&want) + have, sizeof want - have, 0);
        if (r <= 0) {
          ::close(fd);
          return;
        }
        have += static_cast<std::size_t>(r);
      }
      std::unique_ptr<char[]> buf(new char[kBulkBuffer]);
      std::memset(buf.get(), 'x', kBulkBuffer);
      for (long long sent = 0; sent < want;) {
        std::size_t n = static_cast<std::size_t>(std::min<long long>(kBulkBuffer, want - sent));
        if (!write_all(fd, buf.get(), n)) break;
        sent += static_cast<long long>(n);
      }
      ::shutdown(fd, SHUT_WR);
      while (::recv(fd, buf.get(), kBulkBuffer, 0) > 0) {
      }
      ::close(fd);
    }).detach();
  }
}

// ---- spawning helpers ---------------------------------------------------------------------

std::string self_exe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) die("readlink /proc/self/exe");
  return std::string(buf, static_cast<std::size_t>(n));
}

pid_t spawn(const std::vector<std::string>& args, int stdin_fd, int stdout_fd, bool merge_stderr) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (stdin_fd >= 0) posix_spawn_file_actions_adddup2(&fa, stdin_fd, 0);
  if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&fa, stdout_fd, 1);
  if (merge_stderr && stdout_fd >= 0) posix_spawn_file_actions_adddup2(&fa, stdout_fd, 2);
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0) {
    errno = err;
    die(("posix_spawn " + args[0]).c_str());
  }
  return pid;
}

// Runs a command, returns its stdout+stderr and exit status.
// Runs a command, returns its stdout+stderr, exit status and CPU seconds (user + system).
std::string run_capture(const std::vector<std::string>& args, int* status, double* cpu = nullptr) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) die("pipe");
  pid_t pid = spawn(args, -1, p[1], true);
  ::close(p[1]);
  std::string out;
  char buf[4096];
  for (ssize_t r; (r = ::read(p[0], buf, sizeof buf)) != 0;) {
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    out.append(buf, static_cast<std::size_t>(r));
  }
  ::close(p[0]);
  rusage ru{};
  wait4(pid, status, 0, &ru);
  if (cpu != nullptr) {
    *cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  }
  return out;
}

std::string one_cell(std::string s) {
  if (s.size() > 300) s.resize(300);
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
    if (c == '|') c = '/';
  }
  return s;
}

// paddock's proxy as a Manager runs it: a Session (with a credential, as a sandboxed command's
// proxy has) on a 2-thread Runtime, the default resolver, rules allowing loopback by name.
struct PaddockProxy {
  explicit PaddockProxy(std::size_t max_connections = 16384) : rt({2}) {
    paddock::NetworkHooks hooks;
    hooks.limits.max_connections = max_connections;
    hooks.limits.max_connections_per_session = max_connections;
    core = std::make_shared<paddock::proxy::ProxyCore>(
        std::vector<std::string>{"localhost", "127.0.0.1"}, std::vector<std::string>{},
        std::move(hooks));
    session =
        std::make_shared<paddock::proxy::Session>(core, rt.executor(), "proxy_bench", kCredential);
    // A listening descriptor handed to the session, as the Manager hands over the one made in
    // the sandbox's namespace (Session::start(int): the acceptor lives on its strand).
    session->start(listen_loopback(&port));
  }
  ~PaddockProxy() {
    session->close();
    rt.join();
  }
  paddock::Runtime rt;
  std::shared_ptr<paddock::proxy::ProxyCore> core;
  std::shared_ptr<paddock::proxy::Session> session;
  uint16_t port = 0;
};

// ---- reference relays (not paddock): where a CONNECT tunnel's ceiling is on this machine -----
// Minimal blocking CONNECT proxies, a thread per direction, no filter, no credential, no
// event loop: `copy` moves bytes as paddock's pump does (recv into a 256 KiB buffer, send it
// on); `splice` moves them socket -> pipe (256 KiB) -> socket in the kernel, without copying
// them through user space. They tell the cost of the copies apart from the cost of the rest.
void relay_direction(int from, int to, bool use_splice) {
  if (use_splice) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) die("pipe");
    fcntl(p[0], F_SETPIPE_SZ, static_cast<int>(kBulkBuffer));
    for (;;) {
      ssize_t n = ::splice(from, nullptr, p[1], nullptr, kBulkBuffer, SPLICE_F_MOVE);
      if (n <= 0) break;
      while (n > 0) {
        ssize_t w =
            ::splice(p[0], nullptr, to, nullptr, static_cast<std::size_t>(n), SPLICE_F_MOVE);
        if (w <= 0) break;
        n -= w;
      }
      if (n > 0) break;
    }
    ::close(p[0]);
    ::close(p[1]);
  } else {
    std::unique_ptr<char[]> buf(new char[kBulkBuffer]);
    for (ssize_t n; (n = ::recv(from, buf.get(), kBulkBuffer, 0)) > 0;) {
      if (!write_all(to, buf.get(), static_cast<std::size_t>(n))) break;
    }
  }
  ::shutdown(to, SHUT_WR);
}

void reference_relay(int listen_fd, bool use_splice) {
  for (;;) {
    int client = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    std::thread([client, use_splice] {
      std::string head;
      char c;
      while (head.find("\r\n\r\n") == std::string::npos && ::recv(client, &c, 1, 0) == 1) head += c;
      auto colon = head.find(':'), space = head.find(' ', 8);
      int up = colon < space ? dial("127.0.0.1", head.substr(colon + 1, space - colon - 1)) : -1;
      const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
      if (up < 0 || !write_all(client, ok, sizeof ok - 1)) {
        ::close(client);
        if (up >= 0) ::close(up);
        return;
      }
      std::thread back(relay_direction, up, client, use_splice);
      relay_direction(client, up, use_splice);
      back.join();
      ::close(up);
      ::close(client);
    }).detach();
  }
}

// ---- throughput ---------------------------------------------------------------------------

struct Variant {
  std::string key, label;
  std::vector<std::string> args;
  bool cpu_complete = true;  // false: some process of the path is not ours to measure
  std::vector<double> gbs, cpu_per_gb;
  int failed_runs = 0;
  std::string failure;  // the first failed run's exit status and output
};

// CPU seconds (user + system) a process has used so far, from /proc/PID/stat.
double process_cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return 0;
  unsigned long long utime = 0, stime = 0;
  // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
  std::sscanf(stat.c_str() + close_paren + 2,
              "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime);
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

void throughput(long long bytes, int runs, const std::vector<std::string>& srt,
                const std::string& srt_node, const std::string& srt_node_auth, pid_t srt_node_pid) {
  uint16_t sink_port;
  int sink_fd = listen_loopback(&sink_port);
  std::thread(bulk_sink, sink_fd).detach();
  PaddockProxy proxy;
  uint16_t copy_port, splice_port;
  std::thread(reference_relay, listen_loopback(&copy_port), false).detach();
  std::thread(reference_relay, listen_loopback(&splice_port), true).detach();
  const std::string self = self_exe(), n = std::to_string(bytes), sp = std::to_string(sink_port);
  // Fairness: the same client binary and mode in every row, the same sink, the same 256 KiB
  // buffers; only the path differs. The direct row dials the address the proxies dial
  // (localhost is 127.0.0.1 here); the proxied rows name `localhost`, as a sandboxed command
  // would, and each proxy resolves it once per tunnel (outside the timed part).
  auto client = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {self, "client", n, "localhost", sp};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  std::vector<Variant> v;
  auto add = [&v](std::string key, std::string label, std::vector<std::string> args,
                  bool cpu_complete = true) {
    Variant x;
    x.key = std::move(key);
    x.label = std::move(label);
    x.args = std::move(args);
    x.cpu_complete = cpu_complete;
    v.push_back(std::move(x));
  };
  add("tp_direct", "direct loopback, no proxy (client -> sink)",
      {self, "client", n, "127.0.0.1", sp});
  add("tp_paddock", "paddock CONNECT tunnel (proxy::Session on a 2-thread Runtime)",
      client({"--proxy", "127.0.0.1:" + std::to_string(proxy.port), "--auth", kCredential}));
  add("tp_ref_copy",
      "reference, not paddock: minimal blocking relay, recv/send 256 KiB, thread per direction",
      client({"--proxy", "127.0.0.1:" + std::to_string(copy_port)}));
  add("tp_ref_splice",
      "reference, not paddock: minimal blocking relay, splice() through a 256 KiB pipe",
      client({"--proxy", "127.0.0.1:" + std::to_string(splice_port)}));
  if (!srt_node.empty()) {
    add("tp_srt_node",
        "srt's HTTP proxy server alone (Node, its createHttpProxyServer; no bridges)",
        client({"--proxy", srt_node, "--auth", srt_node_auth}), srt_node_pid > 0);
  }
  if (!srt.empty()) {
    // What a command inside `srt` gets: $HTTPS_PROXY = socat in the sandbox -> unix socket ->
    // socat on the host -> srt's mux -> unix socket -> its HTTP proxy -> the sink. The clock
    // starts once the tunnel is up, so srt's start-up is not in the figure. CPU: srt's own
    // process and what it reaps (its socat bridges, bwrap), counted when it exits.
    std::vector<std::string> a = srt;
    for (const std::string& s :
         std::vector<std::string>{"--", self, "client", n, "localhost", sp, "--proxy-env"})
      a.push_back(s);
    add("tp_srt", "srt, client inside `srt` via $HTTPS_PROXY (bridges + mux + HTTP proxy)", a);
  }
  // Round robin: drift on a noisy 2-core machine hits every variant alike.
  const char* only = std::getenv("PROXY_BENCH_ONLY");  // a key: profile one variant alone
  for (int r = 0; r < runs; ++r) {
    for (auto& x : v) {
      if (only != nullptr && x.key != only) continue;
      const double self0 = cpu_seconds();
      const double node0 = x.key == "tp_srt_node" ? process_cpu_seconds(srt_node_pid) : 0;
      int status = 0;
      double child_cpu = 0;
      std::string out = run_capture(x.args, &status, &child_cpu);
      // CPU of every process on the path: this one (sink thread, proxy threads; the other
      // proxies idle), the client (and for srt, srt and what it reaped), Node for srt alone.
      double cpu = cpu_seconds() - self0 + child_cpu;
      if (x.key == "tp_srt_node" && srt_node_pid > 0)
        cpu += process_cpu_seconds(srt_node_pid) - node0;
      auto pos = out.find("RESULT ");
      double us = 0;
      long long moved = 0;
      if (pos == std::string::npos ||
          std::sscanf(out.c_str() + pos, "RESULT %lf %lld", &us, &moved) != 2 || moved != bytes) {
        ++x.failed_runs;  // reported, and the other rounds still run
        if (x.failure.empty())
          x.failure = "exit status " + std::to_string(WEXITSTATUS(status)) + ": " + one_cell(out);
        continue;
      }
      x.gbs.push_back(static_cast<double>(moved) / (us * 1e3));
      x.cpu_per_gb.push_back(cpu / (static_cast<double>(moved) / 1e9));
    }
  }
  const double direct = v[0].gbs.empty() ? 0 : bench::stats(v[0].gbs).median;
  for (auto& x : v) {
    if (x.gbs.empty()) {
      std::printf("| %s | failed | | | | | %s |\n", x.label.c_str(),
                  x.failure.empty() ? "not run" : x.failure.c_str());
      continue;
    }
    auto s = bench::stats(x.gbs);
    char cpu[64] = "not measured";
    if (x.cpu_complete) std::snprintf(cpu, sizeof cpu, "%.2f", bench::stats(x.cpu_per_gb).median);
    std::printf(
        "| %s | %.2f GB/s | %.2f – %.2f | %zu | %.2f× | %s | %s |\n", x.label.c_str(), s.median,
        *std::min_element(x.gbs.begin(), x.gbs.end()),
        *std::max_element(x.gbs.begin(), x.gbs.end()), x.gbs.size(),
        direct > 0 ? s.median / direct : 0.0, cpu,
        x.failure.empty()
            ? ""
            : (std::to_string(x.failed_runs) + " run(s) failed, first: " + x.failure).c_str());
    tsv(x.key, s.median);
    if (x.cpu_complete) tsv(x.key + "_cpu", bench::stats(x.cpu_per_gb).median);
  }
}

void rate(double seconds, int rounds, int concurrency) {
  const std::string self = self_exe();
  struct Case {
    const char* label;
    const char* key;
    const char* proto;
    const char* host;
    std::vector<double> rates, latency;
    double proxy_cpu = 0, load_cpu = 0, wall = 0;
    long failed = 0, total = 0;
    std::string failure;
  } cases[] = {
      {"HTTP CONNECT localhost:PORT (a name; localhost is loopback without a lookup, RFC 6761)",
       "rate_http",
       "http",
       "localhost",
       {},
       {},
       0,
       0,
       0,
       0,
       0,
       {}},
      {"HTTP CONNECT 127.0.0.1:PORT (IP literal allowed by an entry: no lookup)",
       "rate_http_ip",
       "http",
       "127.0.0.1",
       {},
       {},
       0,
       0,
       0,
       0,
       0,
       {}},
      {"SOCKS5 CONNECT localhost:PORT (username/password: 3 round trips)",
       "rate_socks5",
       "socks5",
       "localhost",
       {},
       {},
       0,
       0,
       0,
       0,
       0,
       {}},
  };
  char latency_file[] = "/tmp/proxy-bench-latency-XXXXXX";
  int lf = mkstemp(latency_file);
  if (lf < 0) die("mkstemp");
  ::close(lf);
  const char* only = std::getenv("PROXY_BENCH_ONLY");  // a key: one variant alone
  // Rounds, the variants interleaved in each: the load other work puts on this shared
  // machine drifts over a minute, and then hits every variant alike.
  for (int r = 0; r < rounds; ++r) {
    for (auto& c : cases) {
      if (only != nullptr && std::string(c.key) != only) continue;
      // A fresh proxy (and port) each time: the tens of thousands of client sockets left in
      // TIME_WAIT towards the previous port play no part in this run's connects.
      PaddockProxy proxy;
      const double cpu0 = cpu_seconds();
      const auto t = clock_type::now();
      int status = 0;
      double load_cpu = 0;
      std::string out =
          run_capture({self, "rate-load", std::to_string(proxy.port), std::to_string(seconds),
                       std::to_string(concurrency), c.proto, c.host, kCredential, latency_file},
                      &status, &load_cpu);
      const double wall = us_since(t) / 1e6, proxy_cpu = cpu_seconds() - cpu0;
      std::size_t count = 0;
      double secs = 0;
      long failed = 0, total = 0;
      auto pos = out.find("RESULT ");
      if (pos == std::string::npos ||
          std::sscanf(out.c_str() + pos, "RESULT %zu %lf %ld %ld", &count, &secs, &failed,
                      &total) != 4 ||
          count == 0) {
        if (c.failure.empty()) c.failure = one_cell(out);
        continue;
      }
      c.rates.push_back(static_cast<double>(count) / secs);
      std::ifstream in(latency_file, std::ios::binary);
      std::vector<double> l(count);
      in.read(reinterpret_cast<char*>(l.data()),
              static_cast<std::streamsize>(count * sizeof(double)));
      c.latency.insert(c.latency.end(), l.begin(), l.end());
      // CPU over the whole helper run (its 0.5 s warm-up included): the proxy process, and
      // the load generator (clients + sink, another process) apart.
      c.proxy_cpu += proxy_cpu;
      c.load_cpu += load_cpu;
      c.wall += wall;
      c.failed += failed;
      c.total += total;
    }
  }
  ::unlink(latency_file);
  for (auto& c : cases) {
    if (c.rates.empty()) {
      if (only == nullptr || std::string(c.key) == only)
        std::printf("| %s | failed | | | | | | %s |\n", c.label, c.failure.c_str());
      continue;
    }
    const auto rate = bench::stats(c.rates);
    const auto lat = bench::stats(c.latency);
    const double total = static_cast<double>(c.total);
    std::printf(
        "| %s | %.0f /s | %.0f – %.0f | %.0f µs | %.0f µs | %ld | %.2f cores, %.0f µs per "
        "CONNECT | %.2f cores, %.0f µs per CONNECT |\n",
        c.label, rate.median, *std::min_element(c.rates.begin(), c.rates.end()),
        *std::max_element(c.rates.begin(), c.rates.end()), lat.median, lat.p99, c.failed,
        c.proxy_cpu / c.wall, c.proxy_cpu * 1e6 / total, c.load_cpu / c.wall,
        c.load_cpu * 1e6 / total);
    tsv(std::string(c.key), rate.median);
    tsv(std::string(c.key) + "_median_us", lat.median);
    tsv(std::string(c.key) + "_p99_us", lat.p99);
    tsv(std::string(c.key) + "_failed", static_cast<double>(c.failed));
    tsv(std::string(c.key) + "_cpu_us", c.proxy_cpu * 1e6 / total);
  }
}

void tunnels(std::size_t n) {
  PaddockProxy proxy(n + 1024);  // the per-session budget (1024 by default) raised for this test
  int to_child[2], from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) die("pipe");
  pid_t pid = spawn(
      {self_exe(), "tunnels-load", std::to_string(proxy.port), std::to_string(n), kCredential},
      to_child[0], from_child[1], false);
  ::close(to_child[0]);
  ::close(from_child[1]);
  std::FILE* in = fdopen(from_child[0], "r");
  auto say = [&](const char* s) {
    if (::write(to_child[1], s, std::strlen(s)) < 0) die("write to tunnels-load");
  };
  auto hear = [&] {
    char line[256];
    if (std::fgets(line, sizeof line, in) == nullptr) {
      std::fprintf(stderr, "tunnels-load ended early\n");
      std::exit(1);
    }
    return std::string(line);
  };
  auto settle = [&](std::size_t want) {  // the proxy's side of the warm-up's closes, done
    for (int i = 0; i < 200 && proxy.core->open_connections() != want; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  if (hear() != "WARM\n") std::exit(1);
  settle(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const long rss_before = status_kib("VmRSS:");
  say("GO\n");
  double open_s = 0;
  std::size_t failed = 0;
  std::sscanf(hear().c_str(), "OPEN %lf %zu", &open_s, &failed);
  settle(n - failed);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // idle: no bytes moving
  const long rss_after = status_kib("VmRSS:");
  const std::size_t open_now = proxy.core->open_connections();
  const long threads = status_kib("Threads:");
  say("CHECK\n");
  std::size_t ok = 0;
  double check_s = 0;
  std::sscanf(hear().c_str(), "CHECKED %zu %lf", &ok, &check_s);
  say("QUIT\n");
  int status;
  waitpid(pid, &status, 0);
  std::fclose(in);
  ::close(to_child[1]);
  const double per_tunnel = static_cast<double>(rss_after - rss_before) / static_cast<double>(n);
  std::printf(
      "| %zu tunnels open at once (%s) | %.1f KiB | %.2f s | %zu open in the proxy, %zu failed | "
      "%zu of %zu relayed a byte (%.2f s) | %.1f MiB → %.1f MiB, %ld threads |\n",
      n, kBackend, per_tunnel, open_s, open_now, failed, ok, n, check_s,
      static_cast<double>(rss_before) / 1024.0, static_cast<double>(rss_after) / 1024.0, threads);
  tsv("tunnels_rss_kib", per_tunnel);
  tsv("tunnels_open_s", open_s);
  tsv("tunnels_ok", static_cast<double>(ok));
  tsv("tunnels_n", static_cast<double>(n));
}

}  // namespace

}  // namespace proxy_bench

int main(int argc, char** argv) {
  using namespace proxy_bench;  // the modes and g_tsv
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s throughput|rate|tunnels ARGS [--tsv FILE]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  if (mode == "client") return client_main(argc, argv);
  if (mode == "rate-load") return rate_load_main(argc, argv);
  if (mode == "tunnels-load") return tunnels_load_main(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args, srt;
  std::string srt_node, srt_node_auth;
  pid_t srt_node_pid = 0;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tsv" && i + 1 < argc) {
      g_tsv = std::fopen(argv[++i], "a");
    } else if (a == "--srt" && i + 2 < argc) {
      srt = {argv[i + 1], "--settings", argv[i + 2]};
      i += 2;
    } else if (a == "--srt-node" && i + 3 < argc) {
      srt_node = argv[i + 1];
      srt_node_auth = argv[i + 2];
      srt_node_pid = static_cast<pid_t>(std::atoi(argv[i + 3]));
      i += 3;
    } else {
      args.push_back(a);
    }
  }
  if (mode == "throughput" && args.size() >= 2) {
    throughput(std::atoll(args[0].c_str()), std::atoi(args[1].c_str()), srt, srt_node,
               srt_node_auth, srt_node_pid);
  } else if (mode == "rate" && args.size() >= 3) {
    rate(std::atof(args[0].c_str()), std::atoi(args[1].c_str()), std::atoi(args[2].c_str()));
  } else if (mode == "tunnels" && !args.empty()) {
    tunnels(static_cast<std::size_t>(std::atol(args[0].c_str())));
  } else {
    std::fprintf(stderr, "bad arguments for %s\n", mode.c_str());
    return 2;
  }
  if (g_tsv != nullptr) std::fclose(g_tsv);
  return 0;
}
