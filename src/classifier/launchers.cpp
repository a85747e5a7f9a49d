#include "classifier/launchers.hpp"

#include <algorithm>
#include <string_view>

#include "classifier/program_kinds.hpp"

namespace paddock::classifier {
namespace {

bool any_of(std::string_view w, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), w) != list.end();
}

// Short options in getopt style (`-dt NAME`, `-tNAME`): the index after them and their
// values. A letter not known to take a value is taken as a flag, so a word is never skipped
// as an option's value unless it is one (the command is never hidden that way).
struct Options {
  std::size_t next = 0;
  std::vector<std::pair<char, Word>> values;
  std::string flags;
};

Options short_options(const std::vector<Word>& w, std::size_t i, std::string_view valued) {
  Options o;
  while (i < w.size()) {
    const std::string& t = w[i].text;
    if (t == "--") {
      ++i;
      break;
    }
    if (w[i].dynamic || t.size() < 2 || t[0] != '-') break;
    ++i;
    for (std::size_t k = 1; k < t.size(); ++k) {
      if (valued.find(t[k]) == std::string_view::npos) {
        o.flags += t[k];
        continue;
      }
      if (k + 1 < t.size()) {
        o.values.push_back({t[k], Word{t.substr(k + 1), w[i - 1].dynamic, false, {}}});
      } else if (i < w.size()) {
        o.values.push_back({t[k], w[i++]});
      }
      break;
    }
  }
  o.next = i;
  return o;
}

// The positionals from i on, joined as one command line (tmux runs several as one).
Word joined(const std::vector<Word>& w, std::size_t i, std::size_t end) {
  Word out;
  for (; i < end; ++i) {
    out.text += (out.text.empty() ? "" : " ") + w[i].text;
    out.dynamic |= w[i].dynamic;
  }
  return out;
}

void tmux_commands(const std::vector<Word>& w, Launched& out);

// tmux takes a unique prefix of a command's name (`new-s`, `run-sh`, `send-k`): the commands
// that run or type something, by any prefix of theirs (ambiguous ones fail in tmux anyway).
std::string tmux_command_name(const std::string& given) {
  static constexpr std::string_view kRunning[] = {
      "new-session", "new-window",        "split-window",   "respawn-pane",   "respawn-window",
      "run-shell",   "pipe-pane",         "display-popup",  "send-keys",      "if-shell",
      "set-option",  "set-window-option", "source-file",    "load-buffer",    "paste-buffer",
      "set-buffer",  "set-hook",          "command-prompt", "confirm-before", "bind-key"};
  for (std::string_view full : kRunning) {
    if (given.size() >= 3 && full.starts_with(given)) return std::string(full);
  }
  return given;
}

void tmux(const std::vector<Word>& w, std::size_t start, Launched& out) {
  // tmux [-2CDlNuvV] [-c shell-command] [-f file] [-L name] [-S path] [-T features] cmd ...
  const Options global = short_options(w, start + 1, "cfLST");
  for (const auto& [letter, value] : global.values) {
    if (letter == 'c') out.scripts.push_back(value);  // run through the default shell
    if (letter == 'f') out.opaque = "tmux reads a configuration file, which may run commands";
  }
  // Commands separated by `;` (written `\;`), or by an argument that ends in `;`
  // (`'true;'`): tmux splits there too. Such an argument loses its `;`.
  std::vector<Word> split;
  for (std::size_t k = global.next; k < w.size(); ++k) {
    Word x = w[k];
    if (!x.dynamic && x.text.size() > 1 && x.text.ends_with(";") && !x.text.ends_with("\\;")) {
      x.text.pop_back();
      split.push_back(x);
      split.push_back(Word{";", false, false, {}});
    } else {
      split.push_back(x);
    }
  }
  tmux_commands(split, out);
}

