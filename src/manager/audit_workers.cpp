#include "manager/audit_workers.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "paddock/errors.hpp"

namespace paddock::manager {
namespace {

class AuditWorkers {
 public:
  static AuditWorkers& get() {
    static auto* workers = new AuditWorkers;  // never destroyed: an audit may run at exit
    return *workers;
  }

  void post(std::function<void()> job) {
    std::unique_lock lock(mutex_);
    jobs_.push_back(std::move(job));
    wake_.notify_one();
    // Idle counts workers notified but not yet awake: only jobs past them need a new one.
    if (jobs_.size() <= idle_ || started_ >= kMaxAuditWorkers) return;
    if (start_locked() || started_ > 0) return;  // else a worker takes it when free
    // No worker and none to be had (a thread limit reached; never through a Manager, which
    // starts the first one): the audit runs here, on the caller's thread, rather than never
    // (its loop would wait for it forever).
    auto stranded = std::move(jobs_.back());
    jobs_.pop_back();
    lock.unlock();
    stranded();
  }

  void start_first() {
    std::lock_guard lock(mutex_);
    if (started_ == 0 && !start_locked()) {
      throw Error(errc::dependency_missing,
                  "could not start the thread post-run audits run on (a thread limit reached?)");
    }
  }

  unsigned started() {
    std::lock_guard lock(mutex_);
    return started_;
  }
  unsigned idle() {
    std::lock_guard lock(mutex_);
    return idle_;
  }

 private:
  // A new thread inherits the caller's per-thread state (network namespace, signal mask):
  // every caller is a loop thread at home or a Manager's constructor (the Manager enters a
  // pooled network namespace only around a clone, never while posting).
  bool start_locked() noexcept {
    try {
      std::thread([this] { run(); }).detach();
      ++started_;
      return true;
    } catch (...) {  // std::system_error (EAGAIN), std::bad_alloc
      return false;
    }
  }

  [[noreturn]] void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      while (jobs_.empty()) {
        ++idle_;
        wake_.wait(lock);
        --idle_;
      }
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      job = nullptr;  // what it still captured goes before the lock is taken again
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  unsigned started_ = 0;
  unsigned idle_ = 0;
};

}  // namespace

void post_audit(std::function<void()> job) { AuditWorkers::get().post(std::move(job)); }

void start_audit_worker() { AuditWorkers::get().start_first(); }

unsigned audit_workers_started() { return AuditWorkers::get().started(); }

unsigned audit_workers_idle() { return AuditWorkers::get().idle(); }

}  // namespace paddock::manager
