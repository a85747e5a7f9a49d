// The argument tests of the rule table (rules.cpp) and the path helpers they share: each
// answers one question about a command's arguments (`is this a recursive delete of /?`).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "classifier/rules.hpp"

namespace paddock::classifier::matchers {

bool starts_with(std::string_view s, std::string_view p);
bool perl_in_place(const Args& a);
bool signals_processes(const Args& a);
bool crontab_change(const Args& a);
bool long_option(const Args& a, std::string_view full, std::size_t shortest);
bool recursive(const Args& a);
std::vector<std::string> brace_alternatives(const std::string& w);
bool rm_catastrophic(const Args& a);
bool mv_catastrophic(const Args& a);
bool disk_change(const Args& a);
bool power_action(const Args& a);
bool writes_system_path(const Args& a);
// The same writes into installed software (/usr/local, site-packages, dist-packages).
bool writes_installed_path(const Args& a);
bool installed_software(std::string_view normalised_path);
bool permissions_catastrophic(const Args& a);
bool rm_workdir(const Args& a);
bool find_delete_catastrophic(const Args& a);
bool rm_git_dir(const Args& a);
bool rm_dynamic_recursive(const Args& a);
bool dd_to_device(const Args& a);
bool chmod_world_writable(const Args& a);
bool chmod_setuid(const Args& a);
bool network_shell(const Args& a);
std::string git_sub(const Args& a);
bool runs_given_command(const Args& a);
bool git_config_override(const Args& a);
std::string git_action(const Args& a);
bool git_reading_action(const Args& a);
bool git_topology(const Args& a);
bool git_read(const Args& a);
bool git_local_write(const Args& a);
bool download_to_file(const Args& a);
bool sed_in_place(const Args& a);
bool system_tuning(const Args& a);
bool package_install(const Args& a);
bool rsync_remote(const Args& a);
bool login_action(const Args& a);
bool publish_action(const Args& a);
bool infrastructure_change(const Args& a);
bool global_install(const Args& a);
bool container_write(const Args& a);
bool destructive_sql(const Args& a);
bool version_query(const Args& a);
bool find_read_only(const Args& a);
bool build_or_test(const Args& a);
bool service_change(const Args& a);
bool database_drop(const Args& a);
bool archive_or_sync_delete_catastrophic(const Args& a);
bool git_remote_write(const Args& a);
bool database_remote_host(const Args& a);
bool system_package_change(const Args& a);
bool http_upload_remote(const Args& a);
bool git_worktree_catastrophic(const Args& a);
bool git_credentials(const Args& a);
bool kube_credentials(const Args& a);
bool build_publish(const Args& a);
bool deploy_action(const Args& a);
// The hosts an HTTP client (curl, wget, httpie) is told to reach, when every one is named
// plainly on its command line; nullopt when one is not, or when an option takes the
// connection elsewhere (-x, --resolve, --unix-socket, -K ...).
struct Endpoint {
  std::string host;
  std::uint16_t port = 0;
  bool url = false;  // spelled as a URL (not only a word that may be a host)
};
std::optional<std::vector<Endpoint>> remote_endpoints(const Args& a);
std::optional<std::string> output_value(const Args& a, std::size_t i);
// A "read-only" tool told to write: sort -o, uniq IN OUT, tree -o, xxd IN OUT, git --output,
// date -s, hostname NAME, git log --ext-diff (runs diff.external).
bool read_only_tool_writes(const Args& a);
bool kernel_module_change(const Args& a);
bool forge_write(const Args& a);
bool remote_tool_write(const Args& a);

}  // namespace paddock::classifier::matchers