void tmux_commands(const std::vector<Word>& w, Launched& out) {
  std::size_t i = 0;
  while (i < w.size()) {
    std::size_t end = i;
    while (end < w.size() && !(w[end].text == ";" && !w[end].dynamic)) ++end;
    const std::string cmd = tmux_command_name(w[i].text);
    if (w[i].dynamic) {
      out.opaque = "a tmux command known only at run time";
    } else if (any_of(cmd, {"new-session", "new", "new-window", "neww", "split-window", "splitw",
                            "respawn-pane", "respawnp", "respawn-window", "respawnw", "run-shell",
                            "run", "pipe-pane", "pipep", "display-popup", "popup"})) {
      std::string_view valued = "cet";
      if (cmd == "new-session" || cmd == "new") valued = "cefFnstxy";
      if (cmd == "new-window" || cmd == "neww") valued = "ceFnt";
      if (cmd == "split-window" || cmd == "splitw") valued = "ceFlpt";
      if (cmd == "run-shell" || cmd == "run") valued = "cdt";
      if (cmd == "pipe-pane" || cmd == "pipep") valued = "t";
      if (cmd == "display-popup" || cmd == "popup") valued = "cdehstTwxy";
      const Options o = short_options(w, i + 1, valued);
      if (o.next < end) out.scripts.push_back(joined(w, o.next, end));
    } else if (cmd == "send-keys" || cmd == "send") {
      // Keys typed into whatever runs in the pane (a shell): the text is a command line.
      const Options o = short_options(w, i + 1, "Nct");
      if (o.flags.find('H') != std::string::npos)
        out.opaque = "tmux send-keys -H types keys given in hexadecimal";
      if (o.next < end) out.scripts.push_back(joined(w, o.next, end));
    } else if (cmd == "if-shell" || cmd == "if") {
      const Options o = short_options(w, i + 1, "t");
      if (o.next < end) out.scripts.push_back(w[o.next]);
      if (o.next + 1 < end) out.opaque = "tmux if-shell runs tmux commands given as text";
    } else if (cmd == "load-buffer" || cmd == "loadb" || cmd == "paste-buffer" || cmd == "pasteb" ||
               cmd == "set-buffer" || cmd == "setb") {
      out.opaque = "tmux " + cmd + " puts text into a pane from a buffer";
    } else if (cmd == "set-option" || cmd == "set" || cmd == "set-window-option" || cmd == "setw") {
      for (std::size_t k = i + 1; k + 1 < end; ++k) {
        if (w[k].text == "default-command" || w[k].text == "default-shell")
          out.scripts.push_back(w[k + 1]);
      }
    } else {
      // Anything else that would run something later: given as text, not read here.
      for (std::size_t k = i; k < end; ++k) {
        if (any_of(w[k].text, {"run-shell", "run", "if-shell", "if", "new-window", "neww",
                               "split-window", "splitw", "respawn-pane", "send-keys", "send",
                               "source-file", "source", "set-hook", "pipe-pane", "popup",
                               "display-popup", "command-prompt", "confirm-before"}))
          out.opaque = "tmux " + cmd + " runs tmux commands given as text";
      }
    }
    i = end + 1;
  }
}

void screen(const std::vector<Word>& w, std::size_t start, Launched& out) {
  // -X sends a screen command to a session; anything but a plain quit or detach may type or
  // run text (stuff, exec, at, idle ...), wherever -X stands among the options.
  for (std::size_t i = start + 1; i < w.size(); ++i) {
    if (w[i].text.starts_with("-") && w[i].text.find('X') != std::string::npos &&
        !w[i].text.starts_with("--")) {
      std::optional<std::string> first;
      for (std::size_t k = i + 1; k < w.size() && !first; ++k) {
        if (!w[k].text.starts_with("-") || w[k].dynamic)
          first = w[k].text;
        else if (w[k].text == "-S" || w[k].text == "-p")
          ++k;  // their values
      }
      if (!first || (*first != "quit" && *first != "detach" && *first != "kill"))
        out.opaque = "screen -X sends a command to a session: " + first.value_or("");
      return;
    }
  }
  // screen [-dmS NAME ...] [CMD ARGS]; -X CMD sends a screen command to a running session.
  const Options o = short_options(w, start + 1, "cehpSsTtX");
  for (const auto& [letter, value] : o.values) {
    if (letter == 's') out.opaque = "screen -s names the shell it starts";
    if (letter == 'c') out.opaque = "screen reads a configuration file, which may run commands";
    if (letter == 'X') {
      if (any_of(value.text, {"stuff", "exec", "screen", "eval", "source", "bind", "register"}) ||
          value.dynamic) {
        out.opaque = "screen -X " + value.text + " runs or types what follows";
      }
      return;  // the rest are the screen command's arguments
    }
  }
  if (o.next < w.size()) out.argv_at = o.next;
}

