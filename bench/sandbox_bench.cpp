// paddock_sandbox_bench [N] [--tsv FILE]: what the sandbox costs per command, in one process, as
// two markdown tables on stdout.
//   1. /bin/true through a plain posix_spawn + waitpid, through the Manager unsandboxed, and
//      through the Manager sandboxed (network blocked, and filtered: the default), interleaved in
//      blocks of 10; then N consecutive sandboxed runs alone (the p99 target is over those).
//   2. Where the time goes: process::spawn + waitid with the full plan cut down step by step
//      (ChildSandbox is plain data: a copy with fields cleared), plus the parent-side work.
// Every run must exit 0; a single failure prints why and no table (exit status 1).
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "paddock/manager.hpp"
#include "paddock/runtime.hpp"
#include "process/init_image.hpp"
#include "process/spawn.hpp"
#include "sandbox/change_apply.hpp"
#include "sandbox/linux/mount_table.hpp"
#include "sandbox/linux/plan_builder.hpp"
#include "sandbox/post_run_audit.hpp"
#include "sandbox/working_directory.hpp"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

extern char** environ;

#include "stats.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
const char* kBackend = PADDOCK_IO_URING ? "io_uring" : "epoll";
constexpr int kWarmup = 50;
constexpr int kBlock = 10;

double us_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - t).count();
}

using bench::Stats;
using bench::stats;

// One way of running /bin/true once; returns "" on exit 0, otherwise what went wrong.
struct Variant {
  Variant(std::string l, std::function<std::string()> r) : label(std::move(l)), run(std::move(r)) {}

  std::string label;
  std::function<std::string()> run;
  std::vector<double> us;
  int failures = 0;
  std::string first_failure;
  // Idle before each timed run (not timed): the pause between an agent's commands, in which
  // the Manager makes the next sandbox ahead (manager/warm_sandboxes.hpp).
  std::chrono::microseconds idle_before{0};

  void measure() {
    if (idle_before.count() > 0) std::this_thread::sleep_for(idle_before);
    auto t = clock_type::now();
    std::string error = run();
    double took = us_since(t);
    if (!error.empty()) {
      if (failures++ == 0) first_failure = error;
      return;
    }
    us.push_back(took);
  }
};

// Warm-up, then `n` runs of each, interleaved in blocks so drift on a noisy machine hits all
// of them alike.
void measure_interleaved(std::vector<Variant*> variants, int n) {
  for (int i = 0; i < kWarmup; ++i) {
    for (Variant* v : variants) v->run();
  }
  for (int i = 0; i < n; i += kBlock) {
    for (Variant* v : variants) {
      for (int j = 0; j < kBlock && i + j < n; ++j) v->measure();
    }
  }
}

bool any_failed(const std::vector<const Variant*>& variants) {
  bool failed = false;
  for (const Variant* v : variants) {
    if (v->failures == 0) continue;
    std::fprintf(stderr, "paddock_sandbox_bench: %s: %d of %zu runs failed, first: %s\n",
                 v->label.c_str(), v->failures, v->us.size() + v->failures,
                 v->first_failure.c_str());
    failed = true;
  }
  return failed;
}

std::string describe_status(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED && info.si_status == 0) return "";
  if (info.si_code == CLD_EXITED) return "exit status " + std::to_string(info.si_status);
  return "killed by signal " + std::to_string(info.si_status);
}

std::string plain_run() {
  const char* argv[] = {"/bin/true", nullptr};
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], nullptr, nullptr, const_cast<char* const*>(argv), environ);
  if (rc != 0) return std::string("posix_spawn: ") + std::strerror(rc);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  return "status " + std::to_string(status);
}

// A Manager whose loop runs on the calling thread (as `paddock run` and run_blocking do):
// created once; each run is one async_exec driven to completion.
class InlineManager {
 public:
  explicit InlineManager(paddock::Config config) : manager_(loop_.get_executor(), config) {}

