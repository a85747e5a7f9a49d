// The classifier: simple commands from the parser (shell_syntax.hpp) or an argv, through the
// wrappers that run another command (env, timeout, nice, xargs, sudo, busybox, find -exec,
// ...), into the shells that run a script (`sh -c`, a heredoc or pipe into a shell), against
// the rule table (rules.hpp). A script's decision is the strictest of its parts.
#include "paddock/classifier.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>

#include "classifier/rules.hpp"
#include "classifier/shell_syntax.hpp"
#include "classifier/wrappers.hpp"
#include "paddock/errors.hpp"
#include "sandbox/default_paths.hpp"

namespace paddock {
namespace {

using classifier::Args;
using classifier::ParsedScript;
using classifier::SimpleCommand;
using classifier::Word;
using classifier::wrapper_spec;
using classifier::WrapperSpec;

int rank(Decision d) { return static_cast<int>(d); }

std::string basename_of(std::string_view p) {
  const auto slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

// `./cat` or `/tmp/x/ls` may be anything: only a bare name (found on PATH) or a standard
// system directory earns an allow rule.
bool trusted_spelling(std::string_view p) {
  if (p.find('/') == std::string_view::npos) return true;
  for (std::string_view dir : {"/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/"}) {
    if (p.substr(0, dir.size()) == dir && p.find('/', dir.size()) == std::string_view::npos)
      return true;
  }
  return false;
}

bool is_shell(std::string_view name) {
  for (std::string_view s :
       {"sh",   "bash",  "dash", "zsh",   "ksh",    "mksh",  "ash",   "busybox-sh",
        "fish", "tcsh",  "csh",  "yash",  "posh",   "rbash", "ksh93", "pdksh",
        "oksh", "loksh", "lksh", "bash5", "elvish", "nu",    "xonsh"}) {
    if (name == s) return true;
  }
  return false;
}

bool is_interpreter(std::string_view name) {
  for (std::string_view s :
       {"python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "tclsh",
        "Rscript", "osascript", "pwsh", "deno", "bun"}) {
    if (name == s) return true;
  }
  return name.starts_with("python3.");
}

bool is_downloader(std::string_view name) {
  for (std::string_view s : {"curl", "wget", "fetch", "nc", "ncat", "netcat", "socat", "aria2c",
                             "http", "https", "lynx", "links"}) {
    if (name == s) return true;
  }
  return false;
}

bool is_decoder(std::string_view name) {
  for (std::string_view s : {"base64", "base32", "basenc", "xxd",     "uudecode", "openssl", "gzip",
                             "gunzip", "zcat",   "bzip2",  "bunzip2", "xz",       "unxz",    "zstd",
                             "rev",    "tr",     "perl",   "python",  "python3",  "od"}) {
    if (name == s) return true;
  }
  return false;
}

// A word that names a credential the sandbox denies by default (sandbox/default_paths.hpp, the
// one list): `~/.ssh/id_rsa`, `$HOME/.aws/credentials`, `--file=~/.netrc`, `@~/.npmrc`.
bool names_credential(const std::string& word) {
  std::string w = word;
  if (const auto eq = w.find('='); eq != std::string::npos && w.starts_with("-"))
    w.erase(0, eq + 1);
  if (w.starts_with("@")) w.erase(0, 1);
  for (std::string_view home : {"$HOME/", "${HOME}/"}) {
    if (w.starts_with(home)) w = "~/" + w.substr(home.size());
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && h[0] == '/' && h[1] != '\0') {
    const std::string prefix = std::string(h) + "/";
    if (w.starts_with(prefix)) w = "~/" + w.substr(prefix.size());
  }
  if (!w.starts_with("~/") && !w.starts_with("/etc/") && !w.starts_with("/run/")) return false;
  for (const auto& p : sandbox::default_credential_paths()) {
    if (::fnmatch(p.c_str(), w.c_str(), FNM_PATHNAME) == 0) return true;
    if (w.size() > p.size() && w.starts_with(p) && w[p.size()] == '/') return true;
  }
  return false;
}

// Empty until a rule speaks; then only ever stricter (the first rule at a level names it).
struct Verdict {
  Decision decision = Decision::allow;
  std::string rule;
  std::string reason;
};

void raise(Verdict& v, Decision d, std::string rule, std::string reason) {
  if (v.rule.empty() || rank(d) > rank(v.decision)) v = {d, std::move(rule), std::move(reason)};
}

void otherwise_default(Verdict& v) {
  if (v.rule.empty()) v = {Decision::sandboxed, "default", "no rule matched: runs in the sandbox"};
}

std::string join_words(const std::vector<Word>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += w.text;
  }
  return out;
}

// The rules that answer "this could not be seen through": never lifted by an override.
constexpr std::string_view kBoundRules[] = {"unanalysable", "analysis-bound", "dynamic-command",
                                            "dynamic-script", "script-from-pipe"};
// Rule names the classifier uses outside the table.
constexpr std::string_view kStructuralRules[] = {
    "fork-bomb",       "ifs-splitting",  "dev-tcp",
    "system-redirect", "pipe-to-shell",  "decoded-payload-to-shell",
    "background",      "privilege",      "background-detach",
    "assignment",      "wrapper-only",   "empty",
    "default",         "denied-program", "not-allowed-program",
    "credential-read", "writes-file",    "environment-injection",
    "deferred-code",   "dynamic-device", "inline-code"};

// The option that gives an interpreter its program text on the command line.
bool inline_code_option(std::string_view interpreter, std::string_view option) {
  if (interpreter.starts_with("python")) return option == "-c";
  if (interpreter == "node" || interpreter == "nodejs" || interpreter == "deno" ||
      interpreter == "bun") {
    return option == "-e" || option == "--eval" || option == "-p" || option == "--print";
  }
  if (interpreter == "php") return option == "-r";
  if (interpreter == "pwsh") return option == "-c" || option == "-Command";
  return option == "-e" || option == "-E";  // perl, ruby, lua, Rscript, osascript, tclsh
}

// Inline program text that starts processes, deletes, opens sockets or evaluates more code:
// the classifier cannot read another language, so such text is for a person to look at.
// Plain text (print(1), JSON handling) stays sandboxed.
const char* inline_code_danger(std::string_view code) {
  for (const char* marker :
       {"system(",    "system ",       "system{",    "exec",         "spawn",     "popen",
        "subprocess", "child_process", "import pty", "pty.",         "`",         "qx",
        "unlink",     "rmtree",        "rmSync",     "remove(",      "rmdir",     "socket",
        "Socket",     "eval",          "__import__", "shell_exec",   "passthru",  "proc_open",
        "Process(",   "Process.",      "Deno.run",   "Deno.Command", "Bun.spawn", "File.delete",
        "chmod",      "chown",         "kill("}) {
    if (code.find(marker) != std::string_view::npos) return marker;
  }
  return nullptr;
}

// A redirect that writes somewhere other than /dev/null or another descriptor (`2>&1`).
bool writes_a_file(const SimpleCommand& c) {
  return std::any_of(c.redirects.begin(), c.redirects.end(), [](const classifier::Redirect& r) {
    if (r.op.find('>') == std::string::npos) return false;
    const std::string& t = r.target.text;
    const bool descriptor = !t.empty() && (t == "-" || std::all_of(t.begin(), t.end(), [](char ch) {
                                             return ch >= '0' && ch <= '9';
                                           }));
    return !descriptor && t != "/dev/null";
  });
}

bool user_rule_matches(const CommandRule& r, const SimpleCommand& c, std::size_t start) {
  if (r.match.empty() || c.words.size() - start < r.match.size()) return false;
  for (std::size_t i = 0; i < r.match.size(); ++i) {
    const Word& w = c.words[start + i];
    if (r.match[i] == "*") continue;
    if (w.dynamic) return false;
    const std::string text = i == 0 ? basename_of(w.text) : w.text;
    if (text != (i == 0 ? basename_of(r.match[i]) : r.match[i])) return false;
  }
  return true;
}

// A word made by running commands (`$(curl URL)`, `<(wget -O- URL)`) whose commands fetch
// from the network: as a script, that is code nobody has read.
bool fetches_code(const Word& w) {
  if (!w.dynamic) return false;
  const ParsedScript inner = classifier::parse_script(w.text);
  return std::any_of(inner.commands.begin(), inner.commands.end(), [](const SimpleCommand& c) {
    return !c.words.empty() && !c.words[0].dynamic && is_downloader(basename_of(c.words[0].text));
  });
}

class Classifier {
 public:
  explicit Classifier(const CommandRules& custom) : custom_(custom) {}

