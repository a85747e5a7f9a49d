#include "sandbox/post_run_audit.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "sandbox/change_apply.hpp"
#include "sandbox/quarantine.hpp"

namespace paddock::sandbox {

AuditReport audit_after_command(const AuditPlan& plan, const std::string& program) {
  AuditReport report;
  const RootViews::Active through_roots(plan.roots.get());
  const std::string tag = new_quarantine_tag();
  // Git state first: a replaced `.git` goes as a whole, before the checks below would move
  // its config and hooks one by one.
  std::string incomplete;
  for (auto& v : audit_git_state(plan.git, tag, program, &incomplete)) {
    report.violations.push_back(std::move(v));
  }
  const std::vector<bool> absent = certainly_absent(plan.protected_missing);
  for (std::size_t i = 0; i < plan.protected_missing.size(); ++i) {
    if (absent[i]) continue;
    const std::string& path = plan.protected_missing[i];
    QuarantineOutcome q = quarantine_created(path, tag);
    if (q.kind == QuarantineOutcome::nothing) continue;
    Violation v;
    v.operation = "file-write";
    v.path = q.path;
    v.process = program;
    v.raw = "protected path created: " + path;
    if (q.kind == QuarantineOutcome::moved) {
      v.detail = std::string("created a protected path (read-only in the sandbox; ") + q.type +
                 "); quarantined: moved to " + q.moved_to;
    } else {
      v.detail = std::string("created a protected path (read-only in the sandbox); ") +
                 "quarantining it FAILED: " + std::strerror(q.error) +
                 "; the host must not use it (nor run git or a shell there) until it is removed";
      if (report.failure.empty()) {
        report.failure = "the command created " + q.path +
                         " (a protected path) and it could not be quarantined: the host must "
                         "not run git or a shell there until it is removed";
      }
    }
    report.violations.push_back(std::move(v));
  }
  for (const auto& id : plan.protected_existing) {
    QuarantineOutcome q =
        quarantine_if_replaced(id, tag, plan.mounts_dropped > 0 || plan.mounts_unverified);
    if (q.kind == QuarantineOutcome::nothing) continue;
    Violation v;
    v.operation = "file-write";
    v.path = q.path;
    v.process = program;
    v.raw = "protected path replaced: " + id.path;
    if (q.kind == QuarantineOutcome::moved) {
      v.detail = std::string(
                     "a protected path was replaced, changed or given a second name during the "
                     "run (") +
                 q.type +
                 "; from outside this sandbox: another sandbox, its audit, or the host; its "
                 "read-only mount here may have gone with it); quarantined: moved to " +
                 q.moved_to;
    } else {
      v.detail = std::string(
                     "a protected path was replaced during the run; quarantining it "
                     "FAILED: ") +
                 std::strerror(q.error);
      if (report.failure.empty()) {
        report.failure = q.path +
                         " was replaced during the run and could not be quarantined: "
                         "the host must not run git or a shell there until it is checked";
      }
    }
    report.violations.push_back(std::move(v));
  }
  if (plan.mounts_dropped > 0) {
    Violation v;
    v.operation = "file-write";
    v.process = program;
    v.raw = "mounts dropped: " + std::to_string(plan.mounts_dropped);
    v.detail = std::to_string(plan.mounts_dropped) +
               " read-only mount(s) of this sandbox were dropped from outside while it ran "
               "(another mount namespace, the host or another sandbox, unlinked or renamed a "
               "protected name); every read-only protected file was compared, and what changed "
               "was quarantined";
    report.violations.push_back(std::move(v));
  }
  // Last, the change set: the checks above looked at the host as the command left it (a
  // layered root unchanged), and this is the one step that writes the workspace.
  if (plan.change_set) {
    ApplyOptions options;
    options.keep_layer = plan.keep_layer;
    for (const auto& root : plan.change_set->roots) {
      const auto [fd, rest] =
          plan.roots ? plan.roots->beneath(root) : std::pair<int, std::string_view>{-1, {}};
      options.root_fds.push_back(rest.empty() ? fd : -1);
    }
    // A session's set is judged again after each command: what an earlier command's apply
    // held back already was reported then (it still waits, in report.changes.held).
    const std::vector<HeldChange> told =
        plan.keep_layer ? plan.change_set->held : std::vector<HeldChange>{};
    report.changes = apply_change_set(*plan.change_set, options);
    for (const auto& held : report.changes.held) {
      if (std::find(told.begin(), told.end(), held) != told.end()) continue;
      Violation v;
      v.operation = "file-write";
      v.path = held.path;
      v.process = program;
      v.raw = "change held back: " + held.path;
      v.detail = "held back, not applied to the workspace: " + held.reason +
                 " (kept in change set " + report.changes.id + ": `paddock changes show " +
                 report.changes.id + "`)";
      report.violations.push_back(std::move(v));
    }
  }
  if (!incomplete.empty() && report.failure.empty()) {
    report.failure =
        incomplete + "; the host must not run git in " +
        (plan.git.roots.empty() ? std::string("the workspace") : plan.git.roots.front()) +
        " until it is checked";
  }
  return report;
}

}  // namespace paddock::sandbox
