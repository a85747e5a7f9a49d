// Where post-run audits run: worker threads for the whole process, off every event loop,
// started when an audit finds none idle (at most kMaxAuditWorkers), never stopped.
//
// Hand-written rather than an Asio thread_pool, which starts all its threads up front: a
// one-shot `paddock run` has one audit, and two threads made and torn down for it were about
// 4% of its whole run (bench/README.md). No descriptors are opened (a pool's scheduler may),
// so a first audit mid-run changes nothing a descriptor count sees.
#pragma once

#include <functional>

namespace paddock::manager {

inline constexpr unsigned kMaxAuditWorkers = 2;

// Runs `job` on an audit worker. The job releases what it holds itself (its last action);
// the emptied callable is destroyed on the worker afterwards.
void post_audit(std::function<void()> job);

// Worker threads started so far (tests).
unsigned audit_workers_started();

}  // namespace paddock::manager
