// Parent side of the Linux sandbox: turns a SandboxPolicy and a command's working directory
// into the ChildSandbox the child applies (child_plan.hpp), with every string it points at
// owned here. Built per command (paths are resolved against the host as it is now); the
// per-policy parts (seccomp program, probed features) live in SandboxContext, built once.
// plan_builder.cpp: namespaces, ids, limits, Landlock; mount_plan.cpp: the mount layout.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "paddock/sandbox_policy.hpp"
#include "sandbox/change_set.hpp"
#include "sandbox/linux/child_plan.hpp"
#include "sandbox/linux/mount_template.hpp"
#include "sandbox/linux/netns_pool.hpp"
#include "sandbox/linux/sandbox_context.hpp"
#include "sandbox/post_run_audit.hpp"

namespace paddock::sandbox {

// When a plan makes the change set of its writable roots.
enum class ChangeSetMaking {
  now,         // as it is made: the command starts in a sandbox made from this plan
  made_ahead,  // as it is made, "waiting": a sandbox made before its command
               // (manager/warm_sandboxes.hpp), never shown as a command's until one takes it
  on_demand,   // only by make_change_set(): a command that a sandbox made ahead may serve
               // (which has a set of its own) makes none in vain
};

class SandboxPlan {
 public:
  // `cwd` is canonical; `cwd_identity` the object it named when it was resolved
  // (working_directory.hpp): the plan refuses if the path names another object now.
  // `program` (absolute; may be empty): the file execve will run. One that lies under the
  // private /tmp (a tool built in a checkout under /tmp) is shown there again, read-only.
  // `policy`: this call's policy (the context's with ExecOptions::policy applied); null: the
  // context's own.
  SandboxPlan(const SandboxContext& context, const std::string& cwd,
              const PathIdentity& cwd_identity, const std::string& program = {},
              const SandboxPolicy* policy = nullptr, ChangeSetMaking making = ChangeSetMaking::now);
  SandboxPlan(const SandboxPlan&) = delete;  // child_ points into our own containers

  const ChildSandbox& child() const noexcept { return child_; }
  int clone_flags() const noexcept { return clone_flags_; }
  // A reused network namespace the spawning thread enters for the clone (-1: none; then
  // CLONE_NEWNET is in clone_flags() when the network is blocked).
  int join_netns() const noexcept { return netns_.fd(); }
  // The user namespace that owns it when it is not ours (an unprivileged pool's; -1: none).
  int join_userns() const noexcept { return netns_.user_namespace(); }
  // The caller keeps the lease until the command is over.
  NetnsLease take_netns_lease() noexcept { return std::move(netns_); }
  // Mandatory read-only paths that did not exist when the command started: checked (and what
  // the command created there removed) after it ends, so no stub is ever left on the host.
  const std::vector<std::string>& protected_missing() const noexcept { return missing_; }
  // What the post-run audit checks: protected paths missing at start, the read-only ones'
  // inodes, git state (post_run_audit.hpp).
  AuditPlan take_audit_plan() noexcept { return std::move(audit_); }
  // The copy-on-write layers of its writable directories (null: none, or not made yet).
  std::shared_ptr<ChangeSetInfo> change_set() const noexcept { return change_set_; }
  // ChangeSetMaking::on_demand: the set this plan would make, not made yet (roots, command,
  // cwd, stand-ins as planned, and its start, stamped before the plan looked at the host);
  // null when it has none to make or made it. A command served by a sandbox made ahead gives
  // that sandbox's set this command's name and start (exec_launch.cpp).
  const ChangeSetInfo* planned_change_set() const noexcept {
    return planned_set_ ? &*planned_set_ : nullptr;
  }
  // Makes the planned set and puts its layers into the plan's overlays: the set, or null when
  // the stand-ins it made are not the ones planned (a directory that could not be mirrored
  // after all): that set is removed again and this plan must not be used (make a new one
  // with ChangeSetMaking::now). Throws Error(spawn_failed) as create_change_set does.
  std::shared_ptr<ChangeSetInfo> make_change_set();
  std::size_t mount_count() const noexcept { return mounts_.size(); }
  // Filtered network: the child hands the proxy's listener over on this socket.
  void set_proxy_handoff(int fd) noexcept { child_.proxy_handoff_fd = fd; }
  // Everything the child would do, as bytes: two plans with the same fingerprint give the
  // same sandbox (the same steps on the same host objects, by identity). A sandbox made ahead
  // for one plan serves a command whose own plan, made when it starts, has its fingerprint
  // (manager/warm_sandboxes.hpp). The working directory counts by path and identity (a
  // directory on a tmpfs of ours has none). Descriptor numbers are left out (the handover
  // socket counts by its presence), as is which reused network namespace is joined (they are
  // all alike).
  std::string fingerprint() const;
  // Why its view is not taken from a template (empty: it is, or templates are off).
  const std::string& template_refusal() const noexcept { return template_refusal_; }

 private:
  const char* keep(std::string s);
  // The host object at a canonical path, captured once per plan (path_identity.hpp).
  PathIdentity identity(const std::string& path);
  void plan_mounts(const SandboxContext& context, const std::string& cwd,
                   const std::string& program);
  void plan_landlock(const SandboxContext& context);
  void plan_limits(const ResourceLimits& limits);
  void note_names_looked_up();
  void use_mount_template(const SandboxContext& context);

  std::deque<std::string> strings_;  // stable addresses for the child's const char*
  std::vector<MountOp> mounts_;
  std::vector<LandlockRule> landlock_rules_;
  std::vector<RlimitSetting> rlimits_;
  std::vector<std::string> writable_;     // canonical writable roots (Landlock)
  std::vector<std::string> private_tmp_;  // the private /tmp and /var/tmp mounted (Landlock)
  std::vector<std::string> missing_;
  std::vector<std::string> layered_;  // writable roots behind a copy-on-write layer
  std::shared_ptr<ChangeSetInfo> change_set_;
  std::optional<ChangeSetInfo> planned_set_;  // on_demand, until made
  std::string store_;                         // where the set is (to be) made
  // The overlay of each layered root (index into mounts_, layer), for make_change_set().
  std::vector<std::pair<std::size_t, std::size_t>> overlay_ops_;
  std::shared_ptr<const RootViews> roots_;  // the writable roots, opened once
  std::map<std::string, PathIdentity, std::less<>> identities_;
  // What the child looks up inside layered roots, and the directories on the way there, by
  // the host's identity (absent: zero).
  std::map<std::string, PathIdentity> looked_up_;
  AuditPlan audit_;
  int slots_ = 0;
  int clone_flags_ = 0;
  NetnsLease netns_;
  ChildSandbox child_{};
  const SandboxPolicy* policy_ = nullptr;  // the context's, or the call's
  std::string cwd_;  // entered by the child (its identity is child_.cwd, unless ours)
  ChangeSetMaking making_ = ChangeSetMaking::now;
  // Made from a template: it, the steps the child runs, the overlays the joiner makes.
  std::shared_ptr<const MountTemplate> template_;
  std::vector<MountOp> template_steps_;
  std::vector<int> preset_slots_;
  MountTemplateUse template_use_{};
  std::string template_refusal_;
};

}  // namespace paddock::sandbox
