// paddock_bench MODE [ARGS]: prints one markdown table row per measurement.
//   latency N        async_exec("/bin/true") vs posix_spawn+waitpid, concurrency 1, interleaved
//   throughput N     commands/s at concurrency 16, both ways
//   capture BYTES    capture throughput of `cat FILE` vs `cat FILE > /dev/null`
//   many N           N concurrent `sleep` children: threads, supervisor RSS per child
//   many-discard N   the same with output discarded (1 fd per child instead of 3)
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <asio/io_context.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "paddock/manager.hpp"
#include "paddock/runtime.hpp"

extern char** environ;

namespace {

using clock_type = std::chrono::steady_clock;
const char* kBackend = PADDOCK_IO_URING ? "io_uring" : "epoll";

// These tables measure supervision (spawn, capture, scale) against plain loops: unsandboxed,
// like the baselines. The sandbox's own cost is sandbox_bench's subject.
paddock::Config supervision_config() {
  paddock::Config c = paddock::DefaultConfig();
  c.sandbox.enabled = false;
  return c;
}

double us_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - t).count();
}

struct Stats {
  double median, p99;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 99 / 100)]};
}

pid_t plain_spawn(const char* const* argv) {
  pid_t pid;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, const_cast<char* const*>(argv), environ) != 0) {
    std::perror("posix_spawn");
    std::exit(1);
  }
  return pid;
}

void plain_run(const char* const* argv) {
  int status;
  waitpid(plain_spawn(argv), &status, 0);
}

paddock::ExecResult paddock_run(paddock::Manager& m, paddock::Command cmd,
                                paddock::ExecOptions o = {}) {
  std::promise<paddock::ExecResult> done;
  auto f = done.get_future();
  m.async_exec(std::move(cmd), std::move(o),
               [&](std::error_code, paddock::ExecResult r) { done.set_value(std::move(r)); });
  return f.get();
}

long status_kib(const char* key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(std::strlen(key)));
  }
  return -1;
}

void latency(int n) {
  // Caller off the loop, with one and with two loop threads: with two, Asio's scheduler hands
  // posted work to the idle thread, an extra wake-up per command that one thread avoids.
  paddock::Runtime rt({1});
  paddock::Manager m(rt.executor(), supervision_config());
  paddock::Runtime rt2({2});
  paddock::Manager m2(rt2.executor(), supervision_config());
  // The same, with the loop run by the calling thread itself (as `paddock run` and
  // run_blocking do): no hand-off between threads.
  asio::io_context own_loop(1);
  paddock::Manager inline_m(own_loop.get_executor(), supervision_config());
  auto inline_run = [&] {
    bool done = false;
    inline_m.async_exec(paddock::Command::exec({"/bin/true"}), {},
                        [&](std::error_code, paddock::ExecResult) { done = true; });
    own_loop.restart();
    while (!done) own_loop.run_one();
  };
  const char* argv[] = {"/bin/true", nullptr};
  std::vector<double> ours, ours2, plain, inline_loop;
  for (int i = 0; i < 50; ++i) {  // warm-up
    plain_run(argv);
    paddock_run(m, paddock::Command::exec({"/bin/true"}));
    paddock_run(m2, paddock::Command::exec({"/bin/true"}));
    inline_run();
  }
  // Interleaved in blocks of 10 so drift on a noisy machine hits both the same way.
  for (int i = 0; i < n; i += 10) {
    for (int j = 0; j < 10; ++j) {
      auto t = clock_type::now();
      plain_run(argv);
      plain.push_back(us_since(t));
    }
    for (int j = 0; j < 10; ++j) {
      auto t = clock_type::now();
      paddock_run(m, paddock::Command::exec({"/bin/true"}));
      ours.push_back(us_since(t));
    }
    for (int j = 0; j < 10; ++j) {
      auto t = clock_type::now();
      paddock_run(m2, paddock::Command::exec({"/bin/true"}));
      ours2.push_back(us_since(t));
    }
    for (int j = 0; j < 10; ++j) {
      auto t = clock_type::now();
      inline_run();
      inline_loop.push_back(us_since(t));
    }
  }
  auto a = stats(ours), a2 = stats(ours2), b = stats(plain), c = stats(inline_loop);
  std::printf(
      "| spawn latency, /bin/true, concurrency 1, caller off the loop, 1 loop thread (%s) | "
      "%.0f µs | %.0f µs | %.0f µs | %.0f µs | %.2f× |\n",
      kBackend, a.median, a.p99, b.median, b.p99, a.median / b.median);
  std::printf(
      "| spawn latency, /bin/true, concurrency 1, caller off the loop, 2 loop threads (%s) | "
      "%.0f µs | %.0f µs | %.0f µs | %.0f µs | %.2f× |\n",
      kBackend, a2.median, a2.p99, b.median, b.p99, a2.median / b.median);
  std::printf(
      "| spawn latency, /bin/true, concurrency 1, loop on the calling thread (%s) | "
      "%.0f µs | %.0f µs | %.0f µs | %.0f µs | %.2f× |\n",
      kBackend, c.median, c.p99, b.median, b.p99, c.median / b.median);
}

