// The seccomp rules that look at arguments, tried with every spelling an attacker has: each
// socketpair type with and without its flags and with garbage in the register, every call that
// can give a file the setuid or setgid bit, and the calls Docker's profile also refuses. Each
// denial is checked against an unfiltered control run, so an EPERM cannot come from missing
// privileges.
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/timex.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "sandbox/linux/seccomp_filter.hpp"
#include "support/seccomp_child.hpp"

using paddock::sandbox::build_seccomp_program;
using paddock::sandbox::SeccompProgram;
using test::ChildRun;
using test::describe;
using test::Reporter;
using test::run_child;

namespace {

#if defined(__x86_64__) || defined(__aarch64__)
constexpr long kSysFchmodat2 = 452;  // Linux 6.6; glibc 2.36's headers do not name it
#endif

// socketpair with raw 64-bit registers, so garbage can be put where the kernel reads an int.
long raw_socketpair(unsigned long domain, unsigned long type) {
  int pair[2];
  long rc = ::syscall(SYS_socketpair, domain, type, 0UL, pair);
  if (rc == 0) {
    ::close(pair[0]);
    ::close(pair[1]);
  }
  return rc;
}

struct PairCase {
  std::string name;
  unsigned long domain, type;
  bool allowed;
};

// Every type 0..15 with each combination of SOCK_NONBLOCK and SOCK_CLOEXEC, then garbage.
std::vector<PairCase> pair_cases() {
  std::vector<PairCase> cases;
  const unsigned long flags[] = {0, SOCK_NONBLOCK, SOCK_CLOEXEC, SOCK_NONBLOCK | SOCK_CLOEXEC};
  for (unsigned long type = 0; type < 16; ++type) {
    for (unsigned long flag : flags) {
      const bool allowed = type == SOCK_STREAM || type == SOCK_SEQPACKET;
      cases.push_back({"pair_t" + std::to_string(type) + "_f" + std::to_string(flag), AF_UNIX,
                       type | flag, allowed});
    }
  }
  const unsigned long high = 0xffffffff00000000UL;
  cases.push_back({"pair_high_stream", AF_UNIX, high | SOCK_STREAM, false});
  cases.push_back({"pair_bit32_raw", AF_UNIX, (1UL << 32) | SOCK_RAW, false});
  cases.push_back({"pair_bit4_stream", AF_UNIX, 0x10 | SOCK_STREAM, false});
  cases.push_back({"pair_bit12_stream", AF_UNIX, 0x1000 | SOCK_STREAM, false});
  cases.push_back({"pair_bit30_stream", AF_UNIX, 0x40000000UL | SOCK_STREAM, false});
  cases.push_back({"pair_negative_stream", AF_UNIX, 0x80000000UL | SOCK_STREAM, false});
  cases.push_back({"pair_domain_high", high | AF_UNIX, SOCK_STREAM, false});
  cases.push_back({"pair_inet", AF_INET, SOCK_STREAM, false});
  cases.push_back({"pair_tipc", AF_TIPC, SOCK_SEQPACKET, false});
  cases.push_back({"pair_netlink", AF_NETLINK, SOCK_RAW, false});
  return cases;
}

}  // namespace

TEST_CASE("socketpair is allowed for unix stream and seqpacket pairs only", "[seccomp]") {
  const std::vector<PairCase> cases = pair_cases();
  auto try_all = [&cases](const Reporter& out) {
    for (const PairCase& c : cases) out(c.name.c_str(), raw_socketpair(c.domain, c.type));
  };
  const SeccompProgram program = build_seccomp_program({});
  ChildRun run = run_child(&program, try_all);
  INFO("child " << describe(run.status));
  REQUIRE(run["confined"] == "confined 0 0");
  for (const PairCase& c : cases) {
    CHECK(run[c.name] == c.name + (c.allowed ? " 0 0" : " -1 EPERM"));
  }

  // Without the filter the kernel makes a datagram pair of SOCK_RAW and ignores the high half:
  // the denied spellings above are real ones.
  ChildRun control = run_child(nullptr, try_all);
  CHECK(control["pair_t3_f0"] == "pair_t3_f0 0 0");  // SOCK_RAW
  CHECK(control["pair_t2_f2048"] == "pair_t2_f2048 0 0");
  CHECK(control["pair_high_stream"] == "pair_high_stream 0 0");
  CHECK(control["pair_bit32_raw"] == "pair_bit32_raw 0 0");
  CHECK(control["pair_domain_high"] == "pair_domain_high 0 0");

  // With unix sockets allowed, a datagram pair is no more than socket(AF_UNIX) already gives;
  // other domains stay denied.
  const SeccompProgram with_unix = build_seccomp_program({.allow_unix_sockets = true});
  ChildRun open = run_child(&with_unix, try_all);
  CHECK(open["pair_t2_f0"] == "pair_t2_f0 0 0");
  CHECK(open["pair_inet"] == "pair_inet -1 EPERM");
  CHECK(open["pair_domain_high"] == "pair_domain_high -1 EPERM");
}

