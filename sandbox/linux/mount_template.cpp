#include "sandbox/linux/mount_template.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>

#include "base/memory_sharing_child.hpp"
#include "sandbox/linux/child_steps.hpp"
#include "sandbox/linux/mount_table.hpp"
#include "sandbox/linux/plan_bytes.hpp"
#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {
namespace {

// A template pins the host's file systems it copied (an unmounted disk stays busy) and does
// not see a host object replaced without a new identity: bounded in time besides the checks.
constexpr auto kMaxTemplateAge = std::chrono::seconds(30);
constexpr std::size_t kMaxTemplates = 8;

bool within_any(const char* path, const std::vector<std::string>& dirs) {
  return std::any_of(dirs.begin(), dirs.end(),
                     [&](const std::string& d) { return paths::within(path, d); });
}
bool below_any(const char* path, const std::vector<std::string>& dirs) {
  return std::any_of(dirs.begin(), dirs.end(),
                     [&](const std::string& d) { return paths::below(path, d); });
}

}  // namespace

TemplateSplit split_for_template(const std::vector<MountOp>& steps,
                                 const std::vector<std::string>& layered,
                                 const std::vector<std::string>& private_tmp) {
  TemplateSplit split;
  // What each sandbox mounts itself: nothing of the template may lie below these.
  std::vector<std::string> own_mounts = private_tmp;
  own_mounts.insert(own_mounts.end(), {"/proc", "/dev/pts", "/dev/shm"});
  std::vector<int> overlay_slots;
  std::vector<std::string> command_tmpfs;
  int layers = 0;
  std::vector<bool> own_step(steps.size(), false);  // run by each sandbox, by index
  auto refuse = [&](std::string why) {
    split.view.clear();
    split.command.clear();
    split.refusal = std::move(why);
    return split;
  };
  for (std::size_t at = 0; at < steps.size(); ++at) {
    const MountOp& op = steps[at];
    const std::string path = op.path != nullptr ? op.path : "";
    const bool in_layer = within_any(op.path, layered);
    const bool in_tmp = below_any(op.path, private_tmp);
    bool per_command = false;
    switch (op.step) {
      case MountStep::overlay_root:
        if (++layers > kMaxTemplateLayers)
          return refuse("more writable roots than a template takes");
        overlay_slots.push_back(op.slot);  // the joiner makes it (in_joiner_make_layers)
        own_step[at] = true;
        continue;
      case MountStep::proc:
      case MountStep::devpts:
      case MountStep::overlay:
      case MountStep::hide:
        per_command = true;
        break;
      case MountStep::write_file:
        if (!paths::within(path, "/proc")) return refuse("a file written outside /proc");
        per_command = true;
        break;
      case MountStep::tmpfs:
        per_command = path == "/dev/shm" || in_layer || in_tmp;
        if (per_command) command_tmpfs.push_back(path);
        break;
      case MountStep::seal_readonly:
        per_command =
            path == "/proc" || in_layer || in_tmp ||
            std::find(command_tmpfs.begin(), command_tmpfs.end(), path) != command_tmpfs.end();
        break;
      case MountStep::attach_clone: {
        const bool from_layer =
            std::find(overlay_slots.begin(), overlay_slots.end(), op.slot) != overlay_slots.end();
        per_command = from_layer || in_layer || in_tmp;
        // A copy the template took of the host cannot be handed to a sandbox.
        if (per_command && !from_layer) return refuse("a host path attached per command");
        // Its mount point in a cover of the template (a workspace in a hidden home) is made
        // there before the cover is sealed; under /tmp the overlay makes it.
        if (per_command && op.create && !in_tmp) {
          MountOp point = op;
          point.step = MountStep::make_mount_point;
          point.slot = -1;
          split.view.push_back(point);
        }
        break;
      }
      case MountStep::pin:
      case MountStep::bind_readonly:
        per_command = in_layer || in_tmp;
        break;
      case MountStep::clone_tree:
      case MountStep::cover_file:
      case MountStep::make_dir:
      case MountStep::make_symlink:
      case MountStep::create_file:
      case MountStep::make_file:
      case MountStep::remove_file:
      case MountStep::make_mount_point:
        if (in_layer || in_tmp) return refuse("a step inside a writable root or /tmp");
        break;
      case MountStep::readonly_root:
        break;
    }
    own_step[at] = per_command;
    if (per_command) {
      split.command.push_back(op);
    } else {
      // The template is made before every sandbox's own mounts: nothing of it below them.
      if (below_any(op.path, own_mounts) || in_layer) {
        return refuse("a step of the view below a sandbox's own mount");
      }
      split.view.push_back(op);
    }
  }
  // The template's steps all come before every sandbox's own. So no mount of the view may be
  // at or below one a sandbox makes (a cover of a denied /tmp would become the lower layer of
  // its private /tmp: writable scratch where the plan has none), and none a sandbox makes may
  // be below a mount the plan makes after it (a cover of a denied /var would hide /var/tmp's
  // mount point). Other steps of the view may make the mount points themselves, not go below.
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const MountOp& later = steps[i];
    if (!puts_a_mount(later.step)) continue;
    const bool later_is_view = !own_step[i];
    for (std::size_t j = 0; j < steps.size(); ++j) {
      const MountOp& other = steps[j];
      if (later_is_view == !own_step[j]) continue;
      const MountOp& own = later_is_view ? other : later;  // the sandbox's
      const MountOp& view = later_is_view ? later : other;
      if (!puts_a_mount(own.step)) continue;
      if (later_is_view && j < i && paths::within(own.path, view.path)) {
        return refuse("a sandbox's own mount below a later mount of the view");
      }
      if (!later_is_view && puts_a_mount(view.step) && paths::within(view.path, own.path)) {
        return refuse("a mount of the view at or below a sandbox's own mount");
      }
    }
  }
  // The private /tmp's overlays use /dev/shm as their scratch (child_mounts.cpp): the
  // command's own /dev/shm is mounted after them.
  auto shm = std::find_if(split.command.begin(), split.command.end(), [](const MountOp& m) {
    return m.step == MountStep::tmpfs && std::strcmp(m.path, "/dev/shm") == 0;
  });
  if (shm != split.command.end()) {
    const MountOp moved = *shm;
    split.command.erase(shm);
    auto last_overlay = std::find_if(split.command.rbegin(), split.command.rend(),
                                     [](const MountOp& m) { return m.step == MountStep::overlay; });
    split.command.insert(last_overlay.base(), moved);
  }
  return split;
}