  Classification run_script(const std::string& script) {
    Verdict v = script_verdict(script, 0);
    return finish(v);
  }

  Classification run_argv(const std::vector<std::string>& argv) {
    SimpleCommand c;
    for (const auto& a : argv) c.words.push_back({a, false, false});
    c.source = join_words(c.words);
    Verdict v = command_verdict(c, 0);
    return finish(v);
  }

 private:
  Classification finish(const Verdict& v) {
    Classification out;
    out.decision = v.decision;
    out.rule = v.rule;
    out.reason = v.reason;
    out.parts = std::move(parts_);
    return out;
  }

  Verdict script_verdict(const std::string& script, int depth) {
    Verdict v;
    if (depth > kClassifierMaxDepth) {
      raise(v, Decision::escalated, "analysis-bound",
            "nested deeper than " + std::to_string(kClassifierMaxDepth) +
                " shells or wrappers: not analysed");
      return v;
    }
    if (script.size() > kClassifierMaxScriptBytes) {
      raise(v, Decision::escalated, "analysis-bound",
            "script of " + std::to_string(script.size()) + " bytes, more than the " +
                std::to_string(kClassifierMaxScriptBytes) + " analysed");
      return v;
    }
    ParsedScript parsed = classifier::parse_script(script);
    for (const auto& problem : parsed.problems) {
      raise(v, Decision::escalated, "unanalysable", "the script " + problem);
    }
    if (parsed.commands.size() > kClassifierMaxCommands) {
      raise(v, Decision::escalated, "analysis-bound",
            std::to_string(parsed.commands.size()) + " commands, more than the " +
                std::to_string(kClassifierMaxCommands) + " analysed");
    }
    for (const auto& f : parsed.self_calling_functions) {
      raise(v, Decision::forbidden, "fork-bomb",
            "function " + (f.empty() ? std::string("(unnamed)") : f) +
                " calls itself: the shape of a fork bomb");
    }
    if (parsed.commands.empty() && parsed.problems.empty()) {
      raise(v, Decision::allow, "empty", "nothing to run");
    }
    for (const auto& c : parsed.commands) {
      Verdict part = command_verdict(c, depth);
      raise(v, part.decision, part.rule, part.reason);
    }
    otherwise_default(v);
    return v;
  }

