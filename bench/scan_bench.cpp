// paddock_scan_bench DIR [RUNS] [COLD_RUNS]: what the git-state scan of a workspace costs a
// sandboxed command, through one Manager (its loop on this thread, as `paddock run` runs it).
//   - /bin/true in DIR: unsandboxed and sandboxed (network blocked), interleaved in blocks of
//     10, the scan cache warm (the Manager's process keeps it between commands);
//   - sandboxed with the cache emptied before each run (cold: the first command of a
//     process; the audit after it then finds the listings the scan before it stored);
//   - scan_git_state of DIR alone, cold and warm.
// Prints one markdown table (median, p99, mean in µs) and the cache's counters.
// paddock_scan_bench --make-tree DIR FILES: makes DIR with a node_modules-like tree of about
// FILES files (tests/support/package_tree.hpp) to measure in.
#include <sys/stat.h>
#include <unistd.h>

#include <asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "paddock/manager.hpp"
#include "paddock/runtime.hpp"
#include "sandbox/git_state.hpp"
#include "sandbox/scan_cache.hpp"
#include "stats.hpp"
#include "tests/support/package_tree.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
using paddock::sandbox::ScanCache;

class InlineManager {
 public:
  InlineManager(paddock::Config config, std::string cwd)
      : manager_(loop_.get_executor(), config), cwd_(std::move(cwd)) {}

  std::string run() {
    bool done = false;
    std::string error;
    paddock::ExecOptions options;
    options.cwd = cwd_;
    manager_.async_exec(paddock::Command::exec({"/bin/true"}), options,
                        [&](std::error_code ec, paddock::ExecResult r) {
                          done = true;
                          if (ec) error = ec.message() + ": " + r.error;
                          if (!ec && r.exit_code != 0)
                            error = "exit " + std::to_string(r.exit_code);
                        });
    loop_.restart();
    while (!done) loop_.run_one();
    return error;
  }

 private:
  asio::io_context loop_{1};
  paddock::Manager manager_;
  std::string cwd_;
};

struct Sample {
  std::string label;
  std::vector<double> us;
};

// Times `f` once into `s`; exits on failure (a number for a failed run would mislead).
void time_into(Sample& s, const std::function<std::string()>& f) {
  auto t = clock_type::now();
  std::string error = f();
  s.us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t).count());
  if (!error.empty()) {
    std::fprintf(stderr, "paddock_scan_bench: %s: %s\n", s.label.c_str(), error.c_str());
    std::exit(1);
  }
}

void row(const Sample& s, const Sample* base) {
  bench::Stats st = bench::stats(s.us);
  std::printf("| %s | %zu | %.0f | %.0f | %.0f |", s.label.c_str(), s.us.size(), st.median, st.p99,
              st.mean);
  if (base != nullptr) std::printf(" %.2f× |", st.median / bench::stats(base->us).median);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--make-tree") {
    if (::mkdir(argv[2], 0755) != 0 ||
        !test::make_package_tree(argv[2], std::strtoul(argv[3], nullptr, 10))) {
      std::perror(argv[2]);
      return 1;
    }
    return 0;
  }
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [RUNS] [COLD_RUNS]\n", argv[0]);
    return 2;
  }
  char* real = ::realpath(argv[1], nullptr);
  if (real == nullptr) {
    std::perror(argv[1]);
    return 2;
  }
  const std::string dir = real;
  std::free(real);
  const int runs = argc > 2 ? std::atoi(argv[2]) : 500;
  const int cold_runs = argc > 3 ? std::atoi(argv[3]) : 20;
  paddock::init_process_once();
  ScanCache& cache = ScanCache::process();

  paddock::Config off_config = paddock::DefaultConfig();
  off_config.sandbox.enabled = false;
  paddock::Config on_config = paddock::DefaultConfig();
  on_config.sandbox.network.mode = paddock::NetworkMode::blocked;
  InlineManager off(off_config, dir), on(on_config, dir);

  Sample scan_cold{"scan_git_state alone, cache emptied first (cold)", {}};
  Sample scan_warm{"scan_git_state alone, cache warm", {}};
  Sample run_cold{"sandboxed /bin/true, cache emptied first (cold)", {}};
  Sample run_off{"unsandboxed /bin/true (Manager, sandbox.enabled=false)", {}};
  Sample run_on{"sandboxed /bin/true, cache warm (Manager, network blocked)", {}};
  auto scan = [&] {
    try {
      paddock::sandbox::scan_git_state({dir});
      return std::string();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  };
  for (int i = 0; i < cold_runs; ++i) {
    cache.clear();
    time_into(scan_cold, scan);
    cache.clear();
    time_into(run_cold, [&] { return on.run(); });
  }
  // Warm-up, and the tree's listings settled (scan_cache.hpp): stored from here on.
  for (int i = 0; i < 20; ++i) {
    on.run();
    off.run();
  }
  for (int i = 0; i < cold_runs; ++i) time_into(scan_warm, scan);
  for (int done = 0; done < runs; done += 10) {
    for (int j = 0; j < 10; ++j) time_into(run_off, [&] { return off.run(); });
    for (int j = 0; j < 10; ++j) time_into(run_on, [&] { return on.run(); });
  }
  std::printf("| %s | runs | median µs | p99 µs | mean µs | / unsandboxed (median) |\n",
              dir.c_str());
  std::printf("|---|---|---|---|---|---|\n");
  row(run_off, nullptr);
  row(run_on, &run_off);
  row(run_cold, &run_off);
  row(scan_warm, nullptr);
  row(scan_cold, nullptr);
  ScanCache::Stats st = cache.stats();
  std::printf(
      "\nscan cache: %zu directories, %zu KiB, %zu hits, %zu misses, %zu too recent to "
      "store, %zu evicted\n",
      st.directories, st.bytes / 1024, st.hits, st.misses, st.too_recent, st.evicted);
  return 0;
}