void throughput(int n) {
  constexpr int kConcurrency = 16;
  const char* argv[] = {"/bin/true", nullptr};
  // Plain: one thread keeps 16 children alive with posix_spawn + waitpid(-1).
  auto t = clock_type::now();
  int started = 0, outstanding = 0;
  while (started < n || outstanding > 0) {
    while (outstanding < kConcurrency && started < n) {
      plain_spawn(argv);
      ++started;
      ++outstanding;
    }
    int status;
    if (waitpid(-1, &status, 0) > 0) --outstanding;
  }
  double plain_rate = n / (us_since(t) / 1e6);

  paddock::Runtime rt({2});
  paddock::Manager m(rt.executor(), supervision_config());
  std::atomic<int> next{0}, finished{0};
  std::promise<void> all;
  std::function<void()> launch = [&] {
    if (next.fetch_add(1) >= n) return;
    m.async_exec(paddock::Command::exec({"/bin/true"}), {},
                 [&](std::error_code, paddock::ExecResult) {
                   if (finished.fetch_add(1) + 1 == n) all.set_value();
                   launch();
                 });
  };
  t = clock_type::now();
  for (int i = 0; i < kConcurrency; ++i) launch();
  all.get_future().wait();
  double ours_rate = n / (us_since(t) / 1e6);
  rt.join();  // the last callbacks may still be returning through `launch`
  std::printf(
      "| /bin/true per second, concurrency 16, 2 threads (%s) | %.0f /s | | %.0f /s | | %.2f× |\n",
      kBackend, ours_rate, plain_rate, ours_rate / plain_rate);
}

void capture(long long bytes) {
  const std::string file = "/dev/shm/paddock-bench-capture";
  {
    std::ofstream out(file, std::ios::binary);
    std::string block(1 << 20, 'x');
    for (long long w = 0; w < bytes; w += block.size())
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
  std::string sh = "cat " + file + " > /dev/null";
  const char* argv[] = {"/bin/sh", "-c", sh.c_str(), nullptr};
  plain_run(argv);  // page cache warm
  auto t = clock_type::now();
  plain_run(argv);
  double plain_gbs = static_cast<double>(bytes) / (us_since(t) * 1e3);

  // The fair baseline: the same `cat` into a pipe, read by a blocking loop (1 MiB pipe,
  // 256 KiB reads, as paddock does after growing a busy pipe).
  double pipe_gbs;
  {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) std::exit(1);
    fcntl(fds[0], F_SETPIPE_SZ, 1 << 20);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    const char* cat_argv[] = {"/bin/cat", file.c_str(), nullptr};
    t = clock_type::now();
    pid_t pid;
    posix_spawn(&pid, cat_argv[0], &fa, nullptr, const_cast<char* const*>(cat_argv), environ);
    close(fds[1]);
    static char buf[256 * 1024];
    long long total = 0;
    for (ssize_t r; (r = read(fds[0], buf, sizeof buf)) > 0;) total += r;
    int status;
    waitpid(pid, &status, 0);
    pipe_gbs = static_cast<double>(total) / (us_since(t) * 1e3);
    close(fds[0]);
    posix_spawn_file_actions_destroy(&fa);
  }

  paddock::Runtime rt({2});
  paddock::Manager m(rt.executor(), supervision_config());
  t = clock_type::now();
  auto drained = paddock_run(m, paddock::Command::exec({"/bin/cat", file}));
  double drain_gbs = static_cast<double>(drained.stdout_bytes_total) / (us_since(t) * 1e3);
  paddock::ExecOptions keep_all;
  keep_all.max_output_bytes = static_cast<std::size_t>(bytes);
  t = clock_type::now();
  auto kept = paddock_run(m, paddock::Command::exec({"/bin/cat", file}), keep_all);
  double keep_gbs = static_cast<double>(kept.stdout_data.size()) / (us_since(t) * 1e3);
  ::unlink(file.c_str());
  std::printf(
      "| capture `cat` %lld MiB, past the 1 MiB cap; plain: blocking read loop on a pipe (%s) | "
      "%.2f GB/s | | %.2f GB/s | | %.2f× |\n",
      bytes >> 20, kBackend, drain_gbs, pipe_gbs, drain_gbs / pipe_gbs);
  std::printf(
      "| capture `cat` %lld MiB, all kept in memory; plain: as above (%s) | %.2f GB/s | | %.2f "
      "GB/s | | %.2f× |\n",
      bytes >> 20, kBackend, keep_gbs, pipe_gbs, keep_gbs / pipe_gbs);
  std::printf(
      "| reference: `cat` %lld MiB > /dev/null, no pipe at all (%s) | | | %.2f GB/s | | |\n",
      bytes >> 20, kBackend, plain_gbs);
}

