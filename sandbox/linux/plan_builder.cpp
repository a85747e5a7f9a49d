#include "sandbox/linux/plan_builder.hpp"

#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "paddock/errors.hpp"
#include "sandbox/linux/landlock_abi.hpp"
#include "sandbox/linux/path_identity.hpp"
#include "sandbox/linux/plan_bytes.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {

PathIdentity SandboxPlan::identity(const std::string& path) {
  auto it = identities_.find(path);
  if (it != identities_.end()) return it->second;
  PathIdentity id = capture_identity(path);
  identities_.emplace(path, id);
  return id;
}

const char* SandboxPlan::keep(std::string s) {
  strings_.push_back(std::move(s));
  return strings_.back().c_str();
}

SandboxPlan::SandboxPlan(const SandboxContext& context, const std::string& cwd,
                         const PathIdentity& cwd_identity, const std::string& program,
                         const SandboxPolicy* call_policy, ChangeSetMaking making)
    : policy_(call_policy != nullptr ? call_policy : &context.policy()),
      cwd_(cwd),
      making_(making) {
  const paths::LstatMemo memo;  // one view of the host's names for the whole plan
  const SandboxPolicy& policy = *policy_;
  clone_flags_ =
      CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  if (policy.network.mode != NetworkMode::allowed) {
    if (context.reuse_network_namespaces()) netns_ = lease_network_namespace();
    if (netns_.fd() < 0) clone_flags_ |= CLONE_NEWNET;
  }

  // Our ids inside, mapped to ours outside: from the pool's user namespace, whose root is us
  // (netns_pool.hpp), when the sandbox is made in it.
  const bool in_pool_userns = netns_.user_namespace() >= 0;
  child_.uid_map = keep(std::to_string(::geteuid()) + " " +
                        (in_pool_userns ? "0" : std::to_string(::geteuid())) + " 1");
  child_.gid_map = keep(std::to_string(::getegid()) + " " +
                        (in_pool_userns ? "0" : std::to_string(::getegid())) + " 1");
  child_.cwd = identity(cwd);
  if (cwd_identity.ino != 0 &&
      (child_.cwd.dev != cwd_identity.dev || child_.cwd.ino != cwd_identity.ino)) {
    throw Error(errc::spawn_failed,
                "working directory " + cwd + ": replaced while the sandbox was planned; try again");
  }
  plan_mounts(context, cwd, program);
  plan_limits(policy.limits);
  plan_landlock(context);
  note_names_looked_up();

  child_.mounts = mounts_.data();
  child_.mount_count = mounts_.size();
  child_.slot_count = slots_;
  child_.hostname = keep(policy.hostname);
  child_.hostname_len = policy.hostname.size();
  child_.loopback_up = (clone_flags_ & CLONE_NEWNET) != 0;
  child_.proxy_handoff_fd = -1;
  child_.proxy_port = kSandboxProxyPort;
  child_.rlimits = rlimits_.data();
  child_.rlimit_count = rlimits_.size();
  child_.landlock_rules = landlock_rules_.data();
  child_.landlock_rule_count = landlock_rules_.size();
  child_.cap_last_cap = context.kernel().cap_last_cap;
  child_.seccomp = context.seccomp() != nullptr ? context.seccomp()->fprog() : nullptr;
  if (context.mount_templates()) use_mount_template(context);
}

void SandboxPlan::use_mount_template(const SandboxContext& context) {
  (void)context;
  TemplateSplit split = split_for_template(mounts_, layered_, private_tmp_);
  if (!split.refusal.empty()) {
    template_refusal_ = std::move(split.refusal);
    return;
  }
  template_ = mount_template_for(split.view, slots_, netns_.user_namespace());
  if (!template_) return;
  template_steps_ = std::move(split.command);
  preset_slots_.assign(static_cast<std::size_t>(slots_), -1);
  template_use_ =
      MountTemplateUse{template_->mntns(),     template_->source(),     template_steps_.data(),
                       template_steps_.size(), preset_slots_.data(),    template_->point_names(),
                       template_->point_ids(), template_->point_count()};
  child_.mount_template = &template_use_;
}

