// Deciding before running: the classification of a command (paddock/classifier.hpp) and, for
// an escalated one, the approval it waits for. A forbidden command never starts; an escalated
// one starts only once approved (ApproveSession remembers it for the Manager's life); silence
// past Config::commands.approval_timeout, a denial or no one to ask refuse it.
#include <asio/post.hpp>
#include <atomic>

#include "config/call_domains.hpp"
#include "manager/exec_operation.hpp"
#include "manager/filtered_network.hpp"
#include "net/domain_rules.hpp"
#include "sandbox/path_guard.hpp"
#include "sandbox/path_policy.hpp"
#include "sandbox/working_directory.hpp"

namespace paddock::manager {
namespace {

// What an approval is for: the argv, or the shell string, as one line (approve_session
// remembers exactly this).
std::string normalised(const Command& c) {
  if (c.shell) return *c.shell;
  std::string out;
  for (const auto& a : c.argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

std::string why(const std::string& rule, const std::string& reason) {
  return "rule " + rule + ": " + reason;
}

}  // namespace

Classification classify_command(const Command& c, const CommandRules& rules,
                                const ClassifyContext& context) {
  return c.shell ? classify_script(*c.shell, rules, context)
                 : classify_argv(c.argv, rules, context);
}

}  // namespace paddock::manager

namespace paddock {

ClassifyContext decision_context(const SandboxPolicy& policy, const ExecOptions& options,
                                 const std::string& home, bool network_approval) {
  ClassifyContext ctx;
  ctx.sandboxed = policy.enabled;
  ctx.network = policy.network.mode;
  try {
    ctx.cwd = sandbox::resolve_working_directory(options.cwd.value_or("")).path;
  } catch (const Error&) {
    // The run fails on it with its own message; the classification judges relative paths as
    // from an unknown directory meanwhile.
  }
  ctx.home = !home.empty() ? home : policy.filesystem.home;
  ctx.home_writable = policy.filesystem.allow_write_home;
  ctx.allow_read = policy.filesystem.allow_read;
  ctx.env = options.env;
  ctx.host_sockets =
      policy.network.allow_all_unix_sockets || !policy.network.allow_unix_sockets.empty();
  if (ctx.network == NetworkMode::filtered) {
    // The proxy's two layers, as it applies them: a host either denies is never reached; one
    // the Manager's list does not name is reached only if someone may approve it.
    try {
      auto own = std::make_shared<const net::DomainRules>(policy.network.allowed_domains,
                                                          policy.network.denied_domains,
                                                          net::rule_options(policy.network));
      auto call = configuration::call_domain_rules(options.policy);
      ctx.reaches = [own, call, network_approval](const std::string& host, std::uint16_t port) {
        std::string error;
        const auto canonical = net::canonicalize_host(host, &error);
        if (!canonical) return true;  // not judged here: counted as reached
        const net::Verdict verdict = own->decide(*canonical, port).verdict;
        if (verdict == net::Verdict::deny) return false;
        if (verdict == net::Verdict::unknown && !network_approval) return false;
        return call == nullptr || call->decide(*canonical, port).verdict == net::Verdict::allow;
      };
    } catch (const Error&) {
      // Invalid lists fail the run with their own message; meanwhile every host counts.
    }
  }
  return ctx;
}

ClassifyContext decision_context(const Config& config, const ExecOptions& options,
                                 bool network_approval) {
  return decision_context(with_call_policy(config.sandbox, options.policy), options, "",
                          network_approval);
}

}  // namespace paddock

namespace paddock::manager {

std::optional<std::string> ExecOperation::path_guard_refusal(const Command& command) const {
  const auto dir = sandbox::resolve_working_directory(options_.cwd.value_or(""));
  const std::string home =
      manager_->sandbox_context ? manager_->sandbox_context->home() : std::string();
  std::vector<std::string> roots = {dir.path};
  const SandboxPolicy& base = policy_;  // the call's snapshot (start())
  const auto fs = sandbox::resolve_filesystem(with_call_policy(base, options_.policy).filesystem,
                                              dir.path, home);
  roots.insert(roots.end(), fs.writable_roots.begin(), fs.writable_roots.end());
  const auto tokens = command.shell ? path_tokens(*command.shell) : path_tokens(command.argv);
  return sandbox::path_guard_refusal(tokens, dir.path, roots, home);
}

bool ExecOperation::decide(Command& command) {
  Config::Commands policy;
  {
    // update_config may replace the rules meanwhile: this command uses one whole set.
    std::lock_guard lock(manager_->mutex);
    policy = manager_->config.commands;
  }
  if (policy.path_guard) {
    if (auto why = path_guard_refusal(command)) {
      fail(errc::sandbox_violation, 126, "path guard: " + *why);
      return false;
    }
  }
  if (!policy.classify) return true;
  approval_timeout_ = policy.approval_timeout;
  const std::string home =
      manager_->sandbox_context ? manager_->sandbox_context->home() : std::string();
  const ClassifyContext context = decision_context(with_call_policy(policy_, options_.policy),
                                                   options_, home, manager_->network_approval);
  Classification c = classify_command(command, policy.custom, context);
  if (options_.policy.commands) {
    // A call's rules add to the Manager's: classified with them too, only ever stricter.
    CommandRules call = *options_.policy.commands;
    call.stricter_only = true;
    Classification stricter = classify_command(command, call, context);
    if (static_cast<int>(stricter.decision) > static_cast<int>(c.decision)) c = std::move(stricter);
  }
  classified_ = true;
  decision_ = c.decision;
  rule_ = c.rule;
  reason_ = c.reason;
  if (c.decision == Decision::forbidden) {
    fail(errc::forbidden_command, 126, "forbidden by " + why(rule_, reason_));
    return false;
  }
  if (c.decision != Decision::escalated) return true;
  // What is approved: the command, and what it would run with that another call could change
  // (the shell of a shell string, a call's own policy); approve_session remembers exactly this.
  std::string key = normalised(command);
  const CallPolicy& call = options_.policy;
  if (command.shell && call.shell) key = *call.shell + " -c " + key;
  // Who is asked sees the command; the rest of the key (below) is for telling approvals apart
  // (new-user trial helper-44: through the helper the prompt showed "(in 21:/path) (env ...)").
  std::string shown = key;
  // Where and with what it runs is part of it too (length-prefixed, as below).
  if (options_.cwd)
    key += " (in " + std::to_string(options_.cwd->size()) + ":" + *options_.cwd + ")";
  for (const auto& [name, value] : options_.env) {
    key += " (env " + std::to_string(name.size()) + ":" + name + "=" +
           std::to_string(value.size()) + ":" + value + ")";
  }
  if (!call.allow_write.empty() || !call.deny_read.empty() || !call.deny_write.empty() ||
      call.network || call.commands || call.allowed_domains || !call.denied_domains.empty()) {
    // Spelled out, length-prefixed: approving with one call's policy is not approving with
    // another's (wider writable roots, other hosts).
    auto add = [&key](std::string_view field, const std::vector<std::string>& list) {
      key += " ";
      key += field;
      for (const auto& item : list) key += " " + std::to_string(item.size()) + ":" + item;
    };
    key += " (with this call's own policy:";
    add("allow_write", call.allow_write);
    add("deny_read", call.deny_read);
    add("deny_write", call.deny_write);
    if (call.network) key += std::string(" network ") + to_string(*call.network);
    if (call.allowed_domains) add("allowed_domains", *call.allowed_domains);
    add("denied_domains", call.denied_domains);
    if (call.commands) key += " commands";  // stricter-only rules: a weaker call cannot reuse it
    key += ")";
  }
  CommandApprovalCallback ask = options_.approve;
  {
    std::lock_guard lock(manager_->mutex);
    if (manager_->approved_for_session.count(key) != 0) return true;
    if (!ask) ask = manager_->approval;
  }
  if (!ask) {
    fail(errc::escalated_command, 126,
         "needs approval (" + why(rule_, reason_) +
             "); no approval callback is set (ExecOptions::approve, Manager::set_approval)");
    return false;
  }
  ask_approval(std::move(command), std::move(key), std::move(shown), std::move(ask));
  return false;
}

void ExecOperation::ask_approval(Command command, std::string key, std::string shown,
                                 CommandApprovalCallback ask) {
  pending_command_ = std::move(command);
  approval_key_ = key;
  awaiting_approval_ = true;
  // Before the question goes out: an answer may come back on another thread at once.
  arm_timer(approval_timeout_, &ExecOperation::on_approval_timeout);
  auto answered = std::make_shared<std::atomic<bool>>(false);
  // Weak: an answer kept by the caller past the command's end holds nothing of it (the pending
  // approval timer keeps the operation alive while the question is open). Answered on the
  // caller's thread, under a ticket: the context cannot be torn down meanwhile, and once it is
  // being torn down the answer touches nothing (base/off_loop_work.hpp).
  auto respond = [weak = weak_from_this(), gate = manager_->off_loop, answered](Approval a) {
    if (answered->exchange(true)) return;  // once; later answers are ignored
    base::OffLoopTicket ticket(gate);
    if (!ticket) return;
    if (auto self = weak.lock()) asio::post(self->strand_, [self, a] { self->on_approval(a); });
  };
  try {
    ask(CommandApprovalRequest{std::move(shown), rule_, reason_}, std::move(respond));
  } catch (...) {
    // A callback that throws has not approved anything.
    asio::post(strand_, [self = shared_from_this()] { self->on_approval(Approval::deny); });
  }
}

void ExecOperation::on_approval(Approval answer) {
  if (!awaiting_approval_) return;  // timed out or cancelled first
  awaiting_approval_ = false;
  ++timer_generation_;
  timer_.cancel();
  if (answer == Approval::deny) {
    return fail(errc::escalated_command, 126, "denied (" + why(rule_, reason_) + ")");
  }
  if (answer == Approval::approve_session) {
    std::lock_guard lock(manager_->mutex);
    manager_->approved_for_session.insert(approval_key_);
  }
  Command command = std::move(*pending_command_);
  pending_command_.reset();
  launch_or_fail(std::move(command));
}

void ExecOperation::on_approval_timeout() {
  if (!awaiting_approval_) return;
  awaiting_approval_ = false;
  fail(errc::escalated_command, 126,
       "no approval within " + std::to_string(approval_timeout_.count()) + " ms (" +
           why(rule_, reason_) + ")");
}

}  // namespace paddock::manager