  // Every run from here on goes to one session (paddock/session.hpp), opened in the cwd.
  void use_session() { session_ = manager_.open_session(); }

  std::string run() {
    bool done = false;
    std::string error;
    paddock::ExecOptions options;
    options.session = session_;
    manager_.async_exec(paddock::Command::exec({"/bin/true"}), std::move(options),
                        [&](std::error_code ec, paddock::ExecResult r) {
                          done = true;
                          if (ec) {
                            error = ec.message() + ": " + r.error;
                          } else if (r.exit_code != 0 || r.signal != 0) {
                            error = "exit " + std::to_string(r.exit_code) + ", signal " +
                                    std::to_string(r.signal) + ", stderr: " + r.stderr_data;
                          } else if (r.sandboxed != sandboxed_expected_) {
                            error = std::string("sandboxed=") + (r.sandboxed ? "true" : "false") +
                                    ": " + r.error;
                          }
                        });
    loop_.restart();
    while (!done) loop_.run_one();
    return error;
  }
  void expect_sandboxed(bool yes) { sandboxed_expected_ = yes; }
  paddock::Manager::WarmSandboxCounts warm_counts() const { return manager_.warm_sandbox_counts(); }

 private:
  asio::io_context loop_{1};
  paddock::Manager manager_;
  bool sandboxed_expected_ = false;
  std::shared_ptr<paddock::Session> session_;
};

// process::spawn + a blocking waitid on the pidfd: the spawn path without the Manager.
class DirectSpawn {
 public:
  // The user namespace of an unprivileged pool's namespaces (SandboxPlan::join_userns).
  int pool_userns = -1;

  DirectSpawn() : plan_("/bin/true", {"/bin/true"}, {"PATH=/usr/bin:/bin"}, cwd()) {
    dev_null_ = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  }
  ~DirectSpawn() { ::close(dev_null_); }

  static std::string cwd() {
    char* real = ::realpath(".", nullptr);
    std::string s = real != nullptr ? real : "/";
    std::free(real);
    return s;
  }

  // With `init`, paddock-init is PID 1 and forks the command, as the Manager runs it; its
  // report pipe's read end is closed once the run is over (the records fit in the pipe).
  std::string run(int clone_flags, const paddock::sandbox::ChildSandbox* child, int join_netns = -1,
                  bool init = false) {
    plan_.set_sandbox(0, nullptr);  // clears the previous run's init
    plan_.set_sandbox(clone_flags, child, join_netns, join_netns >= 0 ? pool_userns : -1);
    int report[2] = {-1, -1};
    if (init) {
      if (::pipe2(report, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
      plan_.set_init(paddock::process::init_image_fd(), report[1], mount_points_.get());
    }
    struct ClosePipe {
      int* fds;
      ~ClosePipe() {
        for (int i = 0; i < 2; ++i)
          if (fds[i] >= 0) ::close(fds[i]);
      }
    } close_pipe{report};
    auto r = paddock::process::spawn(plan_, {dev_null_, dev_null_, dev_null_, dev_null_});
    if (r.pid < 0) return std::string(r.failed_step) + ": " + std::strerror(r.error);
    siginfo_t info{};
    // __WALL: the child's exit signal is 0 until execve (spawn.cpp).
    int rc = ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(r.pidfd), &info,
                      WEXITED | __WALL);
    ::close(r.pidfd);
    if (rc != 0) return std::string("waitid: ") + std::strerror(errno);
    if (r.error != 0) {
      return std::string(r.failed_step) + (r.failed_path ? std::string(" ") + r.failed_path : "") +
             ": " + std::strerror(r.error);
    }
    return describe_status(info);
  }

 private:
  paddock::process::SpawnPlan plan_;
  int dev_null_ = -1;

 public:
  paddock::UniqueFd mount_points_;  // the plan's, for paddock-init (init_report.hpp)
};

void print_row(const char* label, const Stats& s, const Stats* base1, const Stats* base2) {
  std::printf("| %s | %.0f µs | %.0f µs | %.0f µs |", label, s.median, s.p99, s.mean);
  if (base1 != nullptr)
    std::printf(" %.2f× |", s.median / base1->median);
  else
    std::printf(" |");
  if (base2 != nullptr)
    std::printf(" %.2f× |", s.median / base2->median);
  else
    std::printf(" |");
  std::printf("\n");
}

// key, median, p99, mean in µs, one line each: for compare_isolation.sh's target checks.
void write_tsv(const char* path, const std::vector<std::pair<const char*, const Variant*>>& rows) {
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) {
    std::perror(path);
    return;
  }
  for (const auto& [key, v] : rows) {
    Stats s = stats(v->us);
    std::fprintf(f, "%s\t%.1f\t%.1f\t%.1f\n", key, s.median, s.p99, s.mean);
  }
  std::fclose(f);
}