std::shared_ptr<ChangeSetInfo> SandboxPlan::make_change_set() {
  if (!planned_set_) return change_set_;
  ChangeSetInfo planned = std::move(*planned_set_);
  planned_set_.reset();
  auto set = std::make_shared<ChangeSetInfo>(create_change_set(store_, planned));
  if (set->placeholders != planned.placeholders ||
      set->placeholder_dirs != planned.placeholder_dirs) {
    remove_change_set(*set);
    return nullptr;
  }
  for (const auto& [index, layer] : overlay_ops_) {
    mounts_[index].data = keep(set->upper(layer));
    mounts_[index].work = keep(set->work(layer));
  }
  change_set_ = set;
  audit_.change_set = set;
  return set;
}

// A sandbox made ahead looks up names inside a layered root before its command comes: its
// mount points there (pins, read-only binds, stand-ins) and its working directory. The overlay
// keeps what it looked up (it never revalidates a lower layer), and the command's change set
// starts when the command does (exec_launch.cpp). So a name there that the host replaced in
// between would show the command the old object, and its writes would be applied over the
// new one as if the host had not touched it. Their steps carry no host identity (the child
// finds the overlay's objects there, mount_plan.cpp), so each such name and every directory
// on the way to it count here by the host's identity, absent ones as absent: a host that
// replaced, made or removed one makes the plan another.
void SandboxPlan::note_names_looked_up() {
  std::vector<std::string> looked_up{cwd_};
  for (const MountOp& m : mounts_) {
    if (m.step != MountStep::overlay_root && m.path != nullptr) looked_up.emplace_back(m.path);
  }
  for (const std::string& root : layered_) {
    for (const std::string& path : looked_up) {
      for (std::string name = path; paths::below(name, root);
           name = std::string(paths::parent_of(name))) {
        if (looked_up_.count(name) != 0) continue;
        // One the host lacks is a stand-in's, made in the layer (change_set.cpp).
        struct stat st;
        const bool absent =
            ::lstat(name.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
        looked_up_.emplace(name, absent ? PathIdentity{} : identity(name));
      }
    }
  }
}

std::string SandboxPlan::fingerprint() const {
  // A field added to these structs must be added below: the sizes make the build say so.
  // (mount_template is left out: a sandbox made from a template is the same sandbox.)
  static_assert(sizeof(ChildSandbox) == 176, "ChildSandbox changed: update fingerprint()");
  static_assert(sizeof(MountOp) == 56, "MountOp changed: update fingerprint()");
  static_assert(sizeof(LandlockRule) == 32, "LandlockRule changed: update fingerprint()");
  static_assert(sizeof(RlimitSetting) == 24, "RlimitSetting changed: update fingerprint()");
  const ChildSandbox& c = child_;
  Bytes b;
  b << clone_flags_ << (netns_.fd() >= 0);
  b.str(cwd_.c_str());
  b.str(c.uid_map).str(c.gid_map);
  b << c.mount_count << c.slot_count;
  for (std::size_t i = 0; i < c.mount_count; ++i) {
    const MountOp& m = c.mounts[i];
    b << m.step << m.writable << m.create << m.is_dir << m.device << m.slot;
    // Which change set's layers an overlay uses differs per plan and says nothing about the
    // sandbox: a sandbox made ahead serves a command with its own set (exec_launch.cpp).
    if (m.step == MountStep::overlay_root) {
      b.str(m.path).id(m.host);
    } else {
      b.str(m.path).str(m.data).str(m.work).id(m.host);
    }
  }
  b << c.hostname_len;
  b.str(c.hostname);
  b << c.loopback_up << (c.proxy_handoff_fd >= 0) << c.proxy_port;
  b << c.rlimit_count;
  for (std::size_t i = 0; i < c.rlimit_count; ++i) {
    b << c.rlimits[i].resource << c.rlimits[i].value.rlim_cur << c.rlimits[i].value.rlim_max;
  }
  b << c.landlock_abi << c.landlock_handled_fs << c.landlock_handled_net << c.landlock_scoped;
  b << c.landlock_rule_count;
  for (std::size_t i = 0; i < c.landlock_rule_count; ++i) {
    b.str(c.landlock_rules[i].path) << c.landlock_rules[i].access;
    b.id(c.landlock_rules[i].host);
  }
  b << c.cap_last_cap;
  b.id(c.cwd);
  b << looked_up_.size();
  for (const auto& [name, id] : looked_up_) b.str(name.c_str()).id(id);
  b << (c.seccomp != nullptr);
  if (c.seccomp != nullptr) {
    b << c.seccomp->len;
    for (unsigned i = 0; i < c.seccomp->len; ++i) {
      const sock_filter& f = c.seccomp->filter[i];
      b << f.code << f.jt << f.jf << f.k;
    }
  }
  return b.take();
}

void SandboxPlan::plan_limits(const ResourceLimits& limits) {
  auto set = [this](int resource, std::uint64_t value, std::uint64_t hard) {
    // Never above the hard limit we have: an unprivileged child may lower it, not raise it
    // (the policy asks for at most this much, so the host's lower limit also satisfies it).
    struct rlimit now {};
    ::getrlimit(resource, &now);
    RlimitSetting s{};
    s.resource = resource;
    s.value.rlim_max = std::min(static_cast<rlim_t>(hard), now.rlim_max);
    s.value.rlim_cur = std::min(static_cast<rlim_t>(value), s.value.rlim_max);
    rlimits_.push_back(s);
  };
  if (limits.processes > 0) set(RLIMIT_NPROC, limits.processes, limits.processes);
  if (limits.memory_bytes > 0) set(RLIMIT_AS, limits.memory_bytes, limits.memory_bytes);
  if (limits.open_files > 0) set(RLIMIT_NOFILE, limits.open_files, limits.open_files);
  // CPU: SIGXCPU at the limit (catchable, a chance to report), SIGKILL a second later.
  if (limits.cpu_seconds > 0) set(RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1);
  if (limits.file_size_bytes > 0) {
    set(RLIMIT_FSIZE, limits.file_size_bytes, limits.file_size_bytes);
  }
  set(RLIMIT_CORE, 0, 0);  // no core files of sandboxed programs left on the host
}

// Landlock, the second layer: the whole tree readable and executable, writes only where the
// mounts allow them too, TCP per the network mode, abstract unix sockets and signals scoped
// to the sandbox. (Read denials are the mount layer's: Landlock only grants, so hiding a
// subtree of a readable tree would need a rule for every sibling on the way down.)
void SandboxPlan::plan_landlock(const SandboxContext& context) {
  namespace ll = landlock;
  const int abi = context.kernel().landlock_abi;
  child_.landlock_abi = abi;
  if (abi <= 0) return;
  const SandboxPolicy& policy = *policy_;
  const std::uint64_t handled = ll::fs_rights_for_abi(abi);
  const std::uint64_t read = ll::kExecute | ll::kReadFile | ll::kReadDir;
  const std::uint64_t write =
      (ll::kWriteFile | ll::kRemoveDir | ll::kRemoveFile | ll::kMakeDir | ll::kMakeReg |
       ll::kMakeSock | ll::kMakeFifo | ll::kMakeSym | ll::kRefer | ll::kTruncate) &
      handled;
  child_.landlock_handled_fs = handled;
  const RootViews::Active through_roots(roots_.get());
  auto rule = [this](const std::string& path, std::uint64_t access, bool host = false) {
    landlock_rules_.push_back({keep(path), access, host ? identity(path) : PathIdentity{}});
  };
  rule("/", read);
  rule("/dev", read | ((ll::kWriteFile | ll::kIoctlDev | ll::kTruncate) & handled));
  rule("/dev/shm", read | write);
  for (const auto& tmp : private_tmp_) rule(tmp, read | write);
  for (const auto& root : writable_) {
    // A layered root is the overlay by then: nothing of the host's to verify there.
    const bool layered = std::any_of(layered_.begin(), layered_.end(),
                                     [&](const std::string& l) { return paths::within(root, l); });
    rule(root, read | write, !layered);
  }

  if (abi >= 4 && policy.network.mode == NetworkMode::blocked &&
      !policy.network.allow_local_binding) {
    child_.landlock_handled_net = ll::kBindTcp | ll::kConnectTcp;  // no rule grants any port
  }
  if (abi >= 6) child_.landlock_scoped = ll::kScopeAbstractUnixSocket | ll::kScopeSignal;
}

}  // namespace paddock::sandbox