  // The verdict for a script a command will run (`sh -c`, stdin of a shell): its own parts
  // are recorded too.
  Verdict inner_script(const Word& script, int depth, const char* how) {
    Verdict v;
    if (script.dynamic) {
      if (fetches_code(script)) {
        raise(v, Decision::forbidden, "pipe-to-shell",
              std::string("a shell runs ") + how + " fetched from the network: " + script.text);
        return v;
      }
      raise(v, Decision::escalated, "dynamic-script",
            std::string("a shell runs ") + how + " known only at run time: " + script.text);
      return v;
    }
    return script_verdict(script.text, depth + 1);
  }

  Verdict command_verdict(const SimpleCommand& c, int depth) {
    Verdict v;
    // Redirects: what this command writes, wherever the grammar hung the redirect.
    for (const auto& r : c.redirects) {
      if (r.target.text.find("/dev/tcp/") != std::string::npos ||
          r.target.text.find("/dev/udp/") != std::string::npos) {
        raise(v, Decision::forbidden, "dev-tcp",
              "opens a network connection through bash's /dev/tcp");
      }
      const bool writes = r.op.find('>') != std::string::npos;
      if (r.target.dynamic && r.target.text.find("/dev/") != std::string::npos) {
        raise(v, Decision::escalated, "dynamic-device",
              "a redirect to a device named at run time: " + r.target.text);
      }
      if (!writes || r.target.dynamic) continue;
      if (const char* why = classifier::forbidden_redirect_target(r.target.text)) {
        raise(v, Decision::forbidden, "system-redirect",
              std::string(why) + " (redirect to " + r.target.text + ")");
      }
    }
    for (const auto& w : c.words) {
      if (w.ifs) {
        raise(v, Decision::forbidden, "ifs-splitting",
              "uses $IFS to split words at run time (hides the command from review)");
      }
      if (w.text.find("/dev/tcp/") != std::string::npos ||
          w.text.find("/dev/udp/") != std::string::npos) {
        raise(v, Decision::forbidden, "dev-tcp",
              "opens a network connection through bash's /dev/tcp");
      }
    }
    if (c.background) {
      raise(v, Decision::escalated, "background", "runs in the background (&)");
    }
    if (c.words.empty()) {
      if (v.rule.empty()) raise(v, Decision::allow, "assignment", "only sets variables");
      record(c, v);
      return v;
    }
    Verdict inner = argv_verdict(c, 0, depth);
    raise(v, inner.decision, inner.rule, inner.reason);
    if (v.decision == Decision::allow && writes_a_file(c)) {
      v = {Decision::sandboxed, "writes-file", "writes a file through a redirect"};
    }
    if (!c.words.empty() && !c.words[0].dynamic && is_downloader(basename_of(c.words[0].text)) &&
        writes_a_file(c)) {
      raise(v, Decision::escalated, "download-to-file", "downloads into a file (a redirect)");
    }
    otherwise_default(v);
    record(c, v);
    return v;
  }

