// A sandbox's mount table against its plan: another mount namespace (the host, another
// sandbox) that unlinks a name which is a mount point in a sandbox (or renames another name
// over it) makes the kernel drop that mount there (Linux 3.18+), and linking the same inode
// back would pass every identity check. So every mount point the plan created must still be
// in the table: the supervisor checks a sandbox made ahead when it is made and when it is
// taken, and paddock-init checks the run (process/init_main.cpp; this file makes the list it
// gets).
#pragma once

#include <string>
#include <vector>

#include "base/unique_fd.hpp"
#include "sandbox/linux/child_plan.hpp"

namespace paddock::sandbox {

// Whether a step puts a new mount at its path (a detached copy is mounted by its attach_clone;
// the host made read-only is the mounts that were there).
bool puts_a_mount(MountStep step);

// Where a plan's steps put a mount, one entry per mount, sorted.
std::vector<std::string> planned_mount_points(const ChildSandbox& child);

// `points` (planned_mount_points) in a sealed memfd, each path ended by a NUL, for
// paddock-init (process/init_report.hpp, kInitMountPointsFd); -1 (errno set) on failure.
UniqueFd mount_points_memfd(const std::vector<std::string>& points);

// Whether every mount point in `expected` (sorted) is in the mount table `fd` (an open
// /proc/PID/mountinfo, read from its start), as often as expected. False also when the
// table cannot be read.
bool mounts_intact(int fd, const std::vector<std::string>& expected);

}  // namespace paddock::sandbox
