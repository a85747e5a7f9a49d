// Programs that start a command and let it outlive them, or run it elsewhere on their own
// terms: terminal multiplexers (tmux, screen), detachers (dtach, daemonize,
// start-stop-daemon), watchers (entr), session and sandbox launchers (dbus-run-session,
// bwrap). Their command lines are not a plain "options then argv" (tmux takes shell
// commands, send-keys types text into a shell, bwrap options take two or three values), so
// each is read here; what cannot be read is said to be opaque rather than guessed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "classifier/shell_syntax.hpp"

namespace paddock::classifier {

struct Launched {
  bool launcher = false;                  // `name` is one of these programs
  std::vector<Word> scripts;              // shell command lines it runs (or types)
  std::optional<std::size_t> argv_at;     // the argv it runs starts at this word
  std::optional<std::vector<Word>> argv;  // ... or is this (start-stop-daemon --exec X -- A)
  std::optional<std::string> opaque;      // what it runs cannot be read: why
};

// What the program at words[start] (basename `name`) runs.
Launched launched_command(const std::vector<Word>& words, std::size_t start,
                          const std::string& name);

}  // namespace paddock::classifier
