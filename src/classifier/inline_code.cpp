#include "classifier/inline_code.hpp"

#include <tree_sitter/api.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

extern "C" const TSLanguage* tree_sitter_python(void);
extern "C" const TSLanguage* tree_sitter_javascript(void);

namespace paddock::classifier {
namespace {

constexpr int kMaxDepth = 4;      // exec("exec('...')") re-read at most this deep
constexpr int kMaxNesting = 256;  // of the syntax tree
constexpr std::uint64_t kParseMicros = 200'000;

struct ParserDelete {
  void operator()(TSParser* p) const noexcept { ts_parser_delete(p); }
};
struct TreeDelete {
  void operator()(TSTree* t) const noexcept { ts_tree_delete(t); }
};

TSParser* parser_for(const TSLanguage* lang) {
  thread_local std::unique_ptr<TSParser, ParserDelete> python, javascript;
  auto& slot = lang == tree_sitter_python() ? python : javascript;
  if (!slot) {
    slot.reset(ts_parser_new());
    ts_parser_set_language(slot.get(), lang);
    ts_parser_set_timeout_micros(slot.get(), kParseMicros);
  }
  return slot.get();
}

bool is(TSNode n, const char* type) { return std::strcmp(ts_node_type(n), type) == 0; }

class Reader {
 public:
  Reader(std::string_view src, bool python, int depth)
      : src_(src), python_(python), depth_(depth) {}

  Findings run() {
    TSParser* p = parser_for(python_ ? tree_sitter_python() : tree_sitter_javascript());
    ts_parser_reset(p);
    std::unique_ptr<TSTree, TreeDelete> tree(
        ts_parser_parse_string(p, nullptr, src_.data(), static_cast<std::uint32_t>(src_.size())));
    if (!tree) {
      out_.push_back({Finding::Kind::opaque, "code the parser gave up on"});
      return out_;
    }
    visit(ts_tree_root_node(tree.get()), false, 0);
    const std::string_view t = src_;
    const bool socket = t.find("socket") != t.npos || t.find("net.Socket") != t.npos ||
                        t.find("net.connect") != t.npos || t.find("createConnection") != t.npos;
    const bool shell_io = t.find("dup2") != t.npos || t.find("pty.spawn") != t.npos ||
                          t.find("/bin/sh") != t.npos || t.find("/bin/bash") != t.npos ||
                          t.find(".pipe(") != t.npos;
    if (socket && shell_io) out_.push_back({Finding::Kind::reverse_shell, "a socket and a shell"});
    return out_;
  }

 private:
  std::string_view text(TSNode n) const {
    const auto a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    return a <= b && b <= src_.size() ? src_.substr(a, b - a) : std::string_view();
  }

  std::vector<TSNode> named(TSNode n) const {
    std::vector<TSNode> out;
    const std::uint32_t count = ts_node_named_child_count(n);
    for (std::uint32_t i = 0; i < count; ++i) out.push_back(ts_node_named_child(n, i));
    return out;
  }

  // A string written out in full: its text. Literals joined with `+` or side by side are
  // folded ('r' + 'm -rf ~' is "rm -rf ~"). With `holes`, an f-string's or a template's
  // substitutions become unknown shell variables (${PADDOCK_RUNTIME_1}, ...), so a command
  // line whose program is written out is judged with run-time arguments
  // (f"lsof -ti:{port}"), while one whose program is computed stays opaque.
  std::optional<std::string> literal(TSNode n, bool holes = false) const {
    if (is(n, "parenthesized_expression") && ts_node_named_child_count(n) == 1)
      return literal(ts_node_named_child(n, 0), holes);
    if (is(n, "concatenated_string") || is(n, "binary_operator") || is(n, "binary_expression")) {
      if (!is(n, "concatenated_string")) {
        bool plus = false;
        const std::uint32_t count = ts_node_child_count(n);
        for (std::uint32_t i = 0; i < count; ++i) {
          TSNode c = ts_node_child(n, i);
          plus |= !ts_node_is_named(c) && text(c) == "+";
        }
        if (!plus) return std::nullopt;
      }
      std::string out;
      for (TSNode c : named(n)) {
        auto part = literal(c, holes);
        if (!part) return std::nullopt;
        out += *part;
      }
      return out;
    }
    if (!is(n, "string") && !is(n, "template_string")) return std::nullopt;
    std::string out;
    for (TSNode c : named(n)) {
      if (is(c, "string_content") || is(c, "string_fragment")) {
        out += text(c);
      } else if (is(c, "string_start") || is(c, "string_end")) {
      } else if (is(c, "escape_sequence")) {
        const std::string_view e = text(c);
        out += e == "\\n"      ? std::string("\n")
               : e.size() == 2 ? std::string(1, e[1])
                               : std::string(e);
      } else if (holes && (is(c, "interpolation") || is(c, "template_substitution"))) {
        out += "${PADDOCK_RUNTIME_" + std::to_string(++holes_) + "}";
      } else {
        return std::nullopt;  // an interpolation, a template substitution
      }
    }
    return out;
  }

