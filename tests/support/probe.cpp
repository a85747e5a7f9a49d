// A command for the tests: prints, one per line, what the child really got from paddock:
//   fds: the open descriptors; sigblk/sigign: masks from /proc/self/status;
//   session: "sid==pid" or not; then echoes argv[1..].
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  std::string fds;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    int self = ::dirfd(d);
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.' || std::stoi(e->d_name) == self) continue;
      fds += std::string(fds.empty() ? "" : ",") + e->d_name;
    }
    ::closedir(d);
  }
  std::printf("fds=%s\n", fds.c_str());
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("SigBlk:", 0) == 0 || line.rfind("SigIgn:", 0) == 0) {
      std::printf("%s\n", line.c_str());
    }
  }
  // own: the leader of its session (unsandboxed); init: in the session of PID 1 of its PID
  // namespace, paddock-init, which made it; inherited: the supervisor's (a bug).
  const pid_t sid = ::getsid(0);
  std::printf("session=%s\n", sid == ::getpid() ? "own" : sid == 1 ? "init" : "inherited");
  for (int i = 1; i < argc; ++i) std::printf("arg=%s\n", argv[i]);
  return 0;
}