namespace {

struct Held {
  std::string key;
  std::shared_ptr<const MountTemplate> held;
  std::chrono::steady_clock::time_point made;
};

struct Templates {
  std::mutex mutex;
  std::vector<Held> held;
  UniqueFd mount_table;  // our /proc/self/mountinfo: POLLPRI once our mounts changed
  MountTemplateStats stats;
};

Templates& templates() {
  static Templates* t = new Templates;  // never destroyed: used by threads until exit
  return *t;
}

std::atomic<bool> g_stopped{false};

// Whether we hold CAP_SYS_ADMIN over our own mount namespace's user namespace (root).
bool can_mount_here() {
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  return (data[CAP_SYS_ADMIN / 32].effective & (1U << (CAP_SYS_ADMIN % 32))) != 0;
}

// Linux 6.8's statx mask bit, 6.8's statmount(2) and 6.11's request by namespace ID (newer
// than some build hosts' headers; the numbers are the same on x86_64 and aarch64; the
// layouts are <linux/mount.h>'s, as process/init_mounts.cpp reads them).
constexpr unsigned kStatxMntIdUnique = 0x4000;
constexpr unsigned long long kStatxAttrMountRoot = 0x2000;
constexpr long kNrStatmount = 457;
constexpr unsigned long long kStatmountMntPoint = 0x10;
constexpr unsigned long kNsGetMntnsId = 0x8008b705;  // _IOR(0xb7, 0x5, __u64)
struct MntIdReqV1 {
  std::uint32_t size, spare;
  std::uint64_t mnt_id, param, mnt_ns_id;
};
constexpr std::size_t kStatmountMaskAt = 8, kStatmountMntPointAt = 108, kStatmountStrAt = 512;

// The builder: a child on our memory (base/memory_sharing_child.hpp) that leaves a mount
// namespace holding the view in our descriptor table, and exits.
struct Build {
  const ChildSandbox* view;
  const char* const* points;  // where the view puts a mount
  std::uint64_t* ids;         // out: the mount found at each
  std::size_t point_count;
  int userns;
  int mntns;
  int source;
  int error;
  StepFailure failure;
};

long open_own_mntns() {
  return ::syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC);
}

