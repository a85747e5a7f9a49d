#include "sandbox/linux/own_mounts.hpp"

#include <algorithm>

#include "sandbox/path_resolution.hpp"

namespace paddock::sandbox {
namespace {

bool attaches(const PathRule& r) {
  return r.exists && (r.access == PathAccess::writable || r.access == PathAccess::allow_read);
}

}  // namespace

OwnMounts::OwnMounts(std::vector<std::string> private_tmp, const std::vector<PathRule>& rules)
    : private_tmp_(std::move(private_tmp)), rules_(rules) {
  // A host without a /sys directory (a bare container) keeps none: there is nothing to cover
  // and no mount point for ours.
  sys_ = paths::is_real_directory("/sys");
  covers_ = {"/dev"};
  if (sys_) covers_.push_back("/sys");
  covers_.insert(covers_.end(), private_tmp_.begin(), private_tmp_.end());
  for (const auto& r : rules) {
    if (r.exists && r.is_dir && r.access == PathAccess::deny_read) covers_.push_back(r.path);
  }
  fresh_ = {"/dev", "/proc"};
  if (sys_) fresh_.push_back("/sys");
  fresh_.insert(fresh_.end(), private_tmp_.begin(), private_tmp_.end());
}

bool OwnMounts::is_cover(const std::string& path) const {
  return std::find(covers_.begin(), covers_.end(), path) != covers_.end();
}

bool OwnMounts::under_cover(const std::string& path) const {
  return std::any_of(covers_.begin(), covers_.end(),
                     [&](const std::string& c) { return paths::below(path, c); });
}

bool OwnMounts::under_exposure(const std::string& path) const {
  return std::any_of(rules_.begin(), rules_.end(), [&](const PathRule& r) {
    return attaches(r) && under_cover(r.path) && paths::below(path, r.path);
  });
}

bool OwnMounts::attached_at(const std::string& path) const {
  return std::any_of(rules_.begin(), rules_.end(),
                     [&](const PathRule& r) { return attaches(r) && r.path == path; });
}

bool OwnMounts::ours(const std::string& path) const {
  return std::any_of(fresh_.begin(), fresh_.end(),
                     [&](const std::string& o) { return paths::within(path, o); }) &&
         !under_exposure(path) && !attached_at(path);
}

}  // namespace paddock::sandbox
