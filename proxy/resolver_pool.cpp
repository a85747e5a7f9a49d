// The default Resolver: getaddrinfo on threads of its own. Hand-written rather than Asio's
// resolver, which runs every lookup of an io_context on one private thread (one slow DNS
// answer would stall every command's proxy), and rather than c-ares, whose answers would
// skip /etc/hosts and nsswitch, which the sandboxed tools expect to be honoured.
#include <netdb.h>
#include <sys/socket.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "paddock/network.hpp"

namespace paddock {
namespace {

class ThreadPoolResolver final : public Resolver,
                                 public std::enable_shared_from_this<ThreadPoolResolver> {
 public:
  ThreadPoolResolver(unsigned threads, std::size_t queue, std::chrono::milliseconds timeout)
      : max_queue_(queue), timeout_(timeout) {
    for (unsigned i = 0; i < std::max(1u, threads); ++i) workers_.emplace_back([this] { work(); });
    reaper_ = std::thread([this] { expire(); });
  }
  ~ThreadPoolResolver() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
    reaper_.join();
    for (auto& job : queue_) job->finish(std::make_error_code(std::errc::operation_canceled), {});
  }

  void resolve(const std::string& host, Done done) override {
    auto job = std::make_shared<Job>();
    job->host = host;
    job->done = std::move(done);
    job->deadline = std::chrono::steady_clock::now() + timeout_;
    {
      std::lock_guard lock(mutex_);
      if (queue_.size() >= max_queue_ || stopping_) {
        job->finish(std::make_error_code(std::errc::resource_unavailable_try_again), {});
        return;
      }
      queue_.push_back(job);
      pending_.push_back(job);
    }
    wake_.notify_all();
  }

 private:
  struct Job {
    std::string host;
    Done done;
    std::chrono::steady_clock::time_point deadline;
    std::mutex mutex;
    bool finished = false;
    bool is_finished() {
      std::lock_guard lock(mutex);
      return finished;
    }
    void finish(std::error_code ec, std::vector<asio::ip::address> out) {
      Done d;
      {
        std::lock_guard lock(mutex);
        if (finished) return;
        finished = true;
        d = std::move(done);
      }
      d(ec, std::move(out));
    }
  };

  void work() {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
        job = queue_.front();
        queue_.pop_front();
      }
      // Already answered (timed out while queued): no getaddrinfo for it. Otherwise a burst
      // of lookups against a dead DNS server would keep the workers busy long after every
      // asker gave up, starving the lookups that come later.
      if (job->is_finished()) continue;
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      hints.ai_flags = AI_ADDRCONFIG;
      addrinfo* res = nullptr;
      int rc = ::getaddrinfo(job->host.c_str(), nullptr, &hints, &res);
      std::vector<asio::ip::address> out;
      for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
        if (ai->ai_family == AF_INET) {
          auto* sin = reinterpret_cast<sockaddr_in*>(ai->ai_addr);
          out.push_back(asio::ip::address_v4(ntohl(sin->sin_addr.s_addr)));
        } else if (ai->ai_family == AF_INET6) {
          auto* sin6 = reinterpret_cast<sockaddr_in6*>(ai->ai_addr);
          asio::ip::address_v6::bytes_type b;
          std::copy(sin6->sin6_addr.s6_addr, sin6->sin6_addr.s6_addr + 16, b.begin());
          out.push_back(asio::ip::address_v6(b));
        }
      }
      if (res != nullptr) ::freeaddrinfo(res);
      std::error_code ec;
      if (rc != 0 || out.empty()) ec = std::make_error_code(std::errc::host_unreachable);
      job->finish(ec, std::move(out));
    }
  }

  // Answers lookups past their deadline with timed_out (getaddrinfo cannot be cancelled; the
  // worker's late answer is dropped by Job::finish).
  void expire() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, std::chrono::milliseconds(100));
      const auto now = std::chrono::steady_clock::now();
      std::vector<std::shared_ptr<Job>> late;
      for (auto it = pending_.begin(); it != pending_.end();) {
        auto job = it->lock();
        if (!job) {
          it = pending_.erase(it);
        } else if (job->deadline <= now) {
          late.push_back(std::move(job));
          it = pending_.erase(it);
        } else {
          ++it;
        }
      }
      if (!late.empty()) {
        std::erase_if(queue_, [now](const std::shared_ptr<Job>& j) { return j->deadline <= now; });
      }
      lock.unlock();
      for (auto& job : late) job->finish(std::make_error_code(std::errc::timed_out), {});
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::deque<std::weak_ptr<Job>> pending_;
  std::vector<std::thread> workers_;
  std::thread reaper_;
  bool stopping_ = false;
  std::size_t max_queue_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

std::shared_ptr<Resolver> make_thread_pool_resolver(unsigned threads, std::size_t queue,
                                                    std::chrono::milliseconds timeout) {
  return std::make_shared<ThreadPoolResolver>(threads, queue, timeout);
}

}  // namespace paddock
