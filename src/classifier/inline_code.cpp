#include "classifier/inline_code.hpp"

#include <tree_sitter/api.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "classifier/tree_parse.hpp"

namespace paddock::classifier {
namespace {

constexpr int kMaxDepth = 4;      // exec("exec('...')") re-read at most this deep
constexpr int kMaxNesting = 256;  // of the syntax tree

bool is(TSNode n, const char* type) { return std::strcmp(ts_node_type(n), type) == 0; }

class Reader {
 public:
  Reader(std::string_view src, bool python, int depth)
      : src_(src), python_(python), depth_(depth) {}

  Findings run() {
    const Tree tree = parse_tree(python_ ? Grammar::python : Grammar::javascript, src_);
    if (!tree) {
      out_.push_back({Finding::Kind::opaque, "code the parser gave up on"});
      return out_;
    }
    const auto word = [t = std::string_view(src_)](std::string_view w) {
      for (auto i = t.find(w); i != std::string_view::npos; i = t.find(w, i + 1)) {
        const bool left =
            i == 0 || !(std::isalnum(static_cast<unsigned char>(t[i - 1])) || t[i - 1] == '_');
        const auto e = i + w.size();
        const bool right =
            e >= t.size() || !(std::isalnum(static_cast<unsigned char>(t[e])) || t[e] == '_');
        if (left && right) return true;
      }
      return false;
    };
    risky_python_ = word("os") || word("subprocess") || word("shutil") || word("pty") ||
                    word("socket") || word("importlib") || word("builtins") ||
                    word("__builtins__") || word("ctypes") || word("sys");
    if (word("ctypes") || word("__builtins__") || (python_ && word("builtins")))
      out_.push_back({Finding::Kind::opaque, "calls through ctypes or the builtins module"});
    const std::string_view code = src_;
    if (!python_ && code.find("child_process") != std::string_view::npos &&
        code.find("pair_pattern") == std::string_view::npos) {
      // const {execSync: x} = require("child_process"): renamed, then called by its new name
      const auto brace = code.find('{');
      const auto colon = brace == std::string_view::npos ? brace : code.find(':', brace);
      const auto close = brace == std::string_view::npos ? brace : code.find('}', brace);
      if (colon != std::string_view::npos && close != std::string_view::npos && colon < close &&
          code.find("require", close) != std::string_view::npos)
        out_.push_back({Finding::Kind::opaque, "child_process functions under other names"});
    }
    // fork in a loop, through a reference or in recursion: a fork bomb
    if (word("fork") && (word("while") || word("for") || word("iter") || word("def") ||
                         word("function") || code.find("=>") != std::string_view::npos))
      out_.push_back({Finding::Kind::fork_bomb, "fork in a loop or in recursion"});
    learn_constants(ts_tree_root_node(tree.get()));
    if (python_) learn_imports(ts_tree_root_node(tree.get()));
    if (!python_) find_process_modules(ts_tree_root_node(tree.get()), 0);
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
  // A path argument: a literal, or one of the usual spellings of the home directory
  // (os.path.expanduser("~"), Path.home(), os.environ["HOME"], os.homedir(),
  // process.env.HOME, Deno.env.get("HOME")), as "~".
  std::optional<std::string> path_value(TSNode n) const {
    if (auto s = literal(n)) return s;
    std::string t;
    for (char c : text(n)) {
      if (c == '\'') c = '"';
      if (c != ' ') t += c;
    }
    static constexpr std::string_view kHome[] = {
        "os.path.expanduser(\"~\")", "Path.home()",
        "pathlib.Path.home()",       "Path(\"~\").expanduser()",
        "os.environ[\"HOME\"]",      "os.environ.get(\"HOME\")",
        "os.getenv(\"HOME\")",       "os.homedir()",
        "require(\"os\").homedir()", "homedir()",
        "process.env.HOME",          "process.env[\"HOME\"]",
        "Deno.env.get(\"HOME\")",    "Bun.env.HOME"};
    // os.path.expanduser("~/"), os.path.join(<home>, ""), pwd...pw_dir, userInfo().homedir
    if (t == "os.path.expanduser(\"~/\")" || t == "Path(\"~/\").expanduser()" ||
        t.ends_with(".pw_dir") || t.ends_with("userInfo().homedir") ||
        t.ends_with("os.path.expanduser(\"~\"),\"\")") || t.ends_with("Path.home(),\"\")"))
      return std::string("~");
    for (std::string_view h : kHome) {
      if (t == h) return std::string("~");
    }
    return std::nullopt;
  }

  // A name that appears exactly twice in the whole code, once given a string and once used,
  // is that string wherever it is used. Any other occurrence (a parameter, a loop variable, a
  // second assignment or use, an attribute of the same name) leaves it unknown.
  void learn_constants(TSNode root) {
    std::map<std::string, int> seen;
    std::map<std::string, std::string> given;
    std::vector<TSNode> todo = {root};
    while (!todo.empty() && seen.size() < 4096) {
      const TSNode n = todo.back();
      todo.pop_back();
      if (is(n, "identifier") || is(n, "shorthand_property_identifier") ||
          is(n, "property_identifier") || is(n, "shorthand_property_identifier_pattern"))
        ++seen[std::string(text(n))];
      const bool python_assignment = python_ && is(n, "assignment");
      const bool js_declaration = !python_ && is(n, "variable_declarator");
      if (python_assignment || js_declaration) {
        TSNode left = ts_node_child_by_field_name(n, python_ ? "left" : "name", python_ ? 4 : 4);
        TSNode right = ts_node_child_by_field_name(n, python_ ? "right" : "value", python_ ? 5 : 5);
        if (!ts_node_is_null(left) && !ts_node_is_null(right) && is(left, "identifier")) {
          if (auto v = literal(right)) given[std::string(text(left))] = *v;
        }
      }
      const std::uint32_t count = ts_node_named_child_count(n);
      for (std::uint32_t i = 0; i < count; ++i) todo.push_back(ts_node_named_child(n, i));
    }
    for (auto& [name, value] : given) {
      if (seen[name] == 2) constants_[name] = std::move(value);
    }
  }

  std::optional<std::string> literal(TSNode n, bool holes = false) const {
    if (is(n, "identifier")) {
      const auto it = constants_.find(std::string(text(n)));
      if (it != constants_.end()) return it->second;
      return std::nullopt;
    }
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

  // `import os as o`, `from os import system as s`, `from subprocess import run`: what each
  // local name stands for, so o.system, s and run are read as os.system and subprocess.run.
  void learn_imports(TSNode n) {
    if (is(n, "import_statement")) {
      for (TSNode c : named(n)) {
        if (is(c, "aliased_import")) {
          TSNode name = ts_node_child_by_field_name(c, "name", 4);
          TSNode alias = ts_node_child_by_field_name(c, "alias", 5);
          if (!ts_node_is_null(name) && !ts_node_is_null(alias))
            aliases_[std::string(text(alias))] = std::string(text(name));
        }
      }
    } else if (is(n, "import_from_statement")) {
      TSNode module = ts_node_child_by_field_name(n, "module_name", 11);
      const std::string from = ts_node_is_null(module) ? "" : std::string(text(module));
      for (TSNode c : named(n)) {
        if (ts_node_eq(c, module)) continue;
        if (is(c, "aliased_import")) {
          TSNode name = ts_node_child_by_field_name(c, "name", 4);
          TSNode alias = ts_node_child_by_field_name(c, "alias", 5);
          if (!ts_node_is_null(name) && !ts_node_is_null(alias))
            aliases_[std::string(text(alias))] = from + "." + std::string(text(name));
        } else if (is(c, "dotted_name")) {
          aliases_[std::string(text(c))] = from + "." + std::string(text(c));
        } else if (is(c, "wildcard_import")) {
          star_imports_ = true;
        }
      }
    }
    for (TSNode c : named(n)) learn_imports(c);
  }

  // require("child_" + "process"), import("child_process"): the code can start processes.
  void find_process_modules(TSNode n, int nesting) {
    if (nesting > kMaxNesting) return;
    if (is(n, "call_expression")) {
      TSNode fn = ts_node_child_by_field_name(n, "function", 8);
      const auto args = arguments(n);
      if (!ts_node_is_null(fn) && (text(fn) == "require" || is(fn, "import")) && !args.empty()) {
        const auto module = literal(args[0]);
        if (module && (module->find("child_process") != std::string::npos ||
                       module->find("execa") != std::string::npos ||
                       module->find("shelljs") != std::string::npos))
          process_modules_ = true;
      }
    }
    for (TSNode c : named(n)) find_process_modules(c, nesting + 1);
  }

  // What a python callee names (os.system), through imports, getattr(x, "name") and
  // __import__("os"); nullopt when only the run knows.
  std::optional<std::string> canonical(TSNode n) const {
    if (is(n, "identifier")) {
      const std::string name(text(n));
      const auto it = aliases_.find(name);
      return it != aliases_.end() ? it->second : name;
    }
    if (is(n, "attribute")) {
      TSNode object = ts_node_child_by_field_name(n, "object", 6);
      TSNode attr = ts_node_child_by_field_name(n, "attribute", 9);
      if (ts_node_is_null(object) || ts_node_is_null(attr)) return std::nullopt;
      auto base = canonical(object);
      if (!base) return std::nullopt;
      return *base + "." + std::string(text(attr));
    }
    if (is(n, "call")) {
      TSNode fn = ts_node_child_by_field_name(n, "function", 8);
      if (ts_node_is_null(fn)) return std::nullopt;
      const auto f = canonical(fn);
      const auto args = arguments(n);
      if (f == "getattr" && args.size() >= 2) {
        auto base = canonical(args[0]);
        auto attr = literal(args[1]);
        if (base && attr) return *base + "." + *attr;
        return std::nullopt;
      }
      if ((f == "__import__" || f == "importlib.import_module") && !args.empty()) {
        return literal(args[0]);
      }
      return std::nullopt;
    }
    return std::nullopt;
  }

  void python_call(TSNode call, bool in_loop) {
    TSNode fn = ts_node_child_by_field_name(call, "function", 8);
    if (ts_node_is_null(fn)) return;
    const auto resolved = canonical(fn);
    if (!resolved) {
      // getattr(x, name)(...), __import__(name).f(...), vars()["f"](...): a function looked up
      // by a name only the run knows. (A method of a call's result, `''.join(...)`,
      // `os.popen(c).read()`, is not a lookup by name.)
      const std::string_view f = text(fn);
      for (std::string_view lookup :
           {"getattr(", "__import__(", "import_module(", "globals()", "locals()", "vars(",
            "__dict__", "__builtins__", "eval(", "__getattribute__"}) {
        if (risky_python_ && f.find(lookup) != std::string_view::npos) {
          opaque(f);
          break;
        }
      }
      return;
    }
    const std::string full = *resolved;
    const std::string_view callee = full;
    const bool bare = callee.find('.') == std::string_view::npos;
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
        if (auto s = path_value(args[0])) out_.push_back({Finding::Kind::removes, *s});
      }
    } else if (callee == "open" || callee == "io.open" || callee == "os.open") {
      // open("/etc/passwd", "w"): a write where the mode says so
      if (args.size() >= 2) {
        auto path = literal(args[0]);
        auto mode = literal(args[1]);
        if (path &&
            (!mode || mode->find_first_of("wax+") != std::string::npos || callee == "os.open"))
          out_.push_back({Finding::Kind::writes, *path});
      }
    } else if (callee.starts_with("requests.") || callee.starts_with("httpx.") ||
               callee == "urllib.request.urlopen" || callee == "urllib.request.Request") {
      const bool sends = name == "post" || name == "put" || name == "patch" || name == "delete" ||
                         (name == "request" && !args.empty() && literal(args[0]) != "GET") ||
                         ((name.starts_with("url") || name == "Request") &&
                          (args.size() >= 2 || text(call).find("data=") != std::string_view::npos));
      if (sends)
        remote_call(callee, args.empty() ? std::nullopt
                                         : literal(name == "request" && args.size() > 1 ? args[1]
                                                                                        : args[0]));
    }
  }