// su [options] [-] [USER [ARG...]] and runuser (the same, or with -u USER a command of its
// own): -c CMD is a shell command line, and ARGs go to the user's shell (`su root -- -c CMD`),
// -s SHELL picks that shell.
void su(const std::vector<Word>& w, std::size_t start, Launched& out) {
  std::optional<Word> shell;
  bool direct = false;  // runuser -u USER CMD
  std::size_t i = start + 1;
  for (; i < w.size(); ++i) {
    const std::string& t = w[i].text;
    if (w[i].dynamic) {
      out.opaque = "an option known only at run time";
      return;
    }
    if (t == "--") {
      ++i;
      break;
    }
    if (t == "-" || !t.starts_with("-")) break;
    if (t.starts_with("--")) {
      const auto eq = t.find('=');
      const std::string name = t.substr(0, eq);
      std::optional<Word> value;
      const bool valued = name == "--command" || name == "--session-command" || name == "--shell" ||
                          name == "--user" || name == "--group" || name == "--supp-group" ||
                          name == "--whitelist-environment";
      if (valued && eq != std::string::npos) value = Word{t.substr(eq + 1), false, false, {}};
      if (valued && eq == std::string::npos && i + 1 < w.size()) value = w[++i];
      if (!value) continue;
      if (name == "--command" || name == "--session-command") out.scripts.push_back(*value);
      if (name == "--shell") shell = value;
      if (name == "--user") direct = true;
      continue;
    }
    for (std::size_t k = 1; k < t.size(); ++k) {
      if (std::string_view("csugGw").find(t[k]) == std::string_view::npos) continue;
      std::optional<Word> value;
      if (k + 1 < t.size()) {
        value = Word{t.substr(k + 1), false, false, {}};
      } else if (i + 1 < w.size()) {
        value = w[++i];
      }
      if (value && t[k] == 'c') out.scripts.push_back(*value);
      if (value && t[k] == 's') shell = value;
      if (t[k] == 'u') direct = true;
      break;
    }
  }
  if (i < w.size() && w[i].text == "-") ++i;
  if (shell) {
    const std::string& s = shell->text;
    if (shell->dynamic ||
        !is_shell(s.substr(s.rfind('/') == std::string::npos ? 0 : s.rfind('/') + 1)))
      out.opaque = "the shell it starts is " + s;
  }
  if (direct) {
    if (i < w.size()) out.argv_at = i;
    return;
  }
  // USER, then arguments for the user's shell: a shell command of their own.
  if (i + 1 < w.size()) {
    std::vector<Word> argv = {Word{"sh", false, false, {}}};
    for (std::size_t k = i + 1; k < w.size(); ++k) {
      if (w[k].text != "--" || w[k].dynamic) argv.push_back(w[k]);  // getopt's `--` is su's
    }
    out.argv = std::move(argv);
  }
}

}  // namespace

