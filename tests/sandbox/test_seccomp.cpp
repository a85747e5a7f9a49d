// The seccomp program, attacked for real: a forked child (support/seccomp_child) drops its
// capabilities, sets NO_NEW_PRIVS, installs the program the way the sandboxed child does, then
// tries each denied call and reports "name rc errno" lines through a pipe. Where it is cheap, the
// arguments are chosen so the call would fail differently (or succeed) without the filter (a
// missing path gives ENOENT, a bad fd EBADF), so an EPERM really comes from the filter even without
// capabilities.
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <optional>
#include <string>

#include "sandbox/linux/seccomp_filter.hpp"
#include "sandbox/linux/seccomp_precompiled.hpp"
#include "support/seccomp_child.hpp"

using paddock::sandbox::build_seccomp_program;
using paddock::sandbox::SeccompOptions;
using paddock::sandbox::SeccompProgram;
using test::ChildRun;
using test::describe;
using test::killed_by;
using test::Reporter;
using test::run_child;
using test::wait_status;

namespace {

// A raw clone() that may succeed without the filter: the new child leaves at once.
long raw_clone(unsigned long flags) {
  long rc = ::syscall(SYS_clone, flags, 0, 0, 0, 0);
  if (rc == 0) ::_exit(0);
  if (rc > 0) {
    int saved = errno;
    wait_status(static_cast<pid_t>(rc));
    errno = saved;
  }
  return rc;
}

void* thread_main(void* flag) {
  *static_cast<int*>(flag) = 1;
  return nullptr;
}

constexpr const char* kMissing = "/nonexistent/paddock-seccomp";

// Everything the filter must deny, tried for real.
void attack(const Reporter& out) {
  // Namespaces. clone's extra CLONE_SIGHAND without CLONE_VM makes the kernel answer EINVAL
  // before any namespace check, so only the filter can turn these into EPERM.
  out("unshare_user", ::unshare(CLONE_NEWUSER));
  out("unshare_net", ::unshare(CLONE_NEWNET));
  out("setns", ::setns(-1, 0));
  out("clone_newuser", raw_clone(CLONE_NEWUSER | SIGCHLD));
  const std::pair<const char*, unsigned long> flags[] = {
      {"clone_sighand_newuser", CLONE_NEWUSER},
      {"clone_sighand_newns", CLONE_NEWNS},
      {"clone_sighand_newpid", CLONE_NEWPID},
      {"clone_sighand_newnet", CLONE_NEWNET},
      {"clone_sighand_newipc", CLONE_NEWIPC},
      {"clone_sighand_newuts", CLONE_NEWUTS},
      {"clone_sighand_newcgroup", CLONE_NEWCGROUP},
      {"clone_sighand_newtime", CLONE_NEWTIME},
      {"clone_sighand_high_newuser", 0xffffffff00000000UL | CLONE_NEWUSER}};
  for (const auto& [name, flag] : flags) out(name, raw_clone(flag | CLONE_SIGHAND | SIGCHLD));
  clone_args args{};
  args.exit_signal = SIGCHLD;
  long rc = ::syscall(SYS_clone3, &args, sizeof args);
  if (rc == 0) ::_exit(0);
  out("clone3", rc);

  // Mounts: the missing target makes the unfiltered calls fail with ENOENT instead.
  out("mount", ::mount("none", kMissing, "tmpfs", 0, nullptr));
  out("umount2", ::umount2(kMissing, 0));
  out("chroot", ::chroot(kMissing));
  out("pivot_root", ::syscall(SYS_pivot_root, kMissing, kMissing));
  out("open_tree", ::syscall(SYS_open_tree, AT_FDCWD, kMissing, 0));
  out("fsopen", ::syscall(SYS_fsopen, "tmpfs", 0));

  // Other processes.
  out("process_vm_readv", ::process_vm_readv(::getpid(), nullptr, 0, nullptr, 0, 0));
  out("pidfd_getfd", ::syscall(SYS_pidfd_getfd, -1, 0, 0));
  out("kcmp", ::syscall(SYS_kcmp, ::getpid(), ::getpid(), 0 /*KCMP_FILE*/, 0, 0));

  // Kernel facilities.
  out("keyctl", ::syscall(SYS_keyctl, 0 /*KEYCTL_GET_KEYRING_ID*/, -3 /*SESSION*/, 0));
  out("request_key", ::syscall(SYS_request_key, "user", "paddock-none", nullptr, 0));
  out("bpf", ::syscall(SYS_bpf, 0 /*BPF_MAP_CREATE*/, nullptr, 0));
  out("perf_event_open", ::syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0));
  out("userfaultfd", ::syscall(SYS_userfaultfd, O_CLOEXEC));
  out("fanotify_init", ::fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC, O_RDONLY));
  out("name_to_handle_at",
      ::syscall(SYS_name_to_handle_at, AT_FDCWD, kMissing, nullptr, nullptr, 0));
  out("open_by_handle_at", ::syscall(SYS_open_by_handle_at, -1, nullptr, 0));
  io_uring_params params{};
  out.fd_result("io_uring_setup", ::syscall(SYS_io_uring_setup, 1, &params));
  out("io_uring_enter", ::syscall(SYS_io_uring_enter, -1, 0, 0, 0, nullptr, 0));
  out("init_module", ::syscall(SYS_init_module, nullptr, 0, ""));
  out("kexec_file_load", ::syscall(SYS_kexec_file_load, -1, -1, 0, nullptr, 0));
  out("syslog", ::syscall(SYS_syslog, 10 /*SYSLOG_ACTION_SIZE_BUFFER*/, nullptr, 0));
