// The CLI's stdin copied into a pipe the command reads: for a stdin that a sandboxed command
// may not have as it is (a file, a directory, a terminal: process/given_fd.hpp says why).
#pragma once

namespace paddock::cli {

// Starts copying `from` into a new pipe on a thread of its own and returns the pipe's read end
// (for ExecOptions::stdin_fd; the caller closes it once the command has started), or -1 with
// errno set. A blocking thread is right here: it serves the one command of a one-shot process
// and blocks only on our own stdin, never on the event loop. It is detached: a terminal's read
// may block until the process exits. EOF (or an error) on `from` closes the pipe; the command
// gone (EPIPE) ends the copy.
int start_stdin_relay(int from);

}  // namespace paddock::cli
