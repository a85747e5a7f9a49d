// paddock_classifier_bench [N]: what deciding before running costs per command, as a markdown
// table: a typical command (argv and script), a 200-command script, and pathological inputs
// at the 64 KiB bound (deep nesting, one huge word, many tiny commands). Goal: a typical
// command well under 20 us median; the worst case bounded (the parser's time limit and the
// size bound, not the input, decide it).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "paddock/classifier.hpp"
#include "stats.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

void row(const char* label, int n, const std::function<paddock::Classification()>& run) {
  for (int i = 0; i < std::min(n, 20); ++i) run();  // warm-up: the thread's parser, caches
  std::vector<double> us;
  paddock::Decision d = paddock::Decision::allow;
  for (int i = 0; i < n; ++i) {
    const auto t = clock_type::now();
    d = run().decision;
    us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t).count());
  }
  const bench::Stats s = bench::stats(us);
  std::printf("| %s | %.1f µs | %.1f µs | %.1f µs | %s |\n", label, s.median, s.p99, s.mean,
              paddock::to_string(d));
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2000;
  std::string script200;
  for (int i = 0; i < 200; ++i) {
    script200 += i % 4 == 0   ? "ls -la src/dir" + std::to_string(i) + "\n"
                 : i % 4 == 1 ? "grep -rn 'TODO' src | head -5\n"
                 : i % 4 == 2 ? "git status --short && make -j2\n"
                              : "echo \"$(date) step " + std::to_string(i) + "\" >> log.txt\n";
  }
  std::string nested;
  while (nested.size() < 60 * 1024) nested = "$(" + nested + "echo x)";
  const std::string long_word(64 * 1024 - 10, 'a');
  std::string many;
  while (many.size() < 64 * 1024 - 8) many += "a;";
  std::printf(
      "| classifier, %d runs each | median | p99 | mean | decision |\n|---|---|---|---|---|\n", n);
  row("typical command, argv: `git status --short`", n, [] {
    return paddock::classify_argv({"git", "status", "--short"});
  });
  row("typical command, script: `npm test -- --watch=false`", n,
      [] { return paddock::classify_script("npm test -- --watch=false"); });
  row("pipeline with sh -c: `bash -lc 'cd x && make' \\| tee log`", n,
      [] { return paddock::classify_script("bash -lc 'cd x && make' | tee log"); });
  row("200-command script", std::max(1, n / 10),
      [&] { return paddock::classify_script(script200); });
  row("64 KiB: `$(` nested 10k deep", std::max(1, n / 100),
      [&] { return paddock::classify_script(nested); });
  row("64 KiB: one word", std::max(1, n / 100),
      [&] { return paddock::classify_script(long_word); });
  row("64 KiB: `a;` x 32k", std::max(1, n / 100), [&] { return paddock::classify_script(many); });
  return 0;
}