  // ["rm", "-rf", "/"] written out in full.
  std::optional<std::vector<std::string>> literal_list(TSNode n) const {
    if (!is(n, "list") && !is(n, "array") && !is(n, "tuple")) return std::nullopt;
    std::vector<std::string> out;
    for (TSNode c : named(n)) {
      auto s = literal(c);
      if (!s) return std::nullopt;
      out.push_back(*s);
    }
    return out;
  }

  std::vector<TSNode> arguments(TSNode call) const {
    TSNode args = ts_node_child_by_field_name(call, "arguments", 9);
    if (ts_node_is_null(args)) return {};
    std::vector<TSNode> out;
    for (TSNode c : named(args)) {
      if (!is(c, "comment")) out.push_back(c);
    }
    return out;
  }

  bool keyword_true(const std::vector<TSNode>& args, std::string_view name) const {
    for (TSNode a : args) {
      if (!is(a, "keyword_argument")) continue;
      const std::string_view t = text(a);
      if (t.starts_with(name) && t.find("True") != t.npos) return true;
    }
    return false;
  }

  void opaque(std::string_view callee) {
    out_.push_back(
        {Finding::Kind::opaque, std::string(callee) + "() of something built at run time"});
  }

  // The first argument is a command line (shell) or a program (argv[0], with a list after it).
  void command_argument(std::string_view callee, const std::vector<TSNode>& args, bool shell) {
    if (args.empty()) return;
    if (auto s = literal(args[0], shell)) {
      if (shell) {
        out_.push_back({Finding::Kind::script, *s});
      } else {
        std::vector<std::string> argv = {*s};
        if (args.size() > 1) {
          if (auto rest = literal_list(args[1]))
            argv.insert(argv.end(), rest->begin(), rest->end());
        }
        out_.push_back({Finding::Kind::argv, "", argv});
      }
    } else if (auto list = literal_list(args[0]); list && !list->empty()) {
      if (shell) {
        std::string joined;
        for (const auto& w : *list) joined += (joined.empty() ? "" : " ") + w;
        out_.push_back({Finding::Kind::script, joined});
      } else {
        out_.push_back({Finding::Kind::argv, "", *list});
      }
    } else {
      opaque(callee);
    }
  }

  void python_call(TSNode call, bool in_loop) {
    TSNode fn = ts_node_child_by_field_name(call, "function", 8);
    if (ts_node_is_null(fn)) return;
    const std::string_view callee = text(fn);
    const bool bare = is(fn, "identifier");
    const std::string_view name =
        callee.substr(callee.rfind('.') == callee.npos ? 0 : callee.rfind('.') + 1);
    const auto args = arguments(call);
    if (callee == "os.system" || callee == "os.popen" || name == "getoutput" ||
        name == "getstatusoutput" || (bare && (name == "system" || name == "popen"))) {
      command_argument(callee, args, true);
    } else if (callee.starts_with("subprocess.") || callee.starts_with("sp.") ||
               (bare && (name == "Popen" || name == "check_output" || name == "check_call"))) {
      if (name == "run" || name == "call" || name == "check_call" || name == "check_output" ||
          name == "Popen")
        command_argument(callee, args, keyword_true(args, "shell"));
    } else if ((callee.starts_with("os.") || bare) &&
               (name.starts_with("exec") || name.starts_with("spawn") ||
                name.starts_with("posix_spawn")) &&
               name != "executable") {
      // os.execvp(file, args), os.spawnlp(mode, file, file, *args): the program is a string
      if (args.empty()) return;
      std::vector<std::string> argv;
      for (TSNode a : args) {
        if (auto s = literal(a)) {
          argv.push_back(*s);
        } else if (auto l = literal_list(a)) {
          argv.insert(argv.end(), l->begin(), l->end());
        } else if (!is(a, "attribute") && !is(a, "integer")) {
          return opaque(callee);
        }
      }
      if (!argv.empty()) out_.push_back({Finding::Kind::argv, "", argv});
    } else if (callee == "pty.spawn") {
      command_argument(callee, args, false);
    } else if (bare && (name == "exec" || name == "eval" || name == "compile")) {
      if (args.empty()) return;
      if (auto s = literal(args[0]); s && depth_ < kMaxDepth) {
        for (auto& f : python_code(*s, depth_ + 1)) out_.push_back(std::move(f));
      } else {
        opaque(callee);
      }
    } else if (name == "__import__" || callee == "importlib.import_module") {
      if (!args.empty() && !literal(args[0])) opaque(callee);
    } else if (name == "fork" || name == "forkpty") {
      if (in_loop) out_.push_back({Finding::Kind::fork_bomb, std::string(callee) + "() in a loop"});
    } else if (name == "rmtree" || name == "removedirs" || callee == "os.remove" ||
               callee == "os.unlink" || callee == "os.rmdir") {
      if (!args.empty()) {
        if (auto s = literal(args[0])) out_.push_back({Finding::Kind::removes, *s});
      }
    }
  }

