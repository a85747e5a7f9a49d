// Owns the read end of one output pipe (stdout or stderr of a child): keeps the first
// `cap` bytes, hands them to a streaming callback as they arrive, and keeps draining past the
// cap so the child never blocks on a full pipe. With `keep` false the bytes are only handed
// on, never kept: a caller that streams (the CLI) holds no output in memory however much the
// command writes, and `cap` then only bounds what is handed on.
//
// Memory per idle child is zero: instead of parking a read buffer per pipe in the kernel
// (async_read_some), we wait for readability and then read() into a per-thread scratch
// buffer. 10,000 quiet children cost no buffers at all.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace paddock::process {

class OutputPipe {
 public:
  using ChunkCallback = std::function<void(std::string_view)>;

  // read_fd < 0: the output is discarded (the pipe starts done).
  OutputPipe(const asio::any_io_executor& ex, int read_fd, std::size_t cap, bool keep = true);

  // Reads until EOF (or close()); on_chunk gets each kept chunk, on_eof fires once at EOF.
  // `owner` keeps whatever owns this pipe alive, held only by pending waits and posted reads
  // (never by the pipe itself: that would be a cycle no shutdown could break). The callbacks
  // may therefore capture their owner by raw pointer.
  void start(ChunkCallback on_chunk, std::function<void()> on_eof, std::shared_ptr<void> owner);

  // Stops reading (drain bound passed): counts as EOF for completion, fires no callback. The
  // descriptor itself closes once no wait is in flight on it (at once, or in the cancelled
  // wait's handler, which the owner outlives).
  void close() noexcept;

  bool done() const noexcept { return done_; }
  bool truncated() const noexcept { return truncated_; }
  std::uint64_t total_bytes() const noexcept { return total_; }
  std::string take() noexcept { return std::move(kept_); }

 private:
  void arm(std::shared_ptr<void> owner);
  void on_readable(const std::shared_ptr<void>& owner);
  void grow_pipe() noexcept;
  void reserve_for(std::size_t more);

  asio::posix::stream_descriptor fd_;
  std::size_t cap_;
  std::size_t delivered_ = 0;  // bytes handed on (and kept, when keep_), at most cap_
  bool keep_;
  std::string kept_;
  std::uint64_t total_ = 0;
  bool truncated_ = false;
  bool done_ = false;
  bool grown_ = false;
  bool waiting_ = false;  // a wait is in flight: close() cancels it, its handler closes
  ChunkCallback on_chunk_;
  std::function<void()> on_eof_;
};

}  // namespace paddock::process
