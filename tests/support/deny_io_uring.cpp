// Runs a program with io_uring_setup denied by seccomp (EPERM), as Docker's default profile
// does, so the tests can see what paddock says when its backend is unavailable.
#include <errno.h>
#include <seccomp.h>
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PROGRAM [ARGS...]\n", argv[0]);
    return 2;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr ||
      seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(io_uring_setup), 0) != 0 ||
      seccomp_load(ctx) != 0) {
    std::perror("seccomp");
    return 2;
  }
  seccomp_release(ctx);
  ::execv(argv[1], argv + 1);
  std::perror("execv");
  return 127;
}