#if defined(SYS_iopl)
  out("iopl", ::syscall(SYS_iopl, 0));
#endif

  // Sockets that leave the network namespace; the kernel reads the family as an int.
  out.fd_result("socket_unix", ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  {
    // A datagram socketpair could sendto() any socket path on the host.
    int dgram[2];
    out("socketpair_dgram", ::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, dgram));
  }
  out.fd_result("socket_unix_dgram", ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  out.fd_result("socket_unix_high_bits",
                ::syscall(SYS_socket, 0xffffffff00000000UL | AF_UNIX, SOCK_STREAM, 0));
  out.fd_result("socket_vsock", ::socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0));

  // Terminal injection, on /dev/null (ENOTTY unfiltered): never on a real terminal, in case
  // the filter is broken. The kernel truncates cmd to 32 bits, so high bits must not help.
  int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  char c = 'x';
  out("ioctl_tiocsti", ::ioctl(null_fd, TIOCSTI, &c));
  out("ioctl_tiocsti_high_bits", ::syscall(SYS_ioctl, null_fd, 0xffffffff00005412UL, &c));
  out("ioctl_tioclinux", ::ioctl(null_fd, TIOCLINUX, &c));
  ::close(null_fd);

  // Persona flags; the kernel reads an unsigned int, so high bits must not help either.
  out("personality_no_aslr", ::personality(ADDR_NO_RANDOMIZE));
  out("personality_linux32", ::personality(PER_LINUX32));
  out("personality_high_bits", ::syscall(SYS_personality, 0x100000000UL | READ_IMPLIES_EXEC));
  // Ones on top, zeros below (ADDR_NO_RANDOMIZE among the ones): the wrap-around case of the
  // filter's bit-pair compares.
  out("personality_top_ones", ::personality(0xfffc0000));

  // Last: if ptrace got through, a later execve would stop the child for its tracer.
  out("ptrace_traceme", ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr));
  out("ptrace_attach_parent", ::ptrace(PTRACE_ATTACH, ::getppid(), nullptr, nullptr));
}

