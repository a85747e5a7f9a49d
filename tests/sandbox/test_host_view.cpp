// The sandbox's /sys: in every network mode (pooled namespace, own namespace, host network) a
// read-only tmpfs of ours with only the host's CPU, NUMA and transparent-hugepage directories.
// The host's NICs, firmware (ACPI tables), cgroup tree and kernel internals are not there by
// any spelling, nothing in it can be written, and CPU counts still match the host's.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "support/attack_fixture.hpp"
#include "support/git_scratch.hpp"

namespace fs = std::filesystem;
using test::in;
using test::sandbox_config;
using test::Tree;

namespace {

// What the sandbox's /sys may hold: the host directories it shows and the tmpfs directories
// above them.
const char* const kShown[] = {"/sys/devices/system/cpu", "/sys/devices/system/node",
                              "/sys/kernel/mm/transparent_hugepage"};
const char* const kAbove[] = {"/sys", "/sys/devices", "/sys/devices/system", "/sys/kernel",
                              "/sys/kernel/mm"};

bool allowed_entry(const std::string& path) {
  for (const char* a : kAbove) {
    if (path == a) return true;
  }
  for (const char* s : kShown) {
    const std::string dir = s;
    if (path == dir || path.rfind(dir + "/", 0) == 0) return true;
  }
  return false;
}

std::vector<std::string> host_nics() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator("/sys/class/net")) {
    names.push_back(e.path().filename());
  }
  return names;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The value of `key` in "key value" lines ("" if absent).
std::string value_of(const std::string& text, const std::string& key) {
  for (const auto& line : lines(text)) {
    if (line.rfind(key + " ", 0) == 0) return line.substr(key.size() + 1);
  }
  return "";
}

std::string first_line(const std::string& path) {
  std::string text = Tree::read(path);
  return text.substr(0, text.find('\n'));
}

// The selected value of a "[a] b c" sysfs choice file ("" if none).
std::string selected(const std::string& path) {
  std::string text = first_line(path);
  auto open = text.find('['), close = text.find(']');
  return open == std::string::npos || close == std::string::npos
             ? ""
             : text.substr(open + 1, close - open - 1);
}

std::string probe_script(const std::vector<std::string>& nics, const std::string& thp) {
  std::string s = "echo '== find'; find /sys 2>&1; echo '== probes'\n";
  // The host's NIC list and the firmware, cgroup and kernel trees, by several spellings: the
  // path itself, through /proc/self/root, and `..` out of a shown directory and out of a
  // symlink inside one (node0/cpu0 -> ../../cpu/cpu0).
  s += "for p in /sys/class/net /proc/self/root/sys/class/net /proc/1/root/sys/class/net "
       "/sys/devices/system/cpu/../../virtual/net "
       "/sys/devices/system/node/node0/cpu0/../../../virtual/net "
       "/sys/devices/system/cpu/../../../class/net "
       "/sys/kernel/mm/transparent_hugepage/../../../class "
       "/sys/firmware /sys/firmware/acpi /sys/firmware/acpi/tables /sys/firmware/dmi /sys/fs "
       "/sys/fs/cgroup /sys/kernel/security /sys/kernel/debug /sys/devices/virtual/dmi/id "
       "/sys/class/dmi/id /sys/block /sys/bus /sys/module /sys/power; do "
       "ls \"$p\" >/dev/null 2>&1 && echo \"LISTED $p\"; done\n";
  s += "for f in /sys/firmware/acpi/tables/DSDT /sys/firmware/acpi/pm_profile "
       "/sys/firmware/dmi/tables/DMI /sys/class/dmi/id/product_uuid /sys/kernel/notes "
       "/sys/kernel/uevent_seqnum /sys/fs/cgroup/cgroup.controllers /sys/fs/cgroup/cpu/cpu.shares "
       "/sys/class/net/lo/address; do cat \"$f\" >/dev/null 2>&1 && echo \"READ $f\"; done\n";
  for (const auto& n : nics) {
    for (const std::string dir : {"/sys/class/net/", "/sys/devices/virtual/net/"}) {
      s += "test -e '" + dir + n + "' && echo 'SEEN " + dir + n + "'\n";
    }
  }
  // Writes, as root-in-namespace too (a root supervisor maps uid 0, the owner of these
  // files): each writes the value the host has, so nothing changes even where it succeeded.
  s += "echo '== writes'\n"
       "mkdir /sys/paddock-x 2>/dev/null && echo 'WROTE mkdir'\n"
       "touch /sys/devices/system/cpu/paddock-x 2>/dev/null && echo 'WROTE touch'\n";
  if (!thp.empty()) {
    s += "(echo " + thp +
         " > /sys/kernel/mm/transparent_hugepage/enabled) 2>/dev/null && echo 'WROTE thp'\n";
  }
  s += "(echo 1 > /sys/devices/system/cpu/cpu0/online) 2>/dev/null && echo 'WROTE online'\n";
  s += "echo '== counts'\n"
       "echo \"nproc $(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)\"\n"
       "echo \"onln $(getconf _NPROCESSORS_ONLN)\"\n"
       "echo \"online $(cat /sys/devices/system/cpu/online)\"\n"
       "echo \"thp $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>&1)\"\n";
  if (fs::exists("/usr/bin/python3")) {
    s += "echo \"python $(/usr/bin/python3 -c 'import os; print(os.cpu_count())')\"\n";
  }
  return s;
}

}  // namespace

