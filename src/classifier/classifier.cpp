// The classifier: simple commands from the parser (shell_syntax.hpp) or an argv, through the
// wrappers that run another command (env, timeout, nice, xargs, sudo, busybox, find -exec,
// ...), into the shells that run a script (`sh -c`, a heredoc or pipe into a shell), against
// the rule table (rules.hpp). A script's decision is the strictest of its parts.
#include "paddock/classifier.hpp"

#include <algorithm>
#include <optional>
#include <string_view>

#include "classifier/rules.hpp"
#include "classifier/shell_syntax.hpp"

namespace paddock {
namespace {

using classifier::Args;
using classifier::ParsedScript;
using classifier::SimpleCommand;
using classifier::Word;

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
  for (std::string_view s : {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox-sh",
                             "fish", "tcsh", "csh", "yash", "posh"}) {
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

class Classifier {
 public:
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
    otherwise_default(v);
    record(c, v);
    return v;
  }

  void record(const SimpleCommand& c, const Verdict& v) {
    if (parts_.size() >= kClassifierMaxCommands) return;
    parts_.push_back(
        {c.source.empty() ? join_words(c.words) : c.source, v.decision, v.rule, v.reason});
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
    Args args;
    args.program = name;
    for (std::size_t i = start + 1; i < c.words.size(); ++i) {
      args.words.push_back(c.words[i].text);
      args.dynamic.push_back(c.words[i].dynamic);
    }

    // Wrappers: the command they run is classified as if given directly.
    if (auto next = wrapped_command(c, start, name, v)) {
      Verdict inner = argv_verdict(c, *next, depth + 1);
      raise(v, inner.decision, inner.rule, inner.reason);
      return v;
    }

    // Shells and interpreters: the script they run.
    if (is_shell(name)) {
      shell_verdict(c, start, depth, v);
    } else if (is_interpreter(name) && c.piped_in) {
      piped_program_verdict(c, name, v);
    }
    if (const classifier::Rule* r = classifier::match_rule(args, trusted_spelling(w0.text))) {
      raise(v, r->decision, r->name, r->reason);
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
    bool command_string = false;
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
      if (t[1] == '-') continue;  // --norc, --login, ...
      if ((t == "-o" || t == "+o" || t == "-O" || t == "+O") && i + 1 < c.words.size()) {
        ++i;
        continue;
      }
      if (t.find('c') != std::string::npos && t[0] == '-') command_string = true;
      if (t.find('s') != std::string::npos && t[0] == '-' && !command_string) {
        i = c.words.size();  // -s: the script is stdin; what follows is $1, $2, ...
        break;
      }
    }
    if (command_string) {
      if (i >= c.words.size()) return;  // `sh -c` alone fails
      Verdict inner = inner_script(c.words[i], depth, "a -c script");
      raise(v, inner.decision, inner.rule, inner.reason);
      return;
    }
    if (i < c.words.size()) {
      // A script file: its text is not the classifier's to see; the sandbox holds it.
      return;
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

  // If words[start] is a wrapper, the index of the command it runs, else nothing. Wrappers
  // that are decisions of their own (sudo) raise `v` on the way.
  std::optional<std::size_t> wrapped_command(const SimpleCommand& c, std::size_t start,
                                             const std::string& name, Verdict& v) {
    const auto& w = c.words;
    auto skip_options = [&](std::size_t i, std::initializer_list<std::string_view> with_value,
                            bool stop_at_assignment) {
      for (; i < w.size(); ++i) {
        const std::string& t = w[i].text;
        if (t == "--") return i + 1;
        if (stop_at_assignment && t.find('=') != std::string::npos && t[0] != '-') continue;
        if (t.size() < 2 || t[0] != '-') return i;
        if (std::find(with_value.begin(), with_value.end(), t) != with_value.end()) ++i;
      }
      return i;
    };
    if (name == "env") {
      // env -S "cmd args": the string is split into a command line.
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        const std::string& t = w[i].text;
        if (t == "-S" || t == "--split-string") {
          if (i + 1 < w.size()) {
            Verdict inner = inner_script(w[i + 1], 0, "an env -S string");
            raise(v, inner.decision, inner.rule, inner.reason);
          }
          return std::nullopt;
        }
        if (t.rfind("-S", 0) == 0 || t.rfind("--split-string=", 0) == 0) {
          Word rest{t.substr(t[1] == 'S' ? 2 : 15), w[i].dynamic, w[i].ifs};
          Verdict inner = inner_script(rest, 0, "an env -S string");
          raise(v, inner.decision, inner.rule, inner.reason);
          return std::nullopt;
        }
      }
      std::size_t i = skip_options(start + 1, {"-u", "--unset", "-C", "--chdir"}, true);
      if (i >= w.size()) return std::nullopt;  // prints the environment
      return i;
    }
    if (name == "sudo" || name == "doas" || name == "pkexec" || name == "run0") {
      raise(v, Decision::escalated, "privilege", "runs as another user (" + name + ")");
      std::size_t i = skip_options(start + 1,
                                   {"-u", "-g", "-h", "-p", "-C", "-D", "-R", "-T", "-U", "--user",
                                    "--group", "--host", "--prompt", "--chdir"},
                                   true);
      return i < w.size() ? std::optional<std::size_t>(i) : std::nullopt;
    }
    if (name == "timeout") {
      std::size_t i = skip_options(start + 1, {"-k", "--kill-after", "-s", "--signal"}, false);
      return i + 1 < w.size() ? std::optional<std::size_t>(i + 1) : std::nullopt;  // duration
    }
    if (name == "nice" || name == "ionice" || name == "chrt" || name == "stdbuf" ||
        name == "time" || name == "nohup" || name == "setsid" || name == "command" ||
        name == "builtin" || name == "exec" || name == "caffeinate" || name == "unbuffer" ||
        name == "nocorrect" || name == "noglob" || name == "taskset" || name == "prlimit" ||
        name == "flock" || name == "firejail" || name == "cgexec" || name == "numactl" ||
        name == "strace" || name == "ltrace" || name == "valgrind" || name == "catchsegv" ||
        name == "xvfb-run" || name == "faketime") {
      if (name == "command") {
        for (std::size_t i = start + 1; i < w.size() && w[i].text.starts_with("-"); ++i) {
          if (w[i].text.find_first_of("vV") != std::string::npos) return std::nullopt;  // lookup
        }
      }
      if (name == "nohup" || name == "setsid") {
        raise(v, Decision::escalated, "background-detach", "detaches a process (" + name + ")");
      }
      std::size_t i = skip_options(start + 1, {"-n",         "--adjustment",
                                               "-c",         "--class",
                                               "-p",         "--pid",
                                               "-i",         "-o",
                                               "-e",         "-u",
                                               "-f",         "-w",
                                               "-t",         "--pid",
                                               "-E",         "-w",
                                               "--cpu-list", "-g",
                                               "-a",         "--interleave",
                                               "--membind",  "--cpunodebind",
                                               "-l",         "-s"},
                                   false);
      // taskset MASK cmd, chrt PRIO cmd, flock FILE cmd, faketime TIME cmd: one positional.
      if ((name == "taskset" || name == "chrt" || name == "flock" || name == "faketime") &&
          i < w.size()) {
        ++i;
      }
      return i < w.size() ? std::optional<std::size_t>(i) : std::nullopt;
    }
    if (name == "xargs") {
      std::size_t i =
          skip_options(start + 1,
                       {"-I", "-i", "-L", "-l", "-n", "-P", "-s", "-d", "-E", "-e", "-a",
                        "--arg-file", "--delimiter", "--max-args", "--max-procs", "--replace"},
                       false);
      return i < w.size() ? std::optional<std::size_t>(i) : std::nullopt;  // default: echo
    }
    if (name == "busybox" || name == "toybox") {
      return start + 1 < w.size() ? std::optional<std::size_t>(start + 1) : std::nullopt;
    }
    if (name == "watch") {
      std::size_t i = skip_options(start + 1, {"-n", "--interval", "-d"}, false);
      if (i < w.size()) {
        std::string script;
        bool dynamic = false;
        for (std::size_t k = i; k < w.size(); ++k) {
          script += (k == i ? "" : " ") + w[k].text;
          dynamic |= w[k].dynamic;
        }
        Verdict inner = inner_script({script, dynamic, false}, 0, "a watch command");
        raise(v, inner.decision, inner.rule, inner.reason);
      }
      return std::nullopt;
    }
    if (name == "find") {
      // -exec / -execdir / -ok CMD ... ; : each runs a command per file.
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        const std::string& t = w[i].text;
        if (t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir") {
          SimpleCommand sub = c;
          sub.words.clear();
          for (std::size_t k = i + 1; k < w.size() && w[k].text != ";" && w[k].text != "+"; ++k)
            sub.words.push_back(w[k]);
          Verdict inner = argv_verdict(sub, 0, 1);
          raise(v, inner.decision, inner.rule, inner.reason);
        }
      }
      return std::nullopt;
    }
    return std::nullopt;
  }

  std::vector<ClassifiedPart> parts_;
};

}  // namespace

Classification classify_argv(const std::vector<std::string>& argv) {
  return Classifier().run_argv(argv);
}

Classification classify_script(const std::string& script) {
  return Classifier().run_script(script);
}

}  // namespace paddock