// The unique ID of the mount whose root `path` is; 0 when it is not one (the host moved or
// dropped it while the template was made); -1 (errno ENOTSUP) when the kernel has no such IDs.
std::int64_t mount_rooted_at(const char* path) {
  struct statx sx {};
  if (::syscall(SYS_statx, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, kStatxMntIdUnique,
                &sx) != 0) {
    return 0;
  }
  if ((sx.stx_mask & kStatxMntIdUnique) == 0 ||
      (sx.stx_attributes_mask & kStatxAttrMountRoot) == 0) {
    errno = ENOTSUP;
    return -1;
  }
  return (sx.stx_attributes & kStatxAttrMountRoot) != 0 ? static_cast<std::int64_t>(sx.stx_mnt_id)
                                                        : 0;
}

int in_builder_main(void* arg) {
  auto* b = static_cast<Build*>(arg);
  const child::Failure f{&b->failure};
  int tmp_uppers[2] = {-1, -1};
  // Unprivileged: the pool's user namespace, where we hold CAP_SYS_ADMIN, and first a plain
  // copy of the host's table it owns, where the joiner makes the overlays (their layers must
  // be mounts of the namespace they are made in).
  if (b->userns >= 0) {
    if (::syscall(SYS_setns, b->userns, CLONE_NEWUSER) != 0) {
      b->error = f.fail("setns (the network pool's user namespace)", nullptr);
      ::syscall(SYS_exit, 0);
    }
    if (::syscall(SYS_unshare, CLONE_NEWNS) != 0 ||
        (b->source = static_cast<int>(open_own_mntns())) < 0) {
      b->error = f.fail("unshare (the template's source)", nullptr);
      ::syscall(SYS_exit, 0);
    }
  }
  if (::syscall(SYS_unshare, CLONE_NEWNS) != 0) {
    b->error = f.fail("unshare (the template)", nullptr);
    ::syscall(SYS_exit, 0);
  }
  if ((b->error = child::run_mounts(*b->view, f, tmp_uppers)) != 0) ::syscall(SYS_exit, 0);
  // Each sandbox writes its id maps through the host's /proc before it mounts its own over
  // it: that one mount stays writable here (the sandbox's /proc covers it).
  struct mount_attr writable = {};
  writable.attr_clr = MOUNT_ATTR_RDONLY;
  if (::syscall(SYS_mount_setattr, AT_FDCWD, "/proc", 0, &writable, sizeof writable) != 0) {
    b->error = f.fail_feature("make /proc writable for the id maps", "/proc");
    ::syscall(SYS_exit, 0);
  }
  for (std::size_t i = 0; i < b->point_count; ++i) {
    const std::int64_t id = mount_rooted_at(b->points[i]);
    if (id < 0) {
      b->error = f.fail_feature("note the mount at a point (statx: Linux 6.8+)", b->points[i]);
      ::syscall(SYS_exit, 0);
    }
    if (id == 0) {
      errno = ESTALE;
      b->error = f.fail("note the mount at a point (not there)", b->points[i]);
      ::syscall(SYS_exit, 0);
    }
    b->ids[i] = static_cast<std::uint64_t>(id);
  }
  if ((b->mntns = static_cast<int>(open_own_mntns())) < 0) {
    b->error = f.fail("open the template", nullptr);
  }
  ::syscall(SYS_exit, 0);
  return 0;
}

