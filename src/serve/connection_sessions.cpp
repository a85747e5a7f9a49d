// The session side of a Connection (paddock/session.hpp): `session_open` makes a sandbox that
// lives across this client's commands, an `exec` with "session" runs in it, `session_close`
// ends it (and so does the connection's end). Opening and closing block (a clone, a kill and
// an apply), so both run off the loop (Manager::async_open_session, Session::async_close).
#include <filesystem>

#include "paddock/errors.hpp"
#include "serve/connection.hpp"

namespace paddock::serve {

void Connection::open_session(Request& r) {
  if (shared_->draining.load()) {
    send(error_event(r.id, "E_MANAGER_CLOSED", "the daemon is draining: it starts nothing new",
                     "session_open"));
    return;
  }
  if (sessions_.count(r.key) != 0) {
    send(error_event(r.id, "E_CONFIG_INVALID", "duplicate id: a session with it is open",
                     "session_open"));
    return;
  }
  if (sessions_.size() >= shared_->limits.max_sessions_per_connection) {
    send(error_event(r.id, "E_OVERLOADED",
                     std::to_string(shared_->limits.max_sessions_per_connection) +
                         " sessions already open on this connection",
                     "session_open"));
    return;
  }
  SessionOptions options;
  if (r.exec.worktree) {
    // The repository and where the worktree goes, as a cwd would be: under a --root.
    WorktreeOptions& w = *r.exec.worktree;
    if (!shared_->roots.empty() && w.path.empty()) {
      send(error_event(r.id, "E_CONFIG_INVALID",
                       "worktree.path: required by a daemon with --root (under one of them)",
                       "session_open"));
      return;
    }
    for (std::string* where : {&w.repository, &w.path}) {
      if (where->empty()) continue;
      ExecRequest probe;
      const bool repo = where == &w.repository;
      // The worktree's path does not exist yet: its parent is what must be under a root.
      probe.cwd = repo ? *where : std::filesystem::path(*where).parent_path().string();
      if (auto why = cwd_refusal(probe)) {
        send(error_event(r.id, "E_CONFIG_INVALID",
                         std::string(repo ? "worktree.repository: " : "worktree.path: ") + *why,
                         "session_open"));
        return;
      }
      // The paths checked, not their spellings (links resolved once, here).
      if (probe.cwd) {
        *where = repo ? *probe.cwd
                      : *probe.cwd + "/" + std::filesystem::path(*where).filename().string();
      }
    }
    w.within = shared_->roots;
    options.worktree = std::move(w);
  } else {
    if (auto why = cwd_refusal(r.exec)) {
      send(error_event(r.id, "E_CONFIG_INVALID", *why, "session_open"));
      return;
    }
    options.cwd = r.exec.cwd;
  }
  options.policy = std::move(r.exec.policy);
  if (r.exec.idle_timeout) options.idle_timeout = *r.exec.idle_timeout;
  sessions_[r.key] = nullptr;  // taken while it opens
  shared_->manager.async_open_session(
      std::move(options),
      [self = shared_from_this(), id = r.id, key = r.key](
          std::error_code ec, std::shared_ptr<Session> session, std::string error) {
        asio::post(self->strand_, [self, id, key, ec, session = std::move(session),
                                   error = std::move(error)]() mutable {
          auto it = self->sessions_.find(key);
          if (self->closed_ || it == self->sessions_.end()) {
            if (session) session->async_close([](SessionSummary) {});  // nobody to use it
            return;
          }
          if (ec) {
            self->sessions_.erase(it);
            self->send(error_event(id, std::string(code_string(ec)), error, "session_open"));
            return;
          }
          it->second = session;
          self->log_line("info", {{"event", "session_opened"},
                                  {"session", id},
                                  {"pid", session->pid()},
                                  {"cwd", session->cwd()}});
          self->send(session_opened_event(id, session->pid(), session->cwd()));
        });
      });
}

void Connection::close_session(Request& r) {
  auto it = sessions_.find(r.key);
  if (it == sessions_.end() && r.id.is_string()) {
    const std::string name = r.id.get<std::string>();
    std::shared_ptr<Session> named;
    {
      std::lock_guard lock(shared_->mutex);
      if (auto n = shared_->named_sessions.find(name); n != shared_->named_sessions.end()) {
        named = std::move(n->second);
        shared_->named_sessions.erase(n);
      }
    }
    if (named) {
      named->async_close([self = shared_from_this(), id = r.id, name](SessionSummary summary) {
        asio::post(self->strand_, [self, id, name, summary = std::move(summary)] {
          if (!self->closed_) self->send(session_closed_event(id, summary));
          if (self->shared_->on_named_session_closed) {
            self->shared_->on_named_session_closed(name, summary);
          }
        });
      });
      return;
    }
  }
  if (it == sessions_.end() || !it->second) {
    send(error_event(r.id, "E_CONFIG_INVALID",
                     it == sessions_.end() ? "no session with this id on this connection"
                                           : "the session is still being opened",
                     "session_close"));
    return;
  }
  std::shared_ptr<Session> session = std::move(it->second);
  sessions_.erase(it);
  session->async_close([self = shared_from_this(), id = r.id](SessionSummary summary) {
    asio::post(self->strand_, [self, id, summary = std::move(summary)] {
      if (self->closed_) return;
      self->log_line("info", {{"event", "session_closed"},
                              {"session", id},
                              {"violations", summary.violations.size()}});
      self->send(session_closed_event(id, summary));
    });
  });
}

std::shared_ptr<Session> Connection::session_for(const ExecRequest& req,
                                                 std::string& refusal) const {
  if (!req.session) return nullptr;
  auto it = sessions_.find(*req.session);
  if (it == sessions_.end() && req.session->starts_with("s:")) {
    std::lock_guard lock(shared_->mutex);
    auto n = shared_->named_sessions.find(req.session->substr(2));
    if (n != shared_->named_sessions.end()) return n->second;
  }
  if (it == sessions_.end()) {
    refusal = "session: no session with this id on this connection";
  } else if (!it->second) {
    refusal = "session: still being opened (wait for its session_opened)";
  } else {
    return it->second;
  }
  return nullptr;
}

}  // namespace paddock::serve
