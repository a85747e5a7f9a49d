#include "process/output_pipe.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <asio/post.hpp>

#include "base/thread_scratch.hpp"

namespace paddock::process {
namespace {

using base::kThreadScratchSize;
using base::thread_scratch;

// Reads per wake-up before yielding to other work on the loop (fairness under a flood).
constexpr int kReadsPerWake = 16;

// A read that takes a whole default pipe buffer means a fast writer: the pipe was full and
// the writer blocked. Growing that one pipe to 1 MiB (the unprivileged maximum) cuts the
// writer/reader context switches 16-fold. Pipes of quiet commands stay at the default, so
// thousands of them do not eat into the user's pipe-user-pages-soft budget.
constexpr ssize_t kDefaultPipeSize = 64 * 1024;
constexpr int kGrownPipeSize = 1024 * 1024;

}  // namespace

void OutputPipe::reserve_for(std::size_t more) {
  const std::size_t need = kept_.size() + more;
  if (need <= kept_.capacity()) return;
  constexpr std::size_t kLarge = 4 * 1024 * 1024;
  constexpr std::size_t kReserveAtOnce = std::size_t{1} << 30;
  if (need <= kLarge) {
    kept_.reserve(std::min(cap_, std::max(need, 2 * kept_.capacity())));
    return;
  }
  // A stream past 4 MiB is a big one: reserve up to the cap (at most 1 GiB) in one go, which
  // costs address space, not memory, until written, and ask for transparent huge pages. A large
  // capture is otherwise dominated by re-copying on each doubling and one page fault per 4 KiB.
  kept_.reserve(std::min(cap_, std::max(need, std::max(kReserveAtOnce, 2 * kept_.capacity()))));
  constexpr std::size_t kHuge = 2 * 1024 * 1024;
  const auto start = reinterpret_cast<std::uintptr_t>(kept_.data()) + kept_.size();
  const auto begin = (start + kHuge - 1) & ~(kHuge - 1);
  const auto end =
      (reinterpret_cast<std::uintptr_t>(kept_.data()) + kept_.capacity()) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void OutputPipe::grow_pipe() noexcept {
  grown_ = true;
  ::fcntl(fd_.native_handle(), F_SETPIPE_SZ, kGrownPipeSize);  // best effort: EPERM past quota
}

OutputPipe::OutputPipe(const asio::any_io_executor& ex, int read_fd, std::size_t cap, bool keep)
    : fd_(ex), cap_(cap), keep_(keep) {
  if (read_fd < 0) {
    done_ = true;  // output discarded: nothing to read
    return;
  }
  fd_.assign(read_fd);
  fd_.non_blocking(true);
}

void OutputPipe::start(ChunkCallback on_chunk, std::function<void()> on_eof,
                       std::shared_ptr<void> owner) {
  if (done_) return;  // discarded output: nothing to read, nothing to hold
  on_chunk_ = std::move(on_chunk);
  on_eof_ = std::move(on_eof);
  on_readable(owner);  // the child may have written already
}

void OutputPipe::close() noexcept {
  on_chunk_ = nullptr;
  on_eof_ = nullptr;
  if (done_) return;
  done_ = true;
  std::error_code ignored;
  if (waiting_) {
    // Neither close nor cancel under a wait in flight: on Asio 1.22's io_uring backend a
    // close frees the descriptor's state with the poll still queued in it, and a cancel is
    // submitted with a stale completion tag that completes some other descriptor's operation
    // twice (commands that never completed under load; docs/design.md, "Never cancel or
    // close under an operation"). The wait ends by itself once the last writer is gone (a sandbox's
    // PID namespace dies with its command; an unsandboxed command's escaped daemon may keep it
    // longer), and its handler closes.
    return;
  }
  fd_.close(ignored);
}

void OutputPipe::arm(std::shared_ptr<void> owner) {
  waiting_ = true;
  fd_.async_wait(asio::posix::stream_descriptor::wait_read,
                 [this, owner = std::move(owner)](const std::error_code&) {
                   waiting_ = false;
                   // Only close() ends the stream. Any error here (a stray
                   // operation_aborted, see close()) just means: read and see.
                   if (done_) {
                     std::error_code ignored;
                     fd_.close(ignored);  // close() was called while we waited
                     return;
                   }
                   on_readable(owner);
                 });
}

void OutputPipe::on_readable(const std::shared_ptr<void>& owner) {
  char* const buf = thread_scratch();
  for (int i = 0; i < kReadsPerWake; ++i) {
    ssize_t n = ::read(fd_.native_handle(), buf, kThreadScratchSize);
    if (n >= kDefaultPipeSize && !grown_) grow_pipe();
    if (n > 0) {
      total_ += static_cast<std::uint64_t>(n);
      std::size_t room = cap_ - delivered_;
      std::size_t keep = std::min(room, static_cast<std::size_t>(n));
      if (keep < static_cast<std::size_t>(n)) truncated_ = true;
      if (keep > 0) {
        delivered_ += keep;
        if (keep_) {
          reserve_for(keep);
          kept_.append(buf, keep);
          if (on_chunk_) on_chunk_(std::string_view(kept_).substr(kept_.size() - keep));
        } else if (on_chunk_) {
          on_chunk_(std::string_view(buf, keep));
        }
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      arm(owner);
      return;
    }
    // EOF, or an error that ends the stream the same way.
    auto eof = std::move(on_eof_);
    close();
    if (eof) eof();
    return;
  }
  // Still data after kReadsPerWake reads: let other handlers run, then continue.
  asio::post(fd_.get_executor(), [this, owner] {
    if (!done_) on_readable(owner);
  });
}

}  // namespace paddock::process