// Null with `*refused_by` the step when the host refuses templates (a kernel feature, a
// filter); null with it empty when only this view failed (a path renamed while it was made).
std::shared_ptr<const MountTemplate> build(const std::vector<MountOp>& view, int slot_count,
                                           int userns, std::string* refused_by) {
  ChildSandbox steps{};
  steps.mounts = view.data();
  steps.mount_count = view.size();
  steps.slot_count = slot_count;
  const std::vector<std::string> points = planned_mount_points(steps);
  std::vector<const char*> point_names;
  for (const std::string& p : points) point_names.push_back(p.c_str());
  std::vector<std::uint64_t> ids(points.size(), 0);
  Build b{&steps, point_names.data(), ids.data(), points.size(), userns, -1, -1, 0, {}};
  // Its stack: run_mounts keeps its clone slots and path buffers there.
  constexpr std::size_t kStack = 256 * 1024;
  auto stack = std::make_unique<unsigned char[]>(kStack);
  unsigned char* top = stack.get() + kStack - 64;
  // No handler of ours may run on the child (memory_sharing_child.hpp).
  unsigned long all = ~0UL, old = 0;
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(all));
  const int clone_error = base::run_in_memory_sharing_child(in_builder_main, &b, top);
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, nullptr, sizeof(old));
  UniqueFd mntns(b.mntns), source(b.source);
  std::uint64_t ns_id = 0;
  if (clone_error != 0) {
    *refused_by = "clone";
    return nullptr;
  }
  if (b.error != 0) {
    // A view step on a path of the policy that failed for this moment only (a rename while
    // it was made) says nothing about the host: this plan runs its own steps.
    const bool this_view_only = !b.failure.needs_feature && b.failure.path != nullptr;
    if (std::getenv("PADDOCK_DEBUG_TEMPLATES") != nullptr) {
      std::fprintf(stderr, "template: %s %s: %s\n", b.failure.step, b.failure.path,
                   std::strerror(b.error));
    }
    if (!this_view_only) *refused_by = b.failure.step != nullptr ? b.failure.step : "build";
    return nullptr;
  }
  if (mntns.get() < 0 || ::ioctl(mntns.get(), kNsGetMntnsId, &ns_id) != 0) {
    *refused_by = "the template's namespace ID (NS_GET_MNTNS_ID: Linux 6.11+)";
    return nullptr;
  }
  std::vector<std::pair<std::string, std::uint64_t>> noted;
  for (std::size_t i = 0; i < points.size(); ++i) noted.emplace_back(points[i], ids[i]);
  auto made = std::make_shared<const MountTemplate>(std::move(mntns), std::move(source), ns_id,
                                                    std::move(noted));
  bool missing = false;
  if (!made->intact(&missing)) {  // moved while it was made: this view only
    if (missing) *refused_by = "statmount in the template (Linux 6.11+)";
    return nullptr;
  }
  return made;
}

// Drops every template when our mount table changed since the last look (Templates locked).
void drop_if_host_mounts_changed(Templates& t) {
  if (t.mount_table.get() < 0) {
    t.mount_table.reset(static_cast<int>(
        ::syscall(SYS_openat, AT_FDCWD, "/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)));
    t.stats.retired += t.held.size();
    t.held.clear();  // none can be trusted from before the watch
    return;
  }
  struct pollfd pfd = {t.mount_table.get(), POLLPRI, 0};
  // The poll itself takes the change as seen (fs/proc_namespace.c, mounts_poll).
  if (::poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLPRI | POLLERR)) != 0) {
    t.stats.retired += t.held.size();
    t.held.clear();
  }
}

}  // namespace

bool in_joiner_template_intact(const MountTemplateUse& from) {
  // Raw syscalls and the joiner's own stack only (it shares our memory).
  alignas(8) char buf[kStatmountStrAt + 4096 + 64];
  for (std::size_t i = 0; i < from.point_count; ++i) {
    MntIdReqV1 req{24, 0, from.point_ids[i], kStatmountMntPoint, 0};  // in our namespace
    if (::syscall(kNrStatmount, &req, buf, sizeof buf, 0) != 0) return false;
    std::uint64_t mask = 0;
    std::uint32_t offset = 0;
    __builtin_memcpy(&mask, buf + kStatmountMaskAt, sizeof mask);
    __builtin_memcpy(&offset, buf + kStatmountMntPointAt, sizeof offset);
    if ((mask & kStatmountMntPoint) == 0 || offset > 4096) return false;
    const char* at = buf + kStatmountStrAt + offset;
    const char* want = from.points[i];
    std::size_t k = 0;
    for (; want[k] != '\0'; ++k) {
      if (at[k] != want[k]) return false;
    }
    if (at[k] != '\0') return false;
  }
  return true;
}