TEST_CASE("socket(AF_UNIX) is denied in every type spelling", "[seccomp]") {
  const SeccompProgram program = build_seccomp_program({});
  ChildRun run = run_child(&program, [](const Reporter& out) {
    const unsigned long types[] = {SOCK_STREAM,
                                   SOCK_DGRAM,
                                   SOCK_RAW,
                                   SOCK_SEQPACKET,
                                   SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                                   0xffffffff00000000UL | SOCK_RAW};
    int i = 0;
    for (unsigned long type : types) {
      const std::string name = "unix_" + std::to_string(i++);
      out.fd_result(name.c_str(), ::syscall(SYS_socket, AF_UNIX, type, 0));
    }
    out.fd_result("local_high", ::syscall(SYS_socket, 0x7fffffff00000000UL | AF_LOCAL, 2UL, 0));
    out.fd_result("inet_dgram", ::socket(AF_INET, SOCK_DGRAM, 0));
  });
  REQUIRE(run["confined"] == "confined 0 0");
  for (const char* name :
       {"unix_0", "unix_1", "unix_2", "unix_3", "unix_4", "unix_5", "local_high"}) {
    CHECK(run[name] == std::string(name) + " -1 EPERM");
  }
  CHECK(run["inet_dgram"] == "inet_dgram 0 0");
}

namespace {

// A directory for files a child creates, checked on the "host" (the parent) afterwards.
struct ModeDir {
  ModeDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "paddock-mode-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
    ::chmod(path.c_str(), 0755);  // not setgid: nothing is inherited
  }
  ~ModeDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const char* name) const { return path + "/" + name; }
  std::string path;
};

// The mode bits of `path` (-1 if absent): what the host would see.
long mode_of(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_mode & 07777) : -1;
}

