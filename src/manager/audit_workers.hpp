// Where post-run audits run: worker threads for the whole process, off every event loop; the
// first started with the first Manager, a second when an audit finds none idle (at most
// kMaxAuditWorkers), never stopped. Not fork-safe (as Asio's pool was not): a child forked
// after a worker exists has the counts without the threads.
//
// Hand-written rather than an Asio thread_pool, which starts all its threads up front: a
// one-shot `paddock run` has one audit, and two threads made and torn down for it were about
// 4% of its whole run when this was measured. No descriptors are opened (a pool's scheduler may),
// so a first audit mid-run changes nothing a descriptor count sees.
#pragma once

#include <functional>

namespace paddock::manager {

inline constexpr unsigned kMaxAuditWorkers = 2;

// Starts the first worker if there is none; throws Error(dependency_missing) when no thread can
// be made. A Manager calls it when it is made, so a thread limit reached later (a command's
// fork bomb in a shared cgroup) can never put an audit on an event loop.
void start_audit_worker();

// Runs `job` on an audit worker. The job releases what it holds itself (its last action);
// the emptied callable is destroyed on the worker afterwards.
void post_audit(std::function<void()> job);

// Worker threads started so far, and those waiting for a job (tests).
unsigned audit_workers_started();
unsigned audit_workers_idle();

}  // namespace paddock::manager