  void javascript_call(TSNode call, bool in_loop) {
    TSNode fn = ts_node_child_by_field_name(call, "function", 8);
    if (ts_node_is_null(fn)) return;
    const std::string_view callee = text(fn);
    const bool bare = is(fn, "identifier");
    std::string_view name = callee;
    if (is(fn, "member_expression")) {
      TSNode prop = ts_node_child_by_field_name(fn, "property", 8);
      if (!ts_node_is_null(prop)) name = text(prop);
    }
    const auto args = arguments(call);
    // exec is also RegExp's: only when the code uses a process module.
    const bool processes = src_.find("child_process") != std::string_view::npos ||
                           src_.find("execa") != std::string_view::npos ||
                           src_.find("Bun.") != std::string_view::npos ||
                           src_.find("Deno.") != std::string_view::npos;
    if (processes && (name == "exec" || name == "execSync" || name == "$")) {
      command_argument(callee, args, true);
    } else if (processes && (name == "spawn" || name == "spawnSync" || name == "execFile" ||
                             name == "execFileSync" || name == "execa" || name == "execaSync")) {
      const bool shell = std::any_of(args.begin(), args.end(), [&](TSNode a) {
        return is(a, "object") && text(a).find("shell") != std::string_view::npos;
      });
      command_argument(callee, args, shell);
    } else if (callee == "Deno.run" || callee == "Bun.spawn" || callee == "Bun.spawnSync") {
      if (!args.empty()) {
        if (auto l = literal_list(args[0])) {
          out_.push_back({Finding::Kind::argv, "", *l});
        } else if (!is(args[0], "object") || text(args[0]).find("cmd") == std::string_view::npos ||
                   !literal_list(args[0])) {
          opaque(callee);
        }
      }
    } else if (bare && (name == "eval" || name == "Function")) {
      if (args.empty()) return;
      if (auto s = literal(args.back()); s && depth_ < kMaxDepth) {
        for (auto& f : javascript_code(*s, depth_ + 1)) out_.push_back(std::move(f));
      } else {
        opaque(callee);
      }
    } else if (name == "runInThisContext" || name == "runInNewContext" || name == "runInContext") {
      opaque(callee);
    } else if (name == "fork") {
      if (in_loop) out_.push_back({Finding::Kind::fork_bomb, std::string(callee) + "() in a loop"});
    } else if (name == "rmSync" || name == "rmdirSync" || name == "rm" || name == "rmdir" ||
               name == "unlinkSync" || name == "unlink" || name == "remove" ||
               name == "removeSync") {
      if (!args.empty() && callee.find("fs") != std::string_view::npos) {
        if (auto s = literal(args[0])) out_.push_back({Finding::Kind::removes, *s});
      }
    }
  }

  void visit(TSNode n, bool in_loop, int nesting) {
    if (nesting > kMaxNesting) {
      if (!deep_noted_) out_.push_back({Finding::Kind::opaque, "code nested deeper than read"});
      deep_noted_ = true;
      return;
    }
    if (is(n, "call")) python_call(n, in_loop);
    if (is(n, "call_expression")) javascript_call(n, in_loop);
    if (is(n, "new_expression") && text(n).starts_with("new Function")) {
      out_.push_back({Finding::Kind::opaque, "new Function() of code built at run time"});
    }
    const bool loop = is(n, "while_statement") || is(n, "for_statement") ||
                      is(n, "for_in_statement") || is(n, "do_statement");
    for (TSNode c : named(n)) visit(c, in_loop || loop, nesting + 1);
  }

  std::string_view src_;
  bool python_;
  int depth_;
  bool deep_noted_ = false;
  mutable int holes_ = 0;
  Findings out_;
};

}  // namespace

Findings python_code(std::string_view code, int depth) { return Reader(code, true, depth).run(); }
Findings javascript_code(std::string_view code, int depth) {
  return Reader(code, false, depth).run();
}

}  // namespace paddock::classifier
