#include "manager/audit_workers.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

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
    if (idle_ > 0) {
      wake_.notify_one();
      return;
    }
    if (started_ >= kMaxAuditWorkers) return;  // a busy worker takes it next
    try {
      // A new thread inherits this one's namespaces: every caller here is a loop thread at
      // home (the Manager enters a pooled network namespace only around a clone, never while
      // posting).
      std::thread([this] { run(); }).detach();
      ++started_;
    } catch (const std::system_error&) {
      if (started_ > 0) return;  // a worker exists: it takes the job when free
      // No thread to be had (a thread limit reached): the audit runs here, on the caller's
      // thread, rather than never (its loop would wait for it forever).
      auto stranded = std::move(jobs_.back());
      jobs_.pop_back();
      lock.unlock();
      stranded();
    }
  }

  unsigned started() {
    std::lock_guard lock(mutex_);
    return started_;
  }

 private:
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

unsigned audit_workers_started() { return AuditWorkers::get().started(); }

}  // namespace paddock::manager