bool MountTemplate::intact(bool* missing) const {
  alignas(8) static thread_local char buf[kStatmountStrAt + 4096 + 64];
  for (const auto& [point, id] : points_) {
    MntIdReqV1 req{sizeof(MntIdReqV1), 0, id, kStatmountMntPoint, ns_id_};
    if (::syscall(kNrStatmount, &req, buf, sizeof buf, 0) != 0) {
      // ENOENT: that mount is gone. Anything else: no statmount, or none by namespace.
      if (missing != nullptr && errno != ENOENT) *missing = true;
      return false;
    }
    std::uint64_t mask = 0;
    std::uint32_t offset = 0;
    std::memcpy(&mask, buf + kStatmountMaskAt, sizeof mask);
    std::memcpy(&offset, buf + kStatmountMntPointAt, sizeof offset);
    if ((mask & kStatmountMntPoint) == 0 || offset > 4096) return false;
    if (point != std::string_view(buf + kStatmountStrAt + offset)) return false;
  }
  return true;
}

std::shared_ptr<const MountTemplate> mount_template_for(const std::vector<MountOp>& view,
                                                        int slot_count, int userns) {
  if (g_stopped.load(std::memory_order_relaxed)) return nullptr;
  if (userns < 0 && !can_mount_here()) return nullptr;
  Bytes key;
  struct stat owner {};
  if (userns >= 0 && ::fstat(userns, &owner) != 0) return nullptr;
  key << owner.st_dev << owner.st_ino << slot_count << view.size();
  for (const MountOp& m : view) {
    key << m.step << m.writable << m.create << m.is_dir << m.device << m.passable << m.slot;
    key.str(m.path).str(m.data).str(m.work).id(m.host);
  }
  const std::string k = key.take();

  Templates& t = templates();
  std::lock_guard lock(t.mutex);
  drop_if_host_mounts_changed(t);
  const auto now = std::chrono::steady_clock::now();
  const auto before = t.held.size();
  std::erase_if(t.held, [&](const Held& h) { return now - h.made > kMaxTemplateAge; });
  t.stats.retired += before - t.held.size();
  for (auto it = t.held.begin(); it != t.held.end(); ++it) {
    if (it->key != k) continue;
    if (!it->held->intact()) {  // a mount of it dropped or moved by the host: made again
      t.held.erase(it);
      ++t.stats.retired;
      break;
    }
    ++t.stats.served;
    return it->held;
  }
  // Made under the lock: two threads asking for one view make it once.
  std::string refused_by;
  auto made = build(view, slot_count, userns, &refused_by);
  if (!made) {
    // Not on this host (a kernel or a filter that refuses a step): every plan runs its own.
    if (!refused_by.empty()) {
      g_stopped.store(true, std::memory_order_relaxed);
      t.stats.stopped = true;
      t.stats.stopped_by = refused_by;
    }
    return nullptr;
  }
  ++t.stats.made;
  ++t.stats.served;
  if (t.held.size() >= kMaxTemplates) {
    t.held.erase(t.held.begin());
    ++t.stats.retired;
  }
  t.held.push_back(Held{k, made, now});
  return made;
}

void stop_mount_templates(const char* by) noexcept {
  g_stopped.store(true, std::memory_order_relaxed);
  retire_mount_templates();
  Templates& t = templates();
  std::lock_guard lock(t.mutex);
  t.stats.stopped = true;
  t.stats.stopped_by = by;
}

void retire_mount_templates() noexcept {
  Templates& t = templates();
  std::lock_guard lock(t.mutex);
  t.stats.retired += t.held.size();
  t.held.clear();
}

MountTemplateStats mount_template_stats() noexcept {
  Templates& t = templates();
  std::lock_guard lock(t.mutex);
  return t.stats;
}

}  // namespace paddock::sandbox
