// paddock-init (init_main.cpp) travels inside the library: its bytes are linked in, and put in a
// sealed memfd once per process, which every sandboxed child execs (execveat, AT_EMPTY_PATH).
// So no file on the host must be visible inside the sandbox for it, an embedder installs
// nothing besides the library, and no command can change it (the seals forbid writes and
// mode changes, and the init is not dumpable, so /proc/1/exe is out of a command's reach).
#pragma once

namespace paddock::process {

// The memfd (CLOEXEC, numbered 10 or above so it never collides with the fds a child sets up
// on 0-3), or -1 with errno set when it cannot be made (vm.memfd_noexec=2 forbids executable
// memfds). Made on first call; thread-safe.
int init_image_fd();

}  // namespace paddock::process
