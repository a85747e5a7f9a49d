// Runs a program with some syscalls denied by seccomp (EPERM), as container runtimes do, so
// the tests can see what paddock says when what it needs is unavailable:
//   deny_syscalls io_uring PROGRAM [ARGS...]   io_uring_setup (Docker's default profile)
//   deny_syscalls userns PROGRAM [ARGS...]     clone/unshare with CLONE_NEWUSER (no sandbox)
//   deny_syscalls mount PROGRAM [ARGS...]      mount(2) (namespaces work; the child's mount
//                                              steps fail, as under some LSM policies)
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s io_uring|userns|mount PROGRAM [ARGS...]\n", argv[0]);
    return 2;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  int rc = ctx == nullptr ? -1 : 0;
  if (rc == 0 && std::strcmp(argv[1], "io_uring") == 0) {
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(io_uring_setup), 0);
  } else if (rc == 0 && std::strcmp(argv[1], "userns") == 0) {
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                          SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0);
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  } else if (rc == 0 && std::strcmp(argv[1], "mount") == 0) {
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mount), 0);
  } else if (rc == 0) {
    std::fprintf(stderr, "%s: unknown mode %s\n", argv[0], argv[1]);
    return 2;
  }
  if (rc != 0 || seccomp_load(ctx) != 0) {
    std::perror("seccomp");
    return 2;
  }
  seccomp_release(ctx);
  ::execv(argv[2], argv + 2);
  std::perror("execv");
  return 127;
}