// Every way to give a file the setuid or setgid bit, each on its own file, plus the ordinary
// modes that must keep working. `dir` holds "target" (0644) made by the caller.
void set_modes(const Reporter& out, const ModeDir& dir) {
  ::umask(022);
  const std::string target = dir / "target";
  const char* t = target.c_str();
  const int dfd = ::open(dir.path.c_str(), O_DIRECTORY | O_PATH | O_CLOEXEC);
  out("chmod_suid", ::chmod(t, 04755));
  out("chmod_sgid", ::chmod(t, 02755));
  out("chmod_both_filetype", ::chmod(t, S_IFREG | 06755));
  out("chmod_high_garbage", ::syscall(SYS_chmod, t, 0xffff000000000000UL | 04755));
  const int fd = ::open(t, O_RDONLY | O_CLOEXEC);
  out("fchmod_suid", ::fchmod(fd, 04755));
  out("fchmod_sgid", ::syscall(SYS_fchmod, fd, 0x100000000UL | 02711));
  out("fchmodat_suid", ::fchmodat(dfd, "target", 04755, 0));
#if defined(__x86_64__) || defined(__aarch64__)
  out("fchmodat2_suid", ::syscall(kSysFchmodat2, dfd, "target", 04755, 0));
  out("fchmodat2_empty_path", ::syscall(kSysFchmodat2, fd, "", 02755, AT_EMPTY_PATH));
#endif
  out.fd_result("open_creat", ::syscall(SYS_open, (dir / "o1").c_str(), O_CREAT | O_WRONLY, 04755));
  out.fd_result("openat_creat", ::openat(dfd, "o2", O_CREAT | O_EXCL | O_WRONLY, 02755));
  out.fd_result("openat_creat_high",
                ::syscall(SYS_openat, dfd, "o3", O_CREAT | O_WRONLY, 0xffffffff00000000UL | 04700));
  out.fd_result("creat", ::creat((dir / "o4").c_str(), 04700));
  out.fd_result("open_tmpfile", ::open(dir.path.c_str(), O_TMPFILE | O_WRONLY, 04755));
  out.fd_result("openat_tmpfile", ::openat(dfd, ".", O_TMPFILE | O_RDWR, 02755));
  out("mknod_reg", ::mknod((dir / "o5").c_str(), S_IFREG | 04755, 0));
  out("mknodat_reg", ::mknodat(dfd, "o6", S_IFREG | 02755, 0));
  open_how how{};
  how.flags = O_CREAT | O_WRONLY;
  how.mode = 0644;
  out.fd_result("openat2", ::syscall(SYS_openat2, dfd, "o7", &how, sizeof how));

  // Ordinary modes: chmod 755/644, the sticky bit, chmod(st_mode) with the file type bits
  // (a common idiom), creation with a plain mode, a mode the kernel ignores without O_CREAT.
  out("chmod_755", ::chmod(t, 0755));
  out("chmod_644", ::chmod(t, 0644));
  out("chmod_sticky_dir", ::chmod(dir.path.c_str(), 01755));
  out("chmod_st_mode", ::chmod(t, S_IFREG | 0640));
  out("fchmod_600", ::fchmod(fd, 0600));
  out.fd_result("open_creat_644", ::open((dir / "plain").c_str(), O_CREAT | O_WRONLY, 0644));
  out.fd_result("open_mode_ignored", ::syscall(SYS_open, t, O_RDONLY, 04755));
  out.fd_result("tmpfile_600", ::open(dir.path.c_str(), O_TMPFILE | O_WRONLY, 0600));
  out("mknod_fifo", ::mknod((dir / "fifo").c_str(), S_IFIFO | 0644, 0));
  // mkdir needs no rule: the kernel keeps only the permission and sticky bits.
  out("mkdir_setid", ::mkdir((dir / "d").c_str(), 07755));
  ::chmod(dir.path.c_str(), 0755);
  ::close(fd);
  ::close(dfd);
}

}  // namespace

TEST_CASE("no call gives a file the setuid or setgid bit, ordinary modes still work",
          "[seccomp][setid]") {
  const char* denied[] = {
    "chmod_suid",
    "chmod_sgid",
    "chmod_both_filetype",
    "chmod_high_garbage",
    "fchmod_suid",
    "fchmod_sgid",
    "fchmodat_suid",
    "open_creat",
    "openat_creat",
    "openat_creat_high",
    "creat",
    "open_tmpfile",
    "openat_tmpfile",
    "mknod_reg",
    "mknodat_reg",
#if defined(__x86_64__) || defined(__aarch64__)
    "fchmodat2_suid",
    "fchmodat2_empty_path",
#endif
  };
  const char* allowed[] = {"chmod_755",  "chmod_644",      "chmod_sticky_dir",  "chmod_st_mode",
                           "fchmod_600", "open_creat_644", "open_mode_ignored", "tmpfile_600",
                           "mknod_fifo", "mkdir_setid"};

  // Without the filter every spelling works (as root and as nobody: the file is our own).
  {
    ModeDir dir;
    ::close(::open((dir / "target").c_str(), O_CREAT | O_WRONLY, 0644));
    ChildRun control = run_child(nullptr, [&dir](const Reporter& out) { set_modes(out, dir); });
    INFO("unfiltered child " << describe(control.status));
    for (const char* name : denied) CHECK(control[name] == std::string(name) + " 0 0");
    CHECK(mode_of(dir / "o1") == 04755);
    CHECK(mode_of(dir / "o5") == 04755);
    CHECK(control["openat2"] == "openat2 0 0");
  }

  ModeDir dir;
  ::close(::open((dir / "target").c_str(), O_CREAT | O_WRONLY, 0644));
  const SeccompProgram program = build_seccomp_program({});
  ChildRun run = run_child(&program, [&dir](const Reporter& out) { set_modes(out, dir); });
  INFO("filtered child " << describe(run.status));
  REQUIRE(run["confined"] == "confined 0 0");
  for (const char* name : denied) CHECK(run[name] == std::string(name) + " -1 EPERM");
  CHECK(run["openat2"] == "openat2 -1 ENOSYS");
  for (const char* name : allowed) CHECK(run[name] == std::string(name) + " 0 0");

  // What the host sees: no file with either bit, the denied creations never happened.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path)) {
    INFO(entry.path());
    CHECK((mode_of(entry.path()) & 06000) == 0);
  }
  for (const char* name : {"o1", "o2", "o3", "o4", "o5", "o6", "o7"}) {
    CHECK(mode_of(dir / name) == -1);
  }
  CHECK(mode_of(dir / "target") == 0600);  // the last chmod that was allowed
  CHECK(mode_of(dir / "d") == 01755);
  CHECK(mode_of(dir / "plain") == 0644);
}