void many(int n, bool capture) {
  // 3 fds per child (1 when discarded): raising the hard limit needs CAP_SYS_RESOURCE.
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  const auto needed = static_cast<rlim_t>((capture ? 3 : 1) * n + 256);
  if (lim.rlim_max < needed) {
    lim.rlim_max = lim.rlim_cur = needed;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0)
      std::perror("setrlimit: raising RLIMIT_NOFILE needs CAP_SYS_RESOURCE; N is too large here");
  }
  paddock::Runtime rt({2});
  paddock::Config cfg = supervision_config();
  cfg.kill_grace = std::chrono::milliseconds(0);
  paddock::Manager m(rt.executor(), cfg);
  paddock_run(m, paddock::Command::exec({"/bin/true"}));  // warm: loop fds and buffers exist
  const long rss_before = status_kib("VmRSS:");
  std::atomic<int> running{0}, finished{0};
  std::promise<void> all_started, all_done;
  auto t = clock_type::now();
  for (int i = 0; i < n; ++i) {
    paddock::ExecOptions o;
    o.discard_output = !capture;
    o.on_started = [&](int) {
      if (running.fetch_add(1) + 1 == n) all_started.set_value();
    };
    m.async_exec(paddock::Command::exec({"/bin/sleep", "600"}), std::move(o),
                 [&](std::error_code, paddock::ExecResult) {
                   if (finished.fetch_add(1) + 1 == n) all_done.set_value();
                 });
  }
  all_started.get_future().wait();
  double start_s = us_since(t) / 1e6;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const long rss_during = status_kib("VmRSS:");
  const long threads = status_kib("Threads:");
  t = clock_type::now();
  m.close();
  all_done.get_future().wait();
  double stop_s = us_since(t) / 1e6;
  rt.join();
  double per_child = static_cast<double>(rss_during - rss_before) * 1024.0 / n;
  std::printf(
      "| %d concurrent `sleep` children, %s (%s): supervisor RSS per child | %.1f KiB | %ld "
      "threads | started in %.1f s | killed+reaped in %.1f s | |\n",
      n, capture ? "output captured, 3 fds each" : "output discarded, 1 fd each", kBackend,
      per_child / 1024.0, threads, start_s, stop_s);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s latency|throughput|capture|many N\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  long long n = std::atoll(argv[2]);
  if (mode == "latency")
    latency(static_cast<int>(n));
  else if (mode == "throughput")
    throughput(static_cast<int>(n));
  else if (mode == "capture")
    capture(n);
  else if (mode == "many")
    many(static_cast<int>(n), true);
  else if (mode == "many-discard")
    many(static_cast<int>(n), false);
  else
    return 2;
  return 0;
}
