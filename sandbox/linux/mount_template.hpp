// The sandbox's view of the host made once and copied by the kernel (docs/build-once.md §1,
// "A holder without a process"). Most of a plan's ~60 mount steps do not depend on the
// command: the host read-only, the covers of denied paths, the hidden homes, /dev and /sys.
// They are run once in a mount namespace of their own, the *template*, held by a descriptor
// with no process inside. A sandbox cloned (CLONE_NEWUSER | CLONE_NEWNS) by a joiner that
// entered it starts with a copy, every mount of which is locked (copied into a less
// privileged user namespace: the command cannot take a cover off or make a read-only mount
// writable), and runs only the steps that differ per command: its writable roots' overlays
// (made by the joiner where the change store is reachable), what lies inside them, /proc,
// /dev/pts, /dev/shm, /tmp and /var/tmp.
//
// Never an older view than a fresh build: a template serves only plans whose view steps, with
// the identity (st_dev, st_ino) of every host object in them, are byte for byte its own, and
// every template is dropped when the supervisor's own mount table changes (/proc/self/mountinfo
// polled for POLLPRI before each use) and after kMaxTemplateAge. A mount of the template that
// the host drops (a mount point unlinked, the same inode linked back) is caught by a
// check before each use (MountTemplate::intact): the template is retired and made again.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/unique_fd.hpp"
#include "sandbox/linux/child_plan.hpp"

namespace paddock::sandbox {

// A plan's mount steps in two parts, or why it has none.
struct TemplateSplit {
  std::vector<MountOp> view;     // run once, in the template, in this order
  std::vector<MountOp> command;  // run by each sandbox made from it, in this order
  std::string refusal;           // non-empty: run the plan's steps as they are (why not)
};

// `layered`: the writable roots behind overlays; `private_tmp`: the /tmp and /var/tmp overlays.
TemplateSplit split_for_template(const std::vector<MountOp>& steps,
                                 const std::vector<std::string>& layered,
                                 const std::vector<std::string>& private_tmp);

class MountTemplate {
 public:
  // `points`: where the view put a mount, with the unique ID of the mount found there when
  // the template was made (Linux 6.8+).
  MountTemplate(UniqueFd mntns, UniqueFd source, std::uint64_t ns_id,
                std::vector<std::pair<std::string, std::uint64_t>> points) noexcept
      : mntns_(std::move(mntns)),
        source_(std::move(source)),
        ns_id_(ns_id),
        points_(std::move(points)) {
    for (const auto& [name, id] : points_) {
      names_.push_back(name.c_str());
      ids_.push_back(id);
    }
  }
  int mntns() const noexcept { return mntns_.get(); }
  int source() const noexcept { return source_.get(); }
  // Whether every mount of the view is still where it was put. The host that unlinks a name
  // which is a mount point here (or renames another over it) makes the kernel drop that mount,
  // and the same inode linked back passes every identity check; a directory above it renamed
  // moves it. Asked of the kernel per mount (statmount by ID in the template's namespace,
  // Linux 6.11+), no path walked: ~1.5 µs a mount.
  // `*missing`, when given: set when the kernel cannot answer at all (no statmount by
  // namespace), not merely "moved".
  bool intact(bool* missing = nullptr) const;
  // The same points for the joiner's check (MountTemplateUse).
  const char* const* point_names() const noexcept { return names_.data(); }
  const std::uint64_t* point_ids() const noexcept { return ids_.data(); }
  std::size_t point_count() const noexcept { return ids_.size(); }

 private:
  UniqueFd mntns_;   // the template (nsfs)
  UniqueFd source_;  // unprivileged: a copy of the host's table owned by `userns` (-1: root)
  std::uint64_t ns_id_;
  std::vector<std::pair<std::string, std::uint64_t>> points_;
  std::vector<const char*> names_;
  std::vector<std::uint64_t> ids_;
};

// The template of these view steps: the one held, else one made now. `slot_count`: the clone
// slots the steps use. `userns`: the pool's user namespace that owns it (-1: ours; then we must
// hold CAP_SYS_ADMIN). Null when templates are stopped or this one cannot be made: the caller
// runs every step itself, as secure and slower.
std::shared_ptr<const MountTemplate> mount_template_for(const std::vector<MountOp>& view,
                                                        int slot_count, int userns);

// For the life of the process (a joiner could not use one): every plan runs its own steps.
void stop_mount_templates(const char* by) noexcept;
// Drops the templates held (a sandbox made from one failed its set-up): made again on use.
void retire_mount_templates() noexcept;

struct MountTemplateStats {
  std::uint64_t made = 0;     // templates built
  std::uint64_t served = 0;   // plans given one
  std::uint64_t retired = 0;  // dropped: the host's mounts changed, too old, or retired
  bool stopped = false;
  std::string stopped_by;  // the step that stopped them
};
MountTemplateStats mount_template_stats() noexcept;

}  // namespace paddock::sandbox