TEST_CASE("attack: the sandbox's /sys shows no host NICs, firmware or cgroups in any network mode",
          "[attack][sysfs]") {
  REQUIRE(fs::is_directory("/sys/devices/system/cpu"));
  const std::vector<std::string> nics = host_nics();
  REQUIRE_FALSE(nics.empty());
  const std::string thp_file = "/sys/kernel/mm/transparent_hugepage/enabled";
  const bool has_thp = fs::exists(thp_file);
  const std::string thp_before = has_thp ? first_line(thp_file) : "";
  const std::string online_before = first_line("/sys/devices/system/cpu/online");

  cpu_set_t affinity;
  REQUIRE(::sched_getaffinity(0, sizeof(affinity), &affinity) == 0);
  const std::string host_nproc = std::to_string(CPU_COUNT(&affinity));
  const std::string host_onln = std::to_string(::sysconf(_SC_NPROCESSORS_ONLN));

  Tree t;
  const std::string script = probe_script(nics, has_thp ? selected(thp_file) : "");
  for (auto mode : {paddock::NetworkMode::filtered, paddock::NetworkMode::blocked,
                    paddock::NetworkMode::allowed}) {
    auto cfg = sandbox_config();
    cfg.sandbox.network.mode = mode;
    cfg.sandbox.network.allowed_domains = {"example.com"};
    test::Harness h(cfg);
    auto r = h.exec(test::sh(script), in(t.ws));
    INFO(
        "network mode " << static_cast<int>(mode) << "\n"
                        << r.result.stdout_data.substr(std::min(
                               r.result.stdout_data.find("== probes"), r.result.stdout_data.size()))
                        << r.result.stderr_data << r.result.error);
    REQUIRE_FALSE(r.ec);
    REQUIRE(r.result.sandboxed);
    REQUIRE(r.result.exit_code == 0);
    const std::string& out = r.result.stdout_data;

    // Everything under /sys is one of the shown trees or a directory above them; no probe
    // (LISTED, READ, SEEN, WROTE) printed anything; the host's NIC names appear nowhere.
    std::string section, leaks;
    std::size_t found = 0;
    for (const auto& line : lines(out)) {
      if (line.rfind("== ", 0) == 0) {
        section = line;
        continue;
      }
      bool leak = (section == "== find" && !allowed_entry(line)) ||
                  ((section == "== probes" || section == "== writes") && !line.empty());
      for (const auto& nic : nics) leak = leak || line.find("/net/" + nic) != std::string::npos;
      if (section == "== find") ++found;
      if (leak && leaks.size() < 4000) leaks += line + "\n";
    }
    CHECK(leaks.empty());
    CHECK(found > 5);  // the cpu tree is there (the find ran)

    // What programs size themselves by is the host's.
    CHECK(value_of(out, "nproc") == host_nproc);
    CHECK(value_of(out, "onln") == host_onln);
    CHECK(value_of(out, "online") == online_before);
    if (has_thp) CHECK(value_of(out, "thp") == thp_before);
    if (fs::exists("/usr/bin/python3")) CHECK(value_of(out, "python") == host_onln);
  }
  // The host's /sys is as it was.
  if (has_thp) CHECK(first_line(thp_file) == thp_before);
  CHECK(first_line("/sys/devices/system/cpu/online") == online_before);
}