int run(int n, const char* tsv) {
  paddock::init_process_once();
  namespace sb = paddock::sandbox;
  // Once per process, before anything else asks: what the kernel offers (no child started).
  auto probe_start = clock_type::now();
  sb::features();
  const double probe_us = us_since(probe_start);
  // The namespace probe is doctor's (the runtime lets the first clone tell); here it says
  // early and clearly why the bench cannot run.
  if (std::string why = sb::probe_namespaces(); !why.empty()) {
    std::fprintf(stderr, "paddock_sandbox_bench: %s\n", why.c_str());
    return 1;
  }

  // 1. Through the Manager.
  paddock::Config unsandboxed_config = paddock::DefaultConfig();
  unsandboxed_config.sandbox.enabled = false;
  InlineManager unsandboxed(unsandboxed_config);
  paddock::Config blocked_config = paddock::DefaultConfig();
  blocked_config.sandbox.network.mode = paddock::NetworkMode::blocked;
  InlineManager sandboxed(blocked_config);
  sandboxed.expect_sandboxed(true);
  // The default: filtered, i.e. the same sandbox plus a proxy listener made in the child and
  // handed over, a per-command credential and a proxy session on the loop.
  InlineManager filtered(paddock::DefaultConfig());
  filtered.expect_sandboxed(true);
  // Every sandbox made at the command's start (nothing made ahead).
  paddock::Config fresh_config = blocked_config;
  fresh_config.warm_sandboxes = 0;
  InlineManager made_fresh(fresh_config);
  made_fresh.expect_sandboxed(true);

  Variant plain{"plain posix_spawn + waitpid", plain_run};
  Variant off{"paddock, unsandboxed (Manager, sandbox.enabled=false)",
              [&] { return unsandboxed.run(); }};
  Variant on{"paddock, sandboxed (Manager, DefaultConfig but network blocked)",
             [&] { return sandboxed.run(); }};
  Variant on_fresh{"paddock, sandboxed, nothing made ahead (the same, warm_sandboxes = 0)",
                   [&] { return made_fresh.run(); }};
  Variant on_filtered{"paddock, sandboxed (Manager, DefaultConfig: network filtered, the proxy)",
                      [&] { return filtered.run(); }};
  // The same without mount templates: every sandbox runs all its mount steps.
  paddock::Config stepwise_config = blocked_config;
  stepwise_config.mount_templates = false;
  InlineManager stepwise(stepwise_config);
  stepwise.expect_sandboxed(true);
  paddock::Config stepwise_fresh_config = fresh_config;
  stepwise_fresh_config.mount_templates = false;
  InlineManager stepwise_fresh(stepwise_fresh_config);
  stepwise_fresh.expect_sandboxed(true);
  Variant on_stepwise{"paddock, sandboxed, no mount template (the same, mount_templates = false)",
                      [&] { return stepwise.run(); }};
  Variant on_fresh_stepwise{
      "paddock, sandboxed, nothing made ahead and no mount template (both off)",
      [&] { return stepwise_fresh.run(); }};
  Variant on_alone{"paddock, sandboxed, consecutive runs alone (not interleaved)",
                   [&] { return sandboxed.run(); }};
  // Sessions: the sandbox made once, each command handed to its paddock-init.
  InlineManager in_session(blocked_config);
  in_session.expect_sandboxed(true);
  in_session.use_session();
  InlineManager in_filtered_session(paddock::DefaultConfig());
  in_filtered_session.expect_sandboxed(true);
  in_filtered_session.use_session();
  Variant on_session{"paddock, in a session (Manager::open_session; network blocked)",
                     [&] { return in_session.run(); }};
  Variant on_filtered_session{"paddock, in a session (DefaultConfig: network filtered)",
                              [&] { return in_filtered_session.run(); }};
  measure_interleaved({&plain, &off, &on, &on_filtered, &on_fresh, &on_stepwise, &on_fresh_stepwise,
                       &on_session, &on_filtered_session},
                      n);
  for (int i = 0; i < n; ++i) on_alone.measure();
  for (const auto& [name, m] :
       {std::pair{"blocked", &sandboxed}, std::pair{"filtered", &filtered}}) {
    const auto w = m->warm_counts();
    std::fprintf(stderr, "sandboxes made ahead (%s): %llu used, %llu made at the command's start\n",
                 name, static_cast<unsigned long long>(w.used),
                 static_cast<unsigned long long>(w.made_at_start));
  }
  // The same with 5 ms idle before each command, as between an agent's commands: the next
  // sandbox is made in the pause instead of competing with the command for the 2 cores.
  constexpr auto kIdle = std::chrono::microseconds(5000);
  Variant idle_plain{plain.label, plain.run}, idle_off{off.label, off.run},
      idle_on{on.label, on.run}, idle_filtered{on_filtered.label, on_filtered.run},
      idle_fresh{on_fresh.label, on_fresh.run};
  for (Variant* v : {&idle_plain, &idle_off, &idle_on, &idle_filtered, &idle_fresh}) {
    v->idle_before = kIdle;
  }
  measure_interleaved({&idle_plain, &idle_off, &idle_on, &idle_filtered, &idle_fresh},
                      std::min(n, 1000));

  // 2. The breakdown: the Manager's own plan for this directory, cut down.
  sb::SandboxContext context(blocked_config.sandbox);
  const std::string cwd = DirectSpawn::cwd();
  sb::SandboxPlan plan(context, cwd, sb::resolve_working_directory(cwd).identity);
  // The network the Manager uses: a reused namespace from the pool (root: setns by the
  // spawning thread, no CLONE_NEWNET), or a new one per command (CLONE_NEWNET).
  const int all_flags = plan.clone_flags();
  const int join = plan.join_netns();
  const bool pooled = join >= 0;
  const int no_net = all_flags & ~CLONE_NEWNET;
  // The step rows build every mount themselves; the row after them takes the view from a
  // mount template (sandbox/linux/mount_template.hpp), as the Manager does.
  sb::ChildSandbox full = plan.child();
  full.mount_template = nullptr;

  sb::ChildSandbox ns = full;  // namespaces only: id maps, hostname, caps dropped
  ns.mount_count = 0;
  ns.slot_count = 0;
  ns.loopback_up = false;
  ns.rlimit_count = 0;
  ns.landlock_abi = 0;
  ns.seccomp = nullptr;
  sb::ChildSandbox net = ns;
  net.loopback_up = full.loopback_up;
  sb::ChildSandbox new_net = ns;  // a new namespace per command: the child brings lo up
  new_net.loopback_up = true;
  sb::ChildSandbox mounts = net;
  mounts.mount_count = full.mount_count;
  mounts.slot_count = full.slot_count;
  sb::ChildSandbox limits = mounts;
  limits.rlimit_count = full.rlimit_count;
  sb::ChildSandbox landlock = limits;
  landlock.landlock_abi = full.landlock_abi;

  DirectSpawn direct;
  direct.pool_userns = plan.join_userns();
  direct.mount_points_ = sb::mount_points_memfd(sb::planned_mount_points(full));
  Variant s0{"clone + execve, no sandbox (process::spawn)", [&] { return direct.run(0, nullptr); }};
  Variant s1{
      "+ namespaces: user (id maps), mount, PID, IPC, UTS (hostname), cgroup; "
      "no_new_privs, caps dropped",
      [&] { return direct.run(no_net, &ns); }};
  Variant s2{pooled ? "+ network namespace: a reused one from the pool (setns around the clone)"
                    : "+ network namespace: a new one per command (CLONE_NEWNET, loopback up)",
             [&] { return direct.run(all_flags, &net, join); }};
  Variant s2_new{
      "(instead of the pool: a new network namespace per command, CLONE_NEWNET, "
      "loopback up)",
      [&] { return direct.run(no_net | CLONE_NEWNET, &new_net); }};
  Variant s3{"+ mounts (" + std::to_string(full.mount_count) + " steps: host read-only, /proc, " +
                 (pooled ? "" : "/sys, ") + "/dev, /tmp, policy paths)",
             [&] { return direct.run(all_flags, &mounts, join); }};
  Variant s4{"+ rlimits (" + std::to_string(full.rlimit_count) + ")",
             [&] { return direct.run(all_flags, &limits, join); }};
  Variant s5{"+ Landlock (ABI " + std::to_string(full.landlock_abi) + ", " +
                 std::to_string(full.landlock_rule_count) + " rules)",
             [&] { return direct.run(all_flags, &landlock, join); }};
  Variant s6{"+ seccomp = the full sandbox", [&] { return direct.run(all_flags, &full, join); }};
  const sb::ChildSandbox& templated = plan.child();
  const std::size_t own_steps =
      templated.mount_template != nullptr ? templated.mount_template->mount_count : 0;
  Variant s6_template{"(instead: the same, its view copied from a mount template: " +
                          std::to_string(own_steps) + " mount steps of its own)",
                      [&] { return direct.run(all_flags, &templated, join); }};
  Variant s6_init{"+ paddock-init as PID 1 (its execve, its vfork of the command, its exit)",
                  [&] { return direct.run(all_flags, &full, join, true); }};
  // As the Manager does it: the plan built for each command (paths resolved against the host
  // as it is now, a namespace leased), the protected paths checked once the command is gone.
  Variant s7{"+ the plan built per command, the post-run audit (as the Manager)", [&] {
               auto dir = sb::resolve_working_directory(cwd);
               sb::SandboxPlan fresh(context, dir.path, dir.identity);
               std::string error =
                   direct.run(fresh.clone_flags(), &fresh.child(), fresh.join_netns(), true);
               auto report = sb::audit_after_command(fresh.take_audit_plan(), "true");
               if (!report.violations.empty() || !report.failure.empty()) {
                 error = "the audit found something: " + report.failure;
               }
               return error;
             }};
  std::vector<Variant*> steps = {&s0, &s1, &s2, &s3, &s4, &s5, &s6, &s6_init, &s7};
  if (pooled) steps.insert(steps.begin() + 3, &s2_new);
  if (templated.mount_template != nullptr) {
    steps.insert(std::find(steps.begin(), steps.end(), &s6) + 1, &s6_template);
  }
  measure_interleaved(steps, n);

  // Parent-side work per sandboxed command, outside the child: building the plan (policy
  // paths resolved against the host as it is now) and, after exit, the protected-path check.
  // Each plan makes a change set (a spare taken); retired again at once, as after a command
  // that wrote nothing, so the store does not grow with the runs.
  Variant build{
      "parent alone: working directory resolved, SandboxPlan built (its change set "
      "made, then retired)",
      [&] {
        auto dir = sb::resolve_working_directory(cwd);
        sb::SandboxPlan p(context, dir.path, dir.identity);
        auto made = p.take_audit_plan().change_set;
        if (made) sb::retire_change_set(*made);
        return p.child().mount_count == full.mount_count ? "" : "plan changed";
      }};
  // The audit alone, and the change set apart: one set is applied once (then it is gone).
  sb::AuditPlan audit_plan = plan.take_audit_plan();
  const auto plan_set = audit_plan.change_set;
  audit_plan.change_set.reset();
  Variant empty_set{"parent alone: an empty change set made (a spare taken) and applied", [&] {
                      if (!plan_set) return std::string();
                      auto set = sb::create_change_set(audit_plan.change_store, *plan_set);
                      auto summary = sb::apply_change_set(set, {});
                      return summary.pending.empty() && summary.held.empty()
                                 ? std::string()
                                 : "apply: " + summary.pending;
                    }};
  // The same without spares (as before them): made afresh in a store of its own, removed.
  const std::string fresh_store = audit_plan.change_store + "-bench-fresh";
  Variant fresh_set{"(instead: the same set made afresh and removed, no spares)", [&] {
                      if (!plan_set) return std::string();
                      ::mkdir(fresh_store.c_str(), 0700);
                      auto set = sb::create_change_set(fresh_store, *plan_set);
                      sb::remove_change_set(set);
                      return std::string();
                    }};
  Variant revert{
      "parent alone: the post-run audit (" + std::to_string(audit_plan.protected_missing.size()) +
          " missing protected paths, git state rescanned)",
      [&] {
        auto report = sb::audit_after_command(audit_plan, "true");
        return report.violations.empty() && report.failure.empty() ? ""
                                                                   : "the audit found something";
      }};
  measure_interleaved({&build, &revert, &empty_set, &fresh_set}, n);
  ::rmdir(fresh_store.c_str());
  if (plan_set) sb::remove_change_set(*plan_set);  // the breakdown's own, never applied
  // Per Manager (so per `paddock run`): the policy checked, the seccomp program compiled.
  Variant make_context{"per Manager: SandboxContext (seccomp program compiled)", [] {
                         sb::SandboxContext c(paddock::DefaultConfig().sandbox);
                         return c.usable() ? "" : "unusable";
                       }};
  measure_interleaved({&make_context}, std::min(n, 200));

  if (any_failed({&on_session, &on_filtered_session,
                  &plain,      &off,
                  &on,         &on_filtered,
                  &on_fresh,   &on_alone,
                  &idle_plain, &idle_off,
                  &idle_on,    &idle_filtered,
                  &idle_fresh, &s0,
                  &s1,         &s2,
                  &s3,         &s4,
                  &s5,         &s6,
                  &s6_init,    &s7,
                  &s2_new,     &build,
                  &revert,     &empty_set,
                  &fresh_set,  &make_context})) {
    return 1;
  }

  if (tsv != nullptr) {
    std::vector<std::pair<const char*, const Variant*>> rows = {
        {"plain", &plain},
        {"unsandboxed", &off},
        {"sandboxed", &on},
        {"sandboxed_filtered", &on_filtered},
        {"sandboxed_consecutive", &on_alone},
        {"sandboxed_fresh", &on_fresh},
        {"session", &on_session},
        {"session_filtered", &on_filtered_session},
        {"idle_unsandboxed", &idle_off},
        {"idle_sandboxed", &idle_on},
        {"idle_sandboxed_fresh", &idle_fresh},
        {"spawn", &s0},
        {"namespaces", &s1},
        {"netns", &s2},
        {"mounts", &s3},
        {"rlimits", &s4},
        {"landlock", &s5},
        {"seccomp", &s6},
        {"init", &s6_init},
        {"per_command_plan", &s7},
        {"plan", &build},
        {"protected_check", &revert},
        {"empty_change_set", &empty_set},
        {"fresh_change_set", &fresh_set},
        {"context", &make_context}};
    if (pooled) rows.emplace_back("netns_new", &s2_new);
    write_tsv(tsv, rows);
  }
  const Stats a = stats(plain.us), b = stats(off.us), c = stats(on.us), d = stats(on_alone.us);
  std::printf(
      "| in process, /bin/true, %d runs each, loop on the calling thread (%s) | median | p99 | "
      "mean | / plain | / unsandboxed |\n",
      n, kBackend);
  std::printf("|---|---|---|---|---|---|\n");
  print_row(plain.label.c_str(), a, nullptr, nullptr);
  print_row(off.label.c_str(), b, &a, nullptr);
  print_row(on.label.c_str(), c, &a, &b);
  const Stats f = stats(on_filtered.us);
  print_row(on_filtered.label.c_str(), f, &a, &b);
  print_row(on_fresh.label.c_str(), stats(on_fresh.us), &a, &b);
  print_row(on_stepwise.label.c_str(), stats(on_stepwise.us), &a, &b);
  print_row(on_fresh_stepwise.label.c_str(), stats(on_fresh_stepwise.us), &a, &b);
  print_row(on_alone.label.c_str(), d, &a, &b);
  print_row(on_session.label.c_str(), stats(on_session.us), &a, &b);
  print_row(on_filtered_session.label.c_str(), stats(on_filtered_session.us), &a, &b);
  std::printf("\n");
  const Stats ia = stats(idle_plain.us), ib = stats(idle_off.us);
  std::printf(
      "| the same with %d ms idle before each command (as between an agent's commands), %zu runs "
      "each (%s) | median | p99 | mean | / plain | / unsandboxed |\n",
      static_cast<int>(kIdle.count() / 1000), idle_plain.us.size(), kBackend);
  std::printf("|---|---|---|---|---|---|\n");
  print_row(idle_plain.label.c_str(), ia, nullptr, nullptr);
  print_row(idle_off.label.c_str(), ib, &ia, nullptr);
  print_row(idle_on.label.c_str(), stats(idle_on.us), &ia, &ib);
  print_row(idle_filtered.label.c_str(), stats(idle_filtered.us), &ia, &ib);
  print_row(idle_fresh.label.c_str(), stats(idle_fresh.us), &ia, &ib);
  std::printf("\n");

  std::printf(
      "| where the time goes: process::spawn + waitid, each step adds to the one above, %d "
      "runs each (%s) | median | p99 | mean | step adds (median) |\n",
      n, kBackend);
  std::printf("|---|---|---|---|---|\n");
  Stats prev{};
  bool first = true;
  for (const Variant* v : steps) {
    Stats s = stats(v->us);
    std::printf("| %s | %.0f µs | %.0f µs | %.0f µs |", v->label.c_str(), s.median, s.p99, s.mean);
    if (v == &s2_new) {  // a side branch: compared with the namespaces row, not in the chain
      std::printf(" %+.0f µs over the namespaces row |\n", s.median - stats(s1.us).median);
      continue;
    }
    if (v == &s6_template) {  // the same: compared with the full sandbox row
      std::printf(" %+.0f µs against the row above |\n", s.median - prev.median);
      continue;
    }
    if (first)
      std::printf(" |\n");
    else
      std::printf(" %+.0f µs |\n", s.median - prev.median);
    prev = s;
    first = false;
  }
  for (const Variant* v : {&build, &revert, &empty_set, &fresh_set, &make_context}) {
    Stats s = stats(v->us);
    std::printf("| %s | %.0f µs | %.0f µs | %.0f µs | |\n", v->label.c_str(), s.median, s.p99,
                s.mean);
  }
  std::printf("| once per process: kernel features probed (one run) | %.0f µs | | | |\n", probe_us);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 2000;
  const char* tsv = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--tsv") == 0 && i + 1 < argc) {
      tsv = argv[++i];
    } else {
      n = std::atoi(argv[i]);
    }
  }
  if (n < 1) {
    std::fprintf(stderr, "usage: %s [RUNS] [--tsv FILE]\n", argv[0]);
    return 2;
  }
  try {
    return run(n, tsv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "paddock_sandbox_bench: %s\n", e.what());
    return 1;
  }
}