  void record(const SimpleCommand& c, const Verdict& v) {
    if (parts_.size() >= kClassifierMaxCommands) return;
    parts_.push_back(
        {c.source.empty() ? join_words(c.words) : c.source, v.decision, v.rule, v.reason});
  }

  // Variables that make the next program run something else: a library, a pager, an editor,
  // git configuration, a start-up file, the search path.
  static bool injecting_variable(std::string_view assignment) {
    return injects_code(assignment.substr(0, assignment.find('=')));
  }

  // Builtins that keep code for later (trap, alias, mapfile -C), and the bash array-subscript
  // evaluation in single quotes (`test -v 'a[$(cmd)]'`), which runs when the builtin does.
  void deferred_code(const SimpleCommand& c, std::size_t start, const std::string& name, int depth,
                     Verdict& v) {
    const auto& w = c.words;
    for (std::size_t i = start + 1; i < w.size(); ++i) {
      const std::string& t = w[i].text;
      if (t.find("[$(") != std::string::npos || t.find("[`") != std::string::npos) {
        raise(v, Decision::escalated, "deferred-code",
              name + " evaluates code in an array subscript: " + t);
      }
    }
    if (name == "trap") {
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        if (w[i].text.starts_with("-")) continue;
        Verdict inner = inner_script(w[i], depth, "a trap's code");
        raise(v, inner.decision, inner.rule, inner.reason);
        break;  // the rest are signal names
      }
    } else if (name == "alias") {
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        const auto eq = w[i].text.find('=');
        if (eq == std::string::npos) continue;
        Verdict inner =
            inner_script({w[i].text.substr(eq + 1), w[i].dynamic, w[i].ifs}, depth, "an alias");
        raise(v, inner.decision, inner.rule, inner.reason);
      }
    } else if (name == "mapfile" || name == "readarray") {
      for (std::size_t i = start + 1; i + 1 < w.size(); ++i) {
        if (w[i].text == "-C") {
          Verdict inner = inner_script(w[i + 1], depth, "a mapfile callback");
          raise(v, inner.decision, inner.rule, inner.reason);
        }
      }
    } else if (name == "export" || name == "declare" || name == "typeset" || name == "readonly" ||
               name == "local") {
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        if (injecting_variable(w[i].text) && w[i].text.find('=') != std::string::npos) {
          raise(v, Decision::escalated, "environment-injection",
                "sets a variable that makes programs run something else: " + w[i].text);
        }
      }
    }
  }

  // The words of `c` from `start` on are a command line (argv[0] at start).
  Verdict argv_verdict(const SimpleCommand& c, std::size_t start, int depth) {
    Verdict v;
    if (depth > kClassifierMaxDepth) {
      raise(v, Decision::escalated, "analysis-bound", "wrappers nested too deep: not analysed");
      return v;
    }
    if (start >= c.words.size()) {
      raise(v, Decision::allow, "wrapper-only", "a wrapper with no command");
      return v;
    }
    const Word& w0 = c.words[start];
    if (w0.dynamic) {
      raise(v, Decision::escalated, "dynamic-command",
            "the command's name is known only at run time: " + w0.text);
      return v;
    }
    const std::string name = basename_of(w0.text);
    if (start == 0) {
      for (const auto& a : c.assignments) {
        if (injecting_variable(a)) {
          raise(v, Decision::escalated, "environment-injection",
                "runs with a variable that makes it run something else: " + a);
        }
      }
    }
    deferred_code(c, start, name, depth, v);
    Args args;
    args.program = name;
    for (std::size_t i = start + 1; i < c.words.size(); ++i) {
      args.words.push_back(c.words[i].text);
      args.dynamic.push_back(c.words[i].dynamic);
    }

    // Wrappers: the command they run is classified as if given directly.
    if (auto next = wrapped_command(c, start, name, v, depth)) {
      for (std::size_t at : *next) {
        Verdict inner = argv_verdict(c, at, depth + 1);
        raise(v, inner.decision, inner.rule, inner.reason);
      }
      if (next->empty() && v.rule.empty()) {
        raise(v, Decision::allow, "wrapper-only", "a wrapper with no command");
      }
      return v;
    }

    // Shells and interpreters: the script they run.
    if (is_shell(name)) {
      shell_verdict(c, start, depth, v);
    } else if (is_interpreter(name) && c.piped_in) {
      piped_program_verdict(c, name, v);
    }
    if (is_interpreter(name)) {
      for (std::size_t i = start + 1; i + 1 < c.words.size(); ++i) {
        if (!inline_code_option(name, c.words[i].text)) continue;
        const Word& code = c.words[i + 1];
        if (code.dynamic) {
          raise(v, Decision::escalated, "inline-code",
                name + " runs program text known only at run time: " + code.text);
        } else if (const char* marker = inline_code_danger(code.text)) {
          raise(v, Decision::escalated, "inline-code",
                name + " runs inline code that uses '" + marker +
                    "' (starts processes, deletes, connects or evaluates more code)");
        }
        break;
      }
      // `python -m pip install x` is `pip install x`.
      if (name.starts_with("python") && start + 2 < c.words.size() &&
          c.words[start + 1].text == "-m" && !c.words[start + 2].dynamic) {
        SimpleCommand module = c;
        module.words.erase(module.words.begin() + static_cast<std::ptrdiff_t>(start),
                           module.words.begin() + static_cast<std::ptrdiff_t>(start) + 2);
        Verdict inner = argv_verdict(module, start, depth + 1);
        raise(v, inner.decision, inner.rule, inner.reason);
      }
    }
    if (is_interpreter(name) || name == "source" || name == "." || name == "eval") {
      for (std::size_t i = start + 1; i < c.words.size(); ++i) {
        if (fetches_code(c.words[i])) {
          raise(v, Decision::forbidden, "pipe-to-shell",
                name + " runs code fetched from the network: " + c.words[i].text);
        }
      }
      for (const auto& r : c.redirects) {
        if (r.op == "<" && fetches_code(r.target)) {
          raise(v, Decision::forbidden, "pipe-to-shell",
                name + " runs code fetched from the network: " + r.target.text);
        }
      }
    }
    for (std::size_t i = start + 1; i < c.words.size(); ++i) {
      if (names_credential(c.words[i].text)) {  // a dynamic word's text: `$HOME/.netrc`
        raise(v, Decision::escalated, "credential-read",
              "names a credential the sandbox hides: " + c.words[i].text);
      }
    }
    const Verdict own = own_verdict(c, start, args, trusted_spelling(w0.text));
    if (!own.rule.empty()) {
      // What nested scripts and wrappers decided (v) stays; the command's own verdict may be
      // weaker than the built-in one only through a user rule.
      if (v.rule.empty() || rank(own.decision) > rank(v.decision)) v = own;
    }
    otherwise_default(v);
    return v;
  }

  void piped_program_verdict(const SimpleCommand& c, const std::string& name, Verdict& v) {
    for (const auto& up : c.upstream) {
      if (is_downloader(up)) {
        raise(v, Decision::forbidden, "pipe-to-shell",
              up + " piped into " + name + ": runs code fetched from the network");
      } else if (is_decoder(up)) {
        raise(v, Decision::forbidden, "decoded-payload-to-shell",
              up + " piped into " + name + ": runs an encoded payload nobody can review");
      }
    }
  }

  void shell_verdict(const SimpleCommand& c, std::size_t start, int depth, Verdict& v) {
    const std::string name = basename_of(c.words[start].text);
    // Options up to the script: `-c`, `-lc`, `-xec`, `-l -c`, `--norc -c`, `-o pipefail -c`.
    bool command_string = false, stdin_script = false;
    std::size_t i = start + 1;
    for (; i < c.words.size(); ++i) {
      const Word& w = c.words[i];
      if (w.dynamic) break;
      const std::string& t = w.text;
      if (t == "--" || t == "-") {
        ++i;
        break;
      }
      if (t.size() < 2 || (t[0] != '-' && t[0] != '+')) break;
      if (t == "--rcfile" || t == "--init-file") {  // their value is a file, not the script
        ++i;
        continue;
      }
      if (t[1] == '-') continue;  // --norc, --login, ...
      if ((t == "-o" || t == "+o" || t == "-O" || t == "+O") && i + 1 < c.words.size()) {
        ++i;
        continue;
      }
      if (t.find('c') != std::string::npos && t[0] == '-') command_string = true;
      if (t.find('s') != std::string::npos && t[0] == '-') stdin_script = true;
    }
    // -c wins over -s (bash); -s alone: the script is stdin, what follows is $1, $2, ...
    if (stdin_script && !command_string) i = c.words.size();
    // A script file that is stdin itself.
    if (!command_string && i < c.words.size() && !c.words[i].dynamic) {
      const std::string& f = c.words[i].text;
      if (f == "/dev/stdin" || f == "/dev/fd/0" || f == "/proc/self/fd/0" ||
          f == "/proc/thread-self/fd/0") {
        i = c.words.size();
      }
    }
    if (command_string) {
      if (i >= c.words.size()) return;  // `sh -c` alone fails
      Verdict inner = inner_script(c.words[i], depth, "a -c script");
      raise(v, inner.decision, inner.rule, inner.reason);
      return;
    }
    if (i < c.words.size()) {
      // A script file: its text is not the classifier's to see; the sandbox holds it. One
      // made by a command (`bash <(curl URL)`) is that command's output.
      if (c.words[i].dynamic) {
        Verdict inner = inner_script(c.words[i], depth, "a script made by a command");
        raise(v, inner.decision, inner.rule, inner.reason);
      }
      return;
    }
    for (const auto& r : c.redirects) {
      if (r.op == "<" && r.target.dynamic) {  // sh < <(curl URL)
        Verdict inner = inner_script(r.target, depth, "its stdin, made by a command");
        raise(v, inner.decision, inner.rule, inner.reason);
      }
    }
    // No script argument: the shell runs its stdin.
    piped_program_verdict(c, name, v);
    for (const auto& text : c.stdin_texts) {
      Verdict inner = inner_script(text, depth, "text fed to its stdin");
      raise(v, inner.decision, inner.rule, inner.reason);
    }
    if (c.piped_in && c.stdin_texts.empty()) {
      raise(v, Decision::escalated, "script-from-pipe",
            name + " runs what an earlier stage of the pipeline prints: not analysable");
    }
  }

  // If words[start] is a wrapper, where the command it runs may start (several places when an
  // option's meaning is not known: each is classified and the strictest counts), else
  // nothing. Wrappers that are decisions of their own (sudo) raise `v` on the way.
  std::optional<std::vector<std::size_t>> wrapped_command(const SimpleCommand& c, std::size_t start,
                                                          const std::string& name, Verdict& v,
                                                          int depth) {
    const auto& w = c.words;
    if (name == "find" || name == "fd" || name == "fdfind") {
      // -exec / -execdir / -ok CMD ... ; (find), -x / -X / --exec CMD (fd): per file.
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        const std::string& t = w[i].text;
        if (t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir" || t == "-x" ||
            t == "-X" || t == "--exec" || t == "--exec-batch") {
          SimpleCommand sub = c;
          sub.words.clear();
          for (std::size_t k = i + 1; k < w.size() && w[k].text != ";" && w[k].text != "+"; ++k)
            sub.words.push_back(w[k]);
          Verdict inner = argv_verdict(sub, 0, depth + 1);
          raise(v, inner.decision, inner.rule, inner.reason);
        }
      }
      return std::nullopt;  // find's own rules still apply
    }
    if (name == "cmake" && start + 2 < w.size() && w[start + 1].text == "-E") {
      // cmake -E rm -rf PATH, cmake -E remove_directory PATH: its own rm.
      const std::string& tool = w[start + 2].text;
      if (tool == "rm" || tool == "remove" || tool == "remove_directory") {
        SimpleCommand as_rm = c;
        as_rm.words.assign(w.begin() + static_cast<std::ptrdiff_t>(start + 2), w.end());
        as_rm.words[0].text = "rm";
        if (tool == "remove_directory")
          as_rm.words.insert(as_rm.words.begin() + 1, {"-r", false, false});
        Verdict inner = argv_verdict(as_rm, 0, depth + 1);
        raise(v, inner.decision, inner.rule, inner.reason);
      }
      return std::nullopt;
    }
    const WrapperSpec* spec = wrapper_spec(name);
    if (spec == nullptr) {
      // `uv run CMD`, `bundle exec CMD`, `npm exec -- CMD`, `npx CMD`, ...
      const std::string sub = start + 1 < w.size() ? w[start + 1].text : "";
      const bool runner =
          (name == "npx" || name == "pnpx" || name == "bunx") ||
          ((name == "uv" || name == "poetry" || name == "pipenv" || name == "conda" ||
            name == "mamba" || name == "pixi" || name == "hatch" || name == "pdm") &&
           sub == "run") ||
          ((name == "bundle" || name == "npm" || name == "pnpm" || name == "yarn" ||
            name == "bun") &&
           (sub == "exec" || sub == "x" || sub == "dlx"));
      if (!runner) return std::nullopt;
      const std::size_t from =
          name == "npx" || name == "pnpx" || name == "bunx" ? start + 1 : start + 2;
      return starts_after_options(w, from, {}, {}, 0, true);
    }
    if (spec->escalates != nullptr) {
      raise(v, Decision::escalated, spec->escalates, std::string(spec->why) + " (" + name + ")");
    }
    // Options that carry a script of their own.
    for (std::size_t i = start + 1; i < w.size(); ++i) {
      const std::string& t = w[i].text;
      if (t == "--") break;
      // flock FILE -c CMD: its -c may follow the positional.
      if ((t.size() < 2 || t[0] != '-') && name != "flock") break;
      const bool split = name == "env" && t[1] != '-' && t.find('S') != std::string::npos;
      const bool script_opt =
          (name == "flock" || name == "script") && (t == "-c" || t == "--command");
      if (split || script_opt || t == "--split-string" || t.starts_with("--split-string=")) {
        Word code;
        const auto s = t.find('S');
        if (split && s + 1 < t.size()) {
          code = {t.substr(s + 1), w[i].dynamic, w[i].ifs};
        } else if (t.starts_with("--split-string=")) {
          code = {t.substr(15), w[i].dynamic, w[i].ifs};
        } else if (i + 1 < w.size()) {
          code = w[i + 1];
        }
        Verdict inner = inner_script(code, depth, "a script given to an option");
        raise(v, inner.decision, inner.rule, inner.reason);
        if (name == "env") return std::vector<std::size_t>{};
      }
    }
    if (name == "command") {
      for (std::size_t i = start + 1; i < w.size() && w[i].text.starts_with("-"); ++i) {
        if (w[i].text.find_first_of("vV") != std::string::npos) return std::vector<std::size_t>{};
      }
    }
    if (name == "hyperfine" || name == "watch") {
      // Every positional (hyperfine) or the rest joined (watch) is a shell command line.
      std::vector<std::size_t> none;
      std::vector<std::size_t> at =
          starts_after_options(w, start + 1, spec->values, spec->flags, 0, false);
      std::string joined;
      bool dynamic = false;
      for (std::size_t k = at.empty() ? w.size() : at.front(); k < w.size(); ++k) {
        if (name == "hyperfine") {
          Verdict inner = inner_script(w[k], depth, "a benchmarked command");
          raise(v, inner.decision, inner.rule, inner.reason);
        }
        joined += (joined.empty() ? "" : " ") + w[k].text;
        dynamic |= w[k].dynamic;
      }
      if (name == "watch" && !joined.empty()) {
        Verdict inner = inner_script({joined, dynamic, false}, depth, "a watched command");
        raise(v, inner.decision, inner.rule, inner.reason);
      }
      return none;
    }
    return starts_after_options(w, start + 1, spec->values, spec->flags, spec->positionals,
                                spec->assignments);
  }

  // Where a command may start after a wrapper's options: known flags take one word, known
  // valued options two, `--opt=value` one; an unknown option could be either, so both are
  // followed (at most 8 places). Then `positionals` words of the wrapper's own (a duration,
  // a user, a file).
  static std::vector<std::size_t> starts_after_options(const std::vector<Word>& w, std::size_t i,
                                                       const std::vector<std::string_view>& values,
                                                       const std::vector<std::string_view>& flags,
                                                       int positionals, bool assignments) {
    std::vector<std::size_t> out;
    std::vector<std::size_t> todo = {i};
    while (!todo.empty() && out.size() < 8) {
      std::size_t k = todo.back();
      todo.pop_back();
      bool done = false;
      while (k < w.size() && !done) {
        const std::string& t = w[k].text;
        if (t == "--") {
          ++k;
          done = true;
        } else if (std::find(values.begin(), values.end(), t) != values.end()) {
          k += 2;
        } else if (std::find(flags.begin(), flags.end(), t) != flags.end()) {
          ++k;  // `env -` among them
        } else if (assignments && t.find('=') != std::string::npos && t[0] != '-') {
          ++k;
        } else if (t.size() < 2 || t[0] != '-' || w[k].dynamic) {
          done = true;
        } else if (t.find('=') != std::string::npos || (t[1] >= '0' && t[1] <= '9')) {
          ++k;
        } else {
          todo.push_back(k + 2);  // perhaps it takes a value
          ++k;
        }
      }
      k += static_cast<std::size_t>(positionals);
      if (k < w.size() && std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    }
    return out;
  }

  // Every verdict goes through here: an override names the rule's decision.
  void raise(Verdict& v, Decision d, std::string rule, std::string reason) const {
    if (auto it = custom_.overrides.find(rule); it != custom_.overrides.end()) {
      d = custom_.stricter_only && rank(it->second) < rank(d) ? d : it->second;
    }
    ::paddock::raise(v, d, std::move(rule), std::move(reason));
  }

  // The command's own classification: the built-in rule for its program, the lists, then
  // the first user rule (which never lifts a built-in forbidden).
  Verdict own_verdict(const SimpleCommand& c, std::size_t start, const Args& args,
                      bool trusted) const {
    Verdict own;
    if (const classifier::Rule* r = classifier::match_rule(args, trusted)) {
      raise(own, r->decision, r->name, r->reason);
    }
    const auto listed = [&](const std::vector<std::string>& list) {
      return std::find(list.begin(), list.end(), args.program) != list.end();
    };
    if (listed(custom_.deny_programs)) {
      raise(own, Decision::forbidden, "denied-program",
            args.program + " is on the settings' denyPrograms list");
    }
    if (!custom_.allow_programs.empty() && !listed(custom_.allow_programs)) {
      raise(own, Decision::escalated, "not-allowed-program",
            args.program + " is not on the settings' allowPrograms list");
    }
    for (std::size_t i = 0; i < custom_.rules.size(); ++i) {
      const CommandRule& u = custom_.rules[i];
      if (!user_rule_matches(u, c, start)) continue;
      if (own.decision == Decision::forbidden && !own.rule.empty()) break;
      const Decision current = own.rule.empty() ? Decision::sandboxed : own.decision;
      if (custom_.stricter_only && rank(u.decision) <= rank(current)) break;
      own = {u.decision, "user:" + std::to_string(i),
             u.description.empty() ? "a rule of the settings' commands section" : u.description};
      break;
    }
    return own;
  }

  const CommandRules& custom_;
  std::vector<ClassifiedPart> parts_;
};

}  // namespace