// mountinfo (and statmount) list every mount with its source's path inside its filesystem.
// The mount points are the policy (a stat shows them too); the source of a denied file's
// cover must name no host path: it is a file of ours on the sandbox's own /dev tmpfs.
TEST_CASE("attack: mountinfo shows a denied file's cover with no host source path",
          "[attack][sysfs]") {
  Tree t;
  const std::string denied = t.outside + "/file";
  const std::string denied_too = t.ws + "/secret.env";
  Tree::write(denied_too, "TOKEN=1\n");
  auto cfg = sandbox_config();
  cfg.sandbox.filesystem.deny_read = {denied, denied_too};
  test::Harness h(cfg);
  auto before = Tree::snapshot(t.root);
  auto r = h.exec(test::sh("cat /proc/self/mountinfo; cat '" + denied + "' '" + denied_too +
                           "' 2>/dev/null && echo READ; true"),
                  in(t.ws));
  INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
  REQUIRE_FALSE(r.ec);
  REQUIRE(r.result.sandboxed);
  REQUIRE(r.result.exit_code == 0);
  // "id parent major:minor root mountpoint ...": the device of the last mount on /dev (ours).
  std::string dev_device;
  std::vector<std::pair<std::string, std::string>> covers;  // (device, root)
  for (const auto& line : lines(r.result.stdout_data)) {
    CHECK(line.find("READ") == std::string::npos);
    std::istringstream fields(line);
    std::string id, parent, device, root, point;
    fields >> id >> parent >> device >> root >> point;
    if (point == "/dev") dev_device = device;
    if (point == denied || point == denied_too) covers.emplace_back(device, root);
  }
  REQUIRE(covers.size() == 2);
  for (const auto& [device, root] : covers) {
    INFO(root);
    CHECK(device == dev_device);
    CHECK(root.find(t.root) == std::string::npos);
    CHECK(root.rfind("/dev/", 0) != 0);
  }
  CHECK(Tree::snapshot(t.root) == before);
}

TEST_CASE("allowRead inside denyRead: srt's recipe hides the home and git still works",
          "[attack][fs]") {
  // {"filesystem": {"denyRead": ["~"], "allowRead": ["."]}} run from ~/proj: the way down to
  // the project passes the denied home (search only), nothing else of the home is there.
  test::Scratch s;
  const std::string home = s.root + "/home", proj = home + "/proj";
  s.repo(proj);
  Tree::write(home + "/secret", "TOKEN\n");
  paddock::Config c = sandbox_config();
  c.sandbox.filesystem.home = home;
  c.sandbox.filesystem.deny_read = {"~"};
  c.sandbox.filesystem.allow_read = {"."};
  test::Harness h(c);
  auto r = h.exec(test::sh(s.env() +
                           "git status --porcelain && git log --format=%s && "
                           "echo edit >> base.txt && echo ok; cat " +
                           home + "/secret || echo denied; ls " + home +
                           " || echo unlisted; "
                           "ls -d " +
                           home + "/.gitconfig 2>/dev/null || echo absent"),
                  in(proj));
  INFO(r.result.stdout_data << r.result.stderr_data << r.result.error);
  REQUIRE(r.result.sandboxed);
  CHECK(r.result.stdout_data == "base\nok\ndenied\nunlisted\nabsent\n");
  CHECK(Tree::read(proj + "/base.txt") == "base\nedit\n");
}