// What an ordinary program does and must keep working.
void live_normally(const Reporter& out) {
  out("getpid", ::getpid());
  out.fd_result("socket_inet", ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  out.fd_result("socket_netlink", ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0));
  int pair[2];
  out("socketpair_unix", ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair));
  int queued = -1;
  out("ioctl_fionread", ::ioctl(pair[0], FIONREAD, &queued));
  ::close(pair[0]);
  ::close(pair[1]);

  pid_t pid = ::fork();
  if (pid == 0) ::_exit(7);
  out("fork", wait_status(pid));
  pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/true", "true", nullptr);
    ::_exit(127);
  }
  out("execve_true", wait_status(pid));
  // glibc tries clone3 first for threads and falls back to clone on ENOSYS.
  pthread_t thread;
  int ran = 0;
  int rc = ::pthread_create(&thread, nullptr, thread_main, &ran);
  if (rc == 0) ::pthread_join(thread, nullptr);
  out("pthread_create", rc == 0 ? ran : -1);
  // Same CLONE_SIGHAND-without-CLONE_VM call as above but no namespace: reaches the kernel.
  out("clone_sighand_plain", raw_clone(CLONE_SIGHAND | SIGCHLD));

  out("personality_query", ::personality(0xffffffff));
  out("personality_query_long", ::syscall(SYS_personality, ~0UL));
  out("personality_linux", ::personality(PER_LINUX));
}

}  // namespace

TEST_CASE("the seccomp program is small, and copies and moves keep their own code", "[seccomp]") {
  SeccompProgram program = build_seccomp_program({});
  CHECK(program.instructions() > 10);
  // 370 on x86_64 with libseccomp 2.5.4 (216 before the socketpair allow-list and the setuid
  // rules): a budget, so the next rule that costs a hundred instructions is a decision.
  CHECK(program.instructions() <= 400);
  CHECK(program.fprog()->len == program.instructions());
  CHECK(program.fprog()->filter != nullptr);

  SeccompProgram copy = program;
  CHECK(copy.fprog()->filter != program.fprog()->filter);
  CHECK(copy.fprog()->len == program.fprog()->len);
  CHECK(std::memcmp(copy.fprog()->filter, program.fprog()->filter,
                    program.instructions() * sizeof(sock_filter)) == 0);
  const sock_filter* code = copy.fprog()->filter;
  SeccompProgram moved = std::move(copy);
  CHECK(moved.fprog()->filter == code);
  CHECK(moved.fprog()->len == program.fprog()->len);

  // Allowing unix sockets drops rules, nothing else.
  SeccompProgram with_unix = build_seccomp_program({.allow_unix_sockets = true});
  CHECK(with_unix.instructions() < program.instructions());
}

// Sandboxes load the build-time table (seccomp_precompiled.hpp); every attack test here runs the
// program libseccomp compiles now. They must be the same program, instruction for instruction.
TEST_CASE("the build-time seccomp programs are exactly what libseccomp compiles at run time",
          "[seccomp]") {
  for (bool unix_sockets : {false, true}) {
    INFO("allow_unix_sockets " << unix_sockets);
    const SeccompOptions options{.allow_unix_sockets = unix_sockets};
    std::optional<SeccompProgram> ready = paddock::sandbox::precompiled_seccomp_program(options);
    REQUIRE(ready.has_value());
    const SeccompProgram now = build_seccomp_program(options);
    REQUIRE(ready->instructions() == now.instructions());
    CHECK(std::memcmp(ready->fprog()->filter, now.fprog()->filter,
                      now.instructions() * sizeof(sock_filter)) == 0);
  }
}