Classification classify_argv(const std::vector<std::string>& argv, const CommandRules& rules) {
  return Classifier(rules).run_argv(argv);
}

Classification classify_script(const std::string& script, const CommandRules& rules) {
  return Classifier(rules).run_script(script);
}

std::vector<std::string> classifier_rule_names() {
  std::vector<std::string> names;
  for (const auto& r : classifier::rules()) names.emplace_back(r.name);
  for (auto n : kStructuralRules) names.emplace_back(n);
  for (auto n : kBoundRules) names.emplace_back(n);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

void validate(const CommandRules& rules, const std::string& where) {
  auto bad = [&](const std::string& field, const std::string& why) {
    throw Error(errc::config_invalid, where + "." + field + ": " + why);
  };
  for (std::size_t i = 0; i < rules.rules.size(); ++i) {
    const auto& m = rules.rules[i].match;
    const std::string field = "rules[" + std::to_string(i) + "].match";
    if (m.empty()) bad(field, "empty: a rule must name at least the program");
    if (m[0] == "*") bad(field, "the program may not be \"*\" (name it)");
    for (const auto& w : m) {
      if (w.empty()) bad(field, "an empty word");
    }
  }
  const std::vector<std::string> known = classifier_rule_names();
  for (const auto& [name, decision] : rules.overrides) {
    if (std::find(std::begin(kBoundRules), std::end(kBoundRules), name) != std::end(kBoundRules)) {
      bad("overrides." + name,
          "cannot be overridden: what the classifier cannot see through is never allow");
    }
    if (!std::binary_search(known.begin(), known.end(), name)) {
      bad("overrides." + name,
          "no built-in rule has this name (paddock check --json names "
          "the rule that decided a command)");
    }
  }
  for (const auto* list : {&rules.allow_programs, &rules.deny_programs}) {
    for (const auto& p : *list) {
      if (p.empty() || p.find('/') != std::string::npos) {
        bad(list == &rules.allow_programs ? "allowPrograms" : "denyPrograms",
            "\"" + p + "\": a program's basename, not a path");
      }
    }
  }
}

bool injects_code(std::string_view name) {
  static constexpr std::string_view kNames[] = {"LD_PRELOAD",
                                                "LD_LIBRARY_PATH",
                                                "LD_AUDIT",
                                                "BASH_ENV",
                                                "ENV",
                                                "PATH",
                                                "PROMPT_COMMAND",
                                                "GIT_CONFIG_PARAMETERS",
                                                "GIT_CONFIG_COUNT",
                                                "GIT_EXTERNAL_DIFF",
                                                "GIT_PAGER",
                                                "PAGER",
                                                "GIT_EDITOR",
                                                "EDITOR",
                                                "VISUAL",
                                                "GIT_SSH_COMMAND",
                                                "GIT_SSH",
                                                "GIT_ASKPASS",
                                                "SSH_ASKPASS",
                                                "GIT_EXEC_PATH",
                                                "GIT_TEMPLATE_DIR",
                                                "NODE_OPTIONS",
                                                "PERL5OPT",
                                                "RUBYOPT",
                                                "PYTHONSTARTUP",
                                                "PYTHONPATH",
                                                "GIT_PROXY_COMMAND",
                                                "LESSOPEN",
                                                "MANPAGER",
                                                "BROWSER",
                                                "GIT_SEQUENCE_EDITOR",
                                                "SHELLOPTS",
                                                "BASHOPTS",
                                                "IFS"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames) ||
         name.starts_with("GIT_CONFIG_KEY_") || name.starts_with("GIT_CONFIG_VALUE_") ||
         name.starts_with("LD_") || name.starts_with("BASH_FUNC_");
}

}  // namespace paddock
