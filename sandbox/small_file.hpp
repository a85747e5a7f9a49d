// Reading a small configuration file whole, safely: never through a symlink at its name,
// never blocking on a FIFO, never more than a bound (a config judged by a part of it would let
// the rest through).
#pragma once

#include <cstddef>
#include <string>

namespace paddock::sandbox {

// Appends the regular file at `path` to `out`: false when it is missing, not a regular file,
// a symlink, larger than `max` bytes, unreadable, or (with `single_link`) has another name.
// One name matters where only this path is protected: another name of the same inode stays
// writable in later runs (`ln .git/config notes.txt`, then rewrite notes.txt).
bool read_small_file(const std::string& path, std::size_t max, std::string& out, bool single_link);

// Appends what is left of the open file `fd` to `out`, at most `max` bytes in all: 0, or an
// errno (EFBIG past `max`). The one read loop of sandbox/'s whole-file readers.
int read_whole(int fd, std::size_t max, std::string& out);

}  // namespace paddock::sandbox