  // Data sent to a host: an upload unless the host is the sandbox's own loopback.
  void remote_call(std::string_view callee, const std::optional<std::string>& url) {
    if (url) {
      const auto scheme = url->find("://");
      const std::string rest = scheme == std::string::npos ? *url : url->substr(scheme + 3);
      const std::string host = rest.substr(0, rest.find_first_of(":/"));
      if (host == "localhost" || host.starts_with("127.") || host == "::1" || host == "[::1]")
        return;
    }
    out_.push_back({Finding::Kind::remote, std::string(callee) + "() sends data to another host"});
  }

  // new Deno.Command("rm", {args: ["-rf", "/"]}): an argv like spawn's.
  void javascript_new(TSNode n) {
    TSNode ctor = ts_node_child_by_field_name(n, "constructor", 11);
    if (ts_node_is_null(ctor) || text(ctor) != "Deno.Command") return;
    const auto args = arguments(n);
    if (args.empty()) return opaque("Deno.Command");
    auto program = literal(args[0]);
    std::optional<std::vector<std::string>> rest = std::vector<std::string>{};
    if (args.size() > 1) {
      rest.reset();
      if (is(args[1], "object")) {
        const std::uint32_t count = ts_node_named_child_count(args[1]);
        for (std::uint32_t i = 0; i < count; ++i) {
          TSNode pair = ts_node_named_child(args[1], i);
          TSNode key = ts_node_child_by_field_name(pair, "key", 3);
          TSNode value = ts_node_child_by_field_name(pair, "value", 5);
          if (!ts_node_is_null(key) && text(key) == "args" && !ts_node_is_null(value))
            rest = literal_list(value);
        }
        if (!rest && text(args[1]).find("args") == std::string_view::npos)
          rest = std::vector<std::string>{};
      }
    }
    if (!program || !rest) return opaque("Deno.Command");
    std::vector<std::string> argv = {*program};
    argv.insert(argv.end(), rest->begin(), rest->end());
    out_.push_back({Finding::Kind::argv, "", argv});
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
    const bool processes =
        process_modules_ || src_.find("child_process") != std::string_view::npos ||
        src_.find("execa") != std::string_view::npos ||
        src_.find("Bun.") != std::string_view::npos || src_.find("Deno.") != std::string_view::npos;
    if (bare && name == "require" && !args.empty() && !literal(args[0])) {
      opaque("require");  // require("child_" + "process")
      return;
    }
    if (processes && is(fn, "subscript_expression")) {
      opaque(callee);  // cp["execSync"](...)
      return;
    }
    if (name == "writeFileSync" || name == "appendFileSync" || name == "writeFile" ||
        name == "appendFile" || name == "createWriteStream") {
      if (!args.empty()) {
        if (auto path = literal(args[0])) out_.push_back({Finding::Kind::writes, *path});
      }
    }
    if (bare && name == "fetch" && args.size() >= 2) {
      const std::string_view options = text(args[1]);
      for (std::string_view method :
           {"POST", "PUT", "PATCH", "DELETE", "post", "put", "patch", "delete", "body"}) {
        if (options.find(method) != std::string_view::npos) {
          remote_call("fetch", literal(args[0]));
          break;
        }
      }
    }
    if (callee.starts_with("axios.") &&
        (name == "post" || name == "put" || name == "patch" || name == "delete")) {
      remote_call(callee, args.empty() ? std::nullopt : literal(args[0]));
    }
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
      // the *Sync names are fs's whatever the object is called; rm/unlink/remove need an fs
      const bool fs_name = name.ends_with("Sync") || callee.find("fs") != std::string_view::npos ||
                           callee.starts_with("Deno.");
      if (!args.empty() && fs_name) {
        if (auto s = path_value(args[0])) out_.push_back({Finding::Kind::removes, *s});
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
    if (is(n, "new_expression")) javascript_new(n);
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
  bool risky_python_ = false;
  bool process_modules_ = false;  // javascript: a process module is required  // the code names a
                                  // module that runs or deletes things
  bool star_imports_ = false;
  std::map<std::string, std::string> aliases_;  // local name -> what it was imported as
  mutable int holes_ = 0;
  // Names given a string once and used once (`cmd = "ls"; os.system(cmd)`): the string.
  std::map<std::string, std::string> constants_;
  Findings out_;
};

}  // namespace

Findings python_code(std::string_view code, int depth) { return Reader(code, true, depth).run(); }
Findings javascript_code(std::string_view code, int depth) {
  return Reader(code, false, depth).run();
}

}  // namespace paddock::classifier