TEST_CASE("seccomp denies escapes with EPERM, clone3 with ENOSYS, and ordinary work goes on",
          "[seccomp]") {
  const SeccompProgram program = build_seccomp_program({});
  ChildRun run = run_child(&program, [](const Reporter& out) {
    live_normally(out);
    attack(out);
  });
  INFO("child " << describe(run.status));
  REQUIRE(run["confined"] == "confined 0 0");
  CHECK(run["cap_effective"] == "cap_effective 0 0");
  CHECK(run.status == 0);

  const char* eperm[] = {
    "unshare_user",
    "unshare_net",
    "setns",
    "clone_newuser",
    "clone_sighand_newuser",
    "clone_sighand_newns",
    "clone_sighand_newpid",
    "clone_sighand_newnet",
    "clone_sighand_newipc",
    "clone_sighand_newuts",
    "clone_sighand_newcgroup",
    "clone_sighand_newtime",
    "clone_sighand_high_newuser",
    "mount",
    "umount2",
    "chroot",
    "pivot_root",
    "open_tree",
    "fsopen",
    "process_vm_readv",
    "pidfd_getfd",
    "kcmp",
    "keyctl",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "fanotify_init",
    "name_to_handle_at",
    "open_by_handle_at",
    "io_uring_setup",
    "io_uring_enter",
    "init_module",
    "kexec_file_load",
    "syslog",
#if defined(SYS_iopl)
    "iopl",
#endif
    "socket_unix",
    "socketpair_dgram",
    "socket_unix_dgram",
    "socket_unix_high_bits",
    "socket_vsock",
    "ioctl_tiocsti",
    "ioctl_tiocsti_high_bits",
    "ioctl_tioclinux",
    "personality_no_aslr",
    "personality_linux32",
    "personality_high_bits",
    "personality_top_ones",
    "ptrace_traceme",
    "ptrace_attach_parent",
  };
  for (const char* name : eperm) CHECK(run[name] == std::string(name) + " -1 EPERM");
  CHECK(run["clone3"] == "clone3 -1 ENOSYS");

  CHECK(run.succeeded("getpid") == "getpid ok");
  CHECK(run["socket_inet"] == "socket_inet 0 0");
  CHECK(run["socket_netlink"] == "socket_netlink 0 0");
  CHECK(run["socketpair_unix"] == "socketpair_unix 0 0");
  CHECK(run["ioctl_fionread"] == "ioctl_fionread 0 0");
  CHECK(run["fork"] == "fork 7 0");
  CHECK(run["execve_true"] == "execve_true 0 0");
  CHECK(run["pthread_create"] == "pthread_create 1 0");
  CHECK(run["clone_sighand_plain"] == "clone_sighand_plain -1 EINVAL");
  CHECK(run.succeeded("personality_query") == "personality_query ok");
  CHECK(run.succeeded("personality_query_long") == "personality_query_long ok");
  CHECK(run.succeeded("personality_linux") == "personality_linux ok");
}

TEST_CASE("without the filter the same attacks fail differently (the tests prove the filter)",
          "[seccomp]") {
  // Control run without the filter: these calls answer something other than EPERM (as root or
  // as nobody), so the EPERMs of the filtered run cannot come from missing privileges.
  ChildRun run = run_child(nullptr, [](const Reporter& out) {
    out("setns", ::setns(-1, 0));
    out("mount", ::mount("none", kMissing, "tmpfs", 0, nullptr));
    out("chroot", ::chroot(kMissing));
    out("clone_sighand_newuser", raw_clone(CLONE_NEWUSER | CLONE_SIGHAND | SIGCHLD));
    out("pidfd_getfd", ::syscall(SYS_pidfd_getfd, -1, 0, 0));
    clone_args args{};
    args.exit_signal = SIGCHLD;
    long rc = ::syscall(SYS_clone3, &args, sizeof args);
    if (rc == 0) ::_exit(0);
    if (rc > 0) wait_status(static_cast<pid_t>(rc));
    out("clone3", rc > 0 ? 0 : rc);
    int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    out("ioctl_tiocsti_high_bits", ::syscall(SYS_ioctl, null_fd, 0xffffffff00005412UL, nullptr));
    out.fd_result("socket_unix_high_bits",
                  ::syscall(SYS_socket, 0xffffffff00000000UL | AF_UNIX, SOCK_STREAM, 0));
  });
  INFO("child " << describe(run.status));
  CHECK(run["setns"] == "setns -1 EBADF");
  CHECK(run["mount"] == "mount -1 ENOENT");
  CHECK(run["chroot"] == "chroot -1 ENOENT");
  CHECK(run["clone_sighand_newuser"] == "clone_sighand_newuser -1 EINVAL");
  CHECK(run["pidfd_getfd"] == "pidfd_getfd -1 EBADF");
  CHECK(run["clone3"] == "clone3 0 0");
  CHECK(run["ioctl_tiocsti_high_bits"] == "ioctl_tiocsti_high_bits -1 ENOTTY");
  CHECK(run["socket_unix_high_bits"] == "socket_unix_high_bits 0 0");
}