TEST_CASE("what Docker's default profile refuses is refused here too", "[seccomp]") {
  auto try_all = [](const Reporter& out) {
    char buf[16];
    out("modify_ldt", ::syscall(SYS_modify_ldt, 0 /*read*/, buf, sizeof buf));
    out("sysfs", ::syscall(SYS_sysfs, 3 /*number of filesystem types*/));
    struct ustat_buf {
      long f_tfree;
      unsigned long f_tinode;
      char f_fname[6], f_fpack[6];
    } us{};
    out("ustat", ::syscall(SYS_ustat, 0x700, &us));
    out("uselib", ::syscall(SYS_uselib, "/nonexistent/paddock-lib"));
    out("lookup_dcookie", ::syscall(SYS_lookup_dcookie, 0UL, buf, sizeof buf));
    out("sysctl", ::syscall(SYS__sysctl, nullptr));
    out("nfsservctl", ::syscall(SYS_nfsservctl, 0, nullptr, nullptr));
    timeval tv{};
    ::gettimeofday(&tv, nullptr);
    out("settimeofday", ::syscall(SYS_settimeofday, &tv, nullptr));
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    out("clock_settime", ::syscall(SYS_clock_settime, CLOCK_REALTIME, &ts));
    unsigned long nodes = 1;
    out("migrate_pages", ::syscall(SYS_migrate_pages, 0, 64UL, &nodes, &nodes));
    out("move_pages", ::syscall(SYS_move_pages, 0, 0UL, nullptr, nullptr, nullptr, 0));
    out("process_madvise", ::syscall(SYS_process_madvise, -1, nullptr, 0UL, 0, 0U));
#if defined(__x86_64__) || defined(__aarch64__)
    out("open_tree_attr", ::syscall(467, AT_FDCWD, "/nonexistent/paddock", 0U, nullptr, 0UL));
#endif
    // Still there: reading the clock discipline (ntp_gettime) and the process's own NUMA policy.
    timex tx{};
    out("adjtimex_read", ::adjtimex(&tx) < 0 ? -1 : 0);
    int mode = -1;
    out("get_mempolicy", ::syscall(SYS_get_mempolicy, &mode, nullptr, 0UL, nullptr, 0UL));
  };
  const SeccompProgram program = build_seccomp_program({});
  ChildRun run = run_child(&program, try_all);
  INFO("child " << describe(run.status));
  REQUIRE(run["confined"] == "confined 0 0");
  for (const char* name : {
         "modify_ldt", "sysfs", "ustat", "uselib", "lookup_dcookie", "sysctl", "nfsservctl",
             "settimeofday", "clock_settime", "migrate_pages", "move_pages", "process_madvise",
#if defined(__x86_64__) || defined(__aarch64__)
             "open_tree_attr"
#endif
       }) {
    CHECK(run[name] == std::string(name) + " -1 EPERM");
  }
  CHECK(run["adjtimex_read"] == "adjtimex_read 0 0");
  CHECK(run["get_mempolicy"] == "get_mempolicy 0 0");

  // Unfiltered, the kernel answers differently (or succeeds): the EPERMs are the filter's.
  ChildRun control = run_child(nullptr, try_all);
  CHECK(control.succeeded("modify_ldt") == "modify_ldt ok");
  CHECK(control.succeeded("sysfs") == "sysfs ok");
  CHECK(control["uselib"] != "uselib -1 EPERM");
  CHECK(control["move_pages"] != "move_pages -1 EPERM");
  CHECK(control["process_madvise"] != "process_madvise -1 EPERM");
#if defined(__x86_64__) || defined(__aarch64__)
  CHECK(control["open_tree_attr"] != "open_tree_attr -1 EPERM");
#endif
}