Launched launched_command(const std::vector<Word>& w, std::size_t start, const std::string& name) {
  Launched out;
  out.launcher = true;
  if (name == "tmux") {
    tmux(w, start, out);
  } else if (name == "screen") {
    screen(w, start, out);
  } else if (name == "su" || name == "runuser") {
    su(w, start, out);
  } else if (name == "dtach") {
    // dtach -A|-c|-n|-N SOCKET [-e CHAR] [-E] [-r METHOD] [-z] CMD ...; -a / -p: no command.
    const std::string& mode = start + 1 < w.size() ? w[start + 1].text : "";
    if (any_of(mode, {"-A", "-c", "-n", "-N"}) && start + 2 < w.size()) {
      const Options o = short_options(w, start + 3, "er");
      if (o.next < w.size()) out.argv_at = o.next;
    } else if (mode.size() > 2 && any_of(mode.substr(0, 2), {"-A", "-c", "-n", "-N"})) {
      const Options o = short_options(w, start + 2, "er");  // -n/tmp/s: the socket glued on
      if (o.next < w.size()) out.argv_at = o.next;
    } else if (w.size() > start + 1 && !any_of(mode, {"-a", "-p"}) && !mode.starts_with("-a") &&
               !mode.starts_with("-p")) {
      out.opaque = "dtach with a mode not read here: " + mode;
    }
  } else if (name == "daemonize") {
    const Options o = short_options(w, start + 1, "ceEoplu");
    if (o.next < w.size()) out.argv_at = o.next;
  } else if (name == "entr") {
    // entr [-acdnprsz] UTILITY ARGS; with -s, UTILITY is a shell command line.
    const Options o = short_options(w, start + 1, "");
    if (o.next < w.size()) {
      if (o.flags.find('s') != std::string::npos) {
        out.scripts.push_back(w[o.next]);
      } else {
        out.argv_at = o.next;
      }
    }
  } else if (name == "dbus-run-session") {
    std::size_t i = start + 1;
    while (i < w.size() && w[i].text.starts_with("--") && w[i].text != "--") {
      // --dbus-daemon BINARY runs BINARY: judged as a command of its own
      std::optional<Word> daemon;
      if (w[i].text.starts_with("--dbus-daemon="))
        daemon = Word{w[i].text.substr(14), w[i].dynamic, false, {}};
      if (w[i].text == "--dbus-daemon" && i + 1 < w.size()) daemon = w[i + 1];
      if (daemon) out.argv = std::vector<Word>{*daemon};
      if (w[i].text.find('=') == std::string::npos) ++i;  // --config-file FILE
      ++i;
    }
    if (i < w.size() && w[i].text == "--") ++i;
    if (i < w.size()) out.argv_at = i;
  } else if (name == "start-stop-daemon") {
    // --startas (-a) is what runs when given; else --exec (-x). Short options glue or bundle.
    std::optional<Word> exec, startas;
    std::size_t args = w.size();
    for (std::size_t i = start + 1; i < w.size(); ++i) {
      const std::string& t = w[i].text;
      if (t == "--") {
        args = i + 1;
        break;
      }
      if (w[i].dynamic) {
        out.opaque = "an option known only at run time";
        continue;
      }
      if (t.starts_with("--")) {
        for (std::string_view o : {"--exec", "--startas"}) {
          std::optional<Word> value;
          if (t == o && i + 1 < w.size()) value = w[i + 1];
          if (t.starts_with(std::string(o) + "="))
            value = Word{t.substr(o.size() + 1), false, false, {}};
          if (value) (o == "--exec" ? exec : startas) = value;
        }
        continue;
      }
      if (t.size() < 2 || t[0] != '-') continue;
      for (std::size_t k = 1; k < t.size(); ++k) {
        if (std::string_view("xapnucgrdNPIksRO").find(t[k]) == std::string_view::npos) continue;
        std::optional<Word> value;
        if (k + 1 < t.size()) {
          value = Word{t.substr(k + 1), false, false, {}};
        } else if (i + 1 < w.size()) {
          value = w[++i];
        }
        if (value && t[k] == 'x') exec = value;
        if (value && t[k] == 'a') startas = value;
        break;
      }
    }
    if (const auto& program = startas ? startas : exec) {
      std::vector<Word> argv = {*program};
      argv.insert(argv.end(), w.begin() + static_cast<std::ptrdiff_t>(args), w.end());
      out.argv = std::move(argv);
    }
  } else if (name == "firejail") {
    std::size_t i = start + 1;  // firejail [--option[=value]]... CMD ARGS
    while (i < w.size() && w[i].text.starts_with("-") && !w[i].dynamic && w[i].text != "--") ++i;
    if (i < w.size() && w[i].text == "--") ++i;
    if (i < w.size()) out.argv_at = i;
  } else if (name == "bwrap" || name == "bubblewrap") {
    out.opaque =
        "bwrap runs its command in a filesystem view of its own: paths there are not "
        "the ones written here";
  } else {
    out.launcher = false;
  }
  return out;
}

}  // namespace paddock::classifier