TEST_CASE("allow_unix_sockets lets socket(AF_UNIX) through and nothing else", "[seccomp]") {
  const SeccompProgram program = build_seccomp_program({.allow_unix_sockets = true});
  ChildRun run = run_child(&program, [](const Reporter& out) {
    out.fd_result("socket_unix", ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    out.fd_result("socket_vsock", ::socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0));
    out("unshare_user", ::unshare(CLONE_NEWUSER));
    out("mount", ::mount("none", kMissing, "tmpfs", 0, nullptr));
    io_uring_params params{};
    out.fd_result("io_uring_setup", ::syscall(SYS_io_uring_setup, 1, &params));
  });
  INFO("child " << describe(run.status));
  REQUIRE(run["confined"] == "confined 0 0");
  CHECK(run["socket_unix"] == "socket_unix 0 0");
  CHECK(run["socket_vsock"] == "socket_vsock -1 EPERM");
  CHECK(run["unshare_user"] == "unshare_user -1 EPERM");
  CHECK(run["mount"] == "mount -1 EPERM");
  CHECK(run["io_uring_setup"] == "io_uring_setup -1 EPERM");
}

TEST_CASE("an x32 syscall kills the whole process, even from a second thread", "[seccomp]") {
#if defined(__x86_64__)
  const SeccompProgram program = build_seccomp_program({});
  // From a thread, so KILL_THREAD would leave the main thread to exit 0: only KILL_PROCESS
  // gives SIGSYS for the whole child.
  auto x32_from_thread = [](const Reporter& out) {
    pthread_t thread;
    int rc = ::pthread_create(
        &thread, nullptr,
        [](void*) -> void* {
          ::syscall(0x40000000L | SYS_getpid);
          return nullptr;
        },
        nullptr);
    if (rc == 0) ::pthread_join(thread, nullptr);
    out("survived", rc == 0 ? 0 : -1);
  };
  ChildRun control = run_child(nullptr, x32_from_thread);
  INFO("unfiltered child " << describe(control.status));
  CHECK(control.status == 0);  // without the filter: ENOSYS (no x32 here) or getpid()

  ChildRun run = run_child(&program, x32_from_thread);
  INFO("filtered child " << describe(run.status));
  REQUIRE(run["confined"] == "confined 0 0");
  CHECK(killed_by(run.status, SIGSYS));
  CHECK(run.outcomes.count("survived") == 0);
#else
  SUCCEED("x32 is an x86_64 ABI");
#endif
}

TEST_CASE("an i386 int 0x80 syscall kills the process with SIGSYS", "[seccomp]") {
#if defined(__x86_64__)
  const SeccompProgram program = build_seccomp_program({});
  auto int80_getpid = [](const Reporter& out) {
    long rc = 20;  // getpid in the i386 table
    asm volatile("int $0x80" : "+a"(rc) : : "memory", "r8", "r9", "r10", "r11");
    out("int80_getpid", rc);
  };
  ChildRun control = run_child(nullptr, int80_getpid);
  if (killed_by(control.status, SIGSEGV)) {
    WARN("this kernel has no i386 emulation (int 0x80 faults): nothing to filter");
    return;
  }
  INFO("unfiltered child " << describe(control.status));
  CHECK(control.succeeded("int80_getpid") == "int80_getpid ok");

  ChildRun run = run_child(&program, int80_getpid);
  INFO("filtered child " << describe(run.status));
  REQUIRE(run["confined"] == "confined 0 0");
  CHECK(killed_by(run.status, SIGSYS));
  CHECK(run.outcomes.count("int80_getpid") == 0);
#else
  SUCCEED("int 0x80 is the i386 ABI on x86_64");
#endif
}
