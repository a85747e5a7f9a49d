// One 256 KiB buffer per event-loop thread, shared by everything that reads on that thread
// (output pipes, proxy relays) and used only between two suspension points: read into it,
// hand the bytes on or copy them out, before anything else can run on the thread.
// Allocated on first use: a thread_local array would add 256 KiB of static TLS to every
// thread of an embedding program, carved out of each thread's stack.
#pragma once

#include <cstddef>
#include <memory>

namespace paddock::base {

// Four full default pipe buffers: a fast writer is drained in one wake-up.
inline constexpr std::size_t kThreadScratchSize = 256 * 1024;

inline char* thread_scratch() {
  thread_local std::unique_ptr<char[]> buffer(new char[kThreadScratchSize]);
  return buffer.get();
}

}  // namespace paddock::base
