// The trees the sandbox mounts itself in place of the host's, and what that means for a path
// of the plan: one home for "is this the host's object or ours?".
//   /dev, /sys, the private /tmp and /var/tmp, a denied directory: a tmpfs of ours ("cover").
//     The host's objects below it are not there; a mount point below it is created in it.
//     /tmp and /var/tmp are mostly overlays with the host's directory below (mount_plan.cpp):
//     its objects are seen there but never verified, protected or hidden (a write is private;
//     a denyRead inside makes the plan mount the plain tmpfs instead), so they count as ours.
//   /proc: a fresh procfs. Host paths in it are still there to hide, but they are the new
//     instance's, not the objects the parent saw.
// A writable or readable rule attaches a host tree back into a cover (a workspace under /tmp):
// at and below it the host's objects are visible again.
#pragma once

#include <string>
#include <vector>

#include "sandbox/path_policy.hpp"

namespace paddock::sandbox {

class OwnMounts {
 public:
  // `rules` is kept by reference: rules added to it later (a working directory or program
  // shown again) count as attachments from then on.
  // `private_tmp`: decided by the policy (ResolvedFilesystem::private_tmp).
  OwnMounts(std::vector<std::string> private_tmp, const std::vector<PathRule>& rules);

  // The private /tmp and /var/tmp we mount.
  const std::vector<std::string>& private_tmp() const noexcept { return private_tmp_; }

  // We mount a /sys of our own (the host has that directory).
  bool sys() const noexcept { return sys_; }

  // Exactly a cover of ours (`allowWrite: /tmp` attaches onto our tmpfs, not a host object).
  bool is_cover(const std::string& path) const;
  // Strictly below a cover: the host's object is not there to hide or protect.
  bool under_cover(const std::string& path) const;
  // Strictly below a host tree attached back into a cover: rules there apply again.
  bool under_exposure(const std::string& path) const;
  // A host tree is attached exactly at `path`.
  bool attached_at(const std::string& path) const;
  // The object at `path` in the sandbox is ours (at or below /dev, /proc, /sys or the private
  // /tmp, with no host tree attached there): the parent has nothing to verify it against.
  bool ours(const std::string& path) const;

 private:
  bool sys_ = false;
  std::vector<std::string> private_tmp_;
  std::vector<std::string> covers_;
  std::vector<std::string> fresh_;  // /dev, /proc, /sys and the private /tmp
  const std::vector<PathRule>& rules_;
};

}  // namespace paddock::sandbox
