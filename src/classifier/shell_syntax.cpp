#include "classifier/shell_syntax.hpp"

#include <tree_sitter/api.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "classifier/bash_stops.hpp"
#include "classifier/shell_words.hpp"
#include "classifier/tree_parse.hpp"
#include "paddock/classifier.hpp"

namespace paddock::classifier {
namespace {

// Past this nesting (of the syntax tree, not of sh -c) the walk stops: a 64 KiB script of
// `$($($(...` must not exhaust the stack.
constexpr int kMaxNesting = 256;
bool is(TSNode n, const char* type) { return std::strcmp(ts_node_type(n), type) == 0; }

// A node's children in order, through a cursor: ts_node_child(n, i) walks from the first child
// each time, which made a 60 KB pipeline or argument list quadratic.
std::vector<TSNode> kids(TSNode n, bool named_only) {
  std::vector<TSNode> out;
  TSTreeCursor cursor = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&cursor)) {
    do {
      TSNode c = ts_tree_cursor_current_node(&cursor);
      if (!named_only || ts_node_is_named(c)) out.push_back(c);
    } while (ts_tree_cursor_goto_next_sibling(&cursor));
  }
  ts_tree_cursor_delete(&cursor);
  return out;
}

// Children are told apart by type, not by field name: libtree-sitter 0.20's
// ts_node_field_name_for_child misreports some fields (an argument came back unnamed).
bool is_redirect(TSNode n) {
  return is(n, "file_redirect") || is(n, "herestring_redirect") || is(n, "heredoc_redirect");
}

// What a statement inherits from around it.
struct Context {
  std::vector<Redirect> redirects;
  std::vector<Word> stdin_texts;
  std::vector<std::string> upstream;
  bool piped_in = false;
  bool background = false;
  // The grammar reads `bash 0<&3` as an argument `0` and a redirect `<&3`: a number ending
  // where the statement's first redirect starts is that redirect's descriptor.
  std::uint32_t descriptor_end = 0;
};

// The program name of a command as a pipeline's later stages see it (for pipe-to-shell).
std::string program_of(const SimpleCommand& c) {
  if (c.words.empty() || c.words[0].dynamic) return "";
  const std::string& w = c.words[0].text;
  const auto slash = w.rfind('/');
  return slash == std::string::npos ? w : w.substr(slash + 1);
}

class Walker {
 public:
  Walker(std::string_view src, ParsedScript& out) : src_(src), out_(out) {}

  void walk(TSNode n, const Context& ctx) {
    if (too_many_noted_ || !enter()) return;  // past the bound nothing more is looked at
    note_errors(n);
    if (is(n, "command") || is(n, "declaration_command") || is(n, "unset_command")) {
      command(n, ctx);
    } else if (is(n, "variable_assignment") || is(n, "variable_assignments")) {
      assignment_statement(n, ctx);
    } else if (is(n, "for_statement")) {
      for_loop(n, ctx);
    } else if (is(n, "c_style_for_statement")) {
      // for (( init; test; step )): all three are arithmetic.
      const std::string_view t = text(n);
      const auto open = t.find("((");
      const auto close = t.find("))", open == std::string_view::npos ? 0 : open);
      if (open != std::string_view::npos && close != std::string_view::npos &&
          arithmetic_.size() < kMaxArithmetic)
        arithmetic_.push_back(
            {std::string(t.substr(open + 2, close - open - 2)), false, false, {}});
      synthetic(n, ctx, {});
      children(n, ctx);
    } else if (is(n, "test_command")) {
      test_command(n, ctx);
    } else if (is(n, "process_substitution") && text(n).starts_with(">(")) {
      // `tee >(sh)`, `> >(sh)`: what runs inside reads the outer command's output.
      Context piped;
      piped.piped_in = true;
      piped.upstream.push_back("");
      children(n, piped);
    } else if (is(n, "redirected_statement")) {
      redirected(n, ctx);
    } else if (is(n, "pipeline")) {
      pipeline(n, ctx);
    } else if (is(n, "function_definition")) {
      function(n, ctx);
    } else if (is(n, "command_substitution") || is(n, "process_substitution")) {
      substitution(n);
    } else if (is(n, "heredoc_body") || is(n, "comment")) {
      // Text, not commands (a heredoc's body is judged where a shell reads it).
    } else {
      children(n, ctx);
    }
    --depth_;
  }

 private:
  bool enter() {
    if (++depth_ <= kMaxNesting) return true;
    --depth_;
    if (!nesting_noted_) out_.problems.push_back("nesting deeper than the analysis follows");
    nesting_noted_ = true;
    return false;
  }

  void note_errors(TSNode n) {
    if (errors_noted_ || !(is(n, "ERROR") || ts_node_is_missing(n))) return;
    errors_noted_ = true;
    // (Where bash itself stops at the error, parse_script judges the text before it:
    // bash_stops.hpp.)
    out_.problems.push_back("does not parse as bash (at byte " +
                            std::to_string(ts_node_start_byte(n)) + ")");
  }

  std::string_view text(TSNode n) const {
    const std::uint32_t start = ts_node_start_byte(n), end = ts_node_end_byte(n);
    return start <= end && end <= src_.size() ? src_.substr(start, end - start)
                                              : std::string_view();
  }

  // Named children in order; a child followed by a `&` token runs in the background.
  void children(TSNode n, const Context& ctx) {
    const std::vector<TSNode> all = kids(n, false);
    for (std::size_t i = 0; i < all.size(); ++i) {
      TSNode c = all[i];
      if (!ts_node_is_named(c)) {
        note_errors(c);
        continue;
      }
      Context inner = ctx;
      if (i + 1 < all.size() && !ts_node_is_named(all[i + 1]) && is(all[i + 1], "&")) {
        inner.background = true;
      }
      walk(c, inner);
    }
  }

  static Piece literal(std::string t, bool quoted) {
    return {Piece::Kind::literal, std::move(t), quoted};
  }
  Piece opaque(TSNode n, bool quoted) const {
    return {Piece::Kind::opaque, std::string(text(n)), quoted};
  }

  // `$x` and `${x}` name a variable; `$1`, `$@`, `$$`, `${x:-y}`, `${#x}` are only known at
  // run time.
  Piece expansion_piece(TSNode n, bool quoted) const {
    const std::vector<TSNode> named = kids(n, true);
    const std::string_view t = text(n);
    if (!named.empty() && is(named[0], "variable_name")) {
      const std::string name(text(named[0]));
      if (t == "$" + name || t == "${" + name + "}") return {Piece::Kind::variable, name, quoted};
      if (t == "${!" + name + "}") return {Piece::Kind::variable, "!" + name, quoted};  // indirect
      // ${x:?msg} and ${x?msg} are x (or an error); ${x:-lit}, ${x-lit}, ${x:=lit}, ${x=lit}
      // are x or the literal.
      if (t.starts_with("${" + name) && t.ends_with("}")) {
        const std::string_view rest = t.substr(2 + name.size(), t.size() - 3 - name.size());
        if (rest.starts_with(":?") || rest.starts_with("?"))
          return {Piece::Kind::variable, name, quoted};
        for (std::string_view op : {":-", ":=", "-", "="}) {
          if (!rest.starts_with(op)) continue;
          std::string_view lit = rest.substr(op.size());
          if (lit.size() >= 2 && lit.front() == '"' && lit.back() == '"')
            lit = lit.substr(1, lit.size() - 2);  // ${x:-"$HOME"}
          // A literal, or a variable with a literal after it (`$HOME/`, `${HOME}/x`).
          std::size_t name_end = 0;
          if (lit.starts_with("${")) {
            name_end = lit.find('}') == std::string_view::npos ? 0 : lit.find('}') + 1;
          } else if (lit.starts_with("$")) {
            name_end = 1;
            while (
                name_end < lit.size() &&
                (lit[name_end] == '_' || std::isalnum(static_cast<unsigned char>(lit[name_end]))))
              ++name_end;
          }
          const std::string_view tail = lit.substr(name_end);
          if (tail.find_first_of("$`\\'\"{}") != std::string_view::npos) break;
          if (lit.starts_with("$") && name_end <= 1) break;
          return {Piece::Kind::variable, name, quoted, std::string(lit)};
        }
      }
    }
    // ${a[@]}, ${a[*]}, ${a[0]}: any element of the array (each value it was given).
    if (named.size() == 1 && is(named[0], "subscript") && t.ends_with("]}")) {
      TSNode array = ts_node_named_child(named[0], 0);
      if (!ts_node_is_null(array) && is(array, "variable_name") &&
          t.starts_with("${" + std::string(text(array)) + "["))
        return {Piece::Kind::variable, std::string(text(array)), quoted && !t.ends_with("[*]}")};
    }
    return opaque(n, quoted);
  }

  Word word(TSNode n, bool quoted = false) {
    Word w;
    if (is(n, "word")) {
      w.text = unescape_bare(text(n));
      w.pieces.push_back(literal(w.text, quoted));
      w.glob = !quoted && unquoted_glob(text(n));
    } else if (is(n, "raw_string")) {
      std::string_view t = text(n);
      w.text = t.size() >= 2 ? std::string(t.substr(1, t.size() - 2)) : std::string(t);
      w.pieces.push_back(literal(w.text, true));
    } else if (is(n, "ansi_c_string")) {
      w.text = decode_ansi_c(text(n));
      w.pieces.push_back(literal(w.text, true));
    } else if (is(n, "string") || is(n, "translated_string")) {
      // The grammar leaves some text between its children out of every node (a newline
      // between two string_content nodes): taken from the source between them.
      std::uint32_t at = ts_node_start_byte(n) + (is(n, "translated_string") ? 2 : 1);
      const std::uint32_t close = ts_node_end_byte(n) > at ? ts_node_end_byte(n) - 1 : at;
      const auto gap = [&](std::uint32_t until) {
        if (until > at && until <= src_.size()) {
          const std::string part = unescape_double_quoted(src_.substr(at, until - at));
          w.text += part;
          w.pieces.push_back(literal(part, true));
        }
      };
      for (TSNode c : kids(n, true)) {
        gap(ts_node_start_byte(c));
        at = std::max(at, ts_node_end_byte(c));
        if (is(c, "string_content")) {
          const std::string part = unescape_double_quoted(text(c));
          w.text += part;
          w.pieces.push_back(literal(part, true));
        } else {
          Word part = word(c, true);
          w.dynamic |= part.dynamic;
          w.ifs |= part.ifs;
          w.text += part.text;
          w.pieces.insert(w.pieces.end(), part.pieces.begin(), part.pieces.end());
        }
      }
      gap(close);
      if (w.dynamic) w.text = std::string(text(n));
    } else if (is(n, "concatenation")) {
      for (TSNode c : kids(n, true)) {
        Word part = word(c, quoted);
        w.dynamic |= part.dynamic;
        w.ifs |= part.ifs;
        w.text += part.text;
        w.pieces.insert(w.pieces.end(), part.pieces.begin(), part.pieces.end());
      }
      w.glob = !quoted && unquoted_glob(text(n));  // the grammar splits `r[m]` in four
      if (w.dynamic) w.text = std::string(text(n));
    } else if (is(n, "simple_expansion") || is(n, "expansion")) {
      w.dynamic = true;
      w.text = std::string(text(n));
      w.ifs = w.text == "$IFS" || w.text.rfind("${IFS", 0) == 0;
      w.pieces.push_back(expansion_piece(n, quoted));
      // ${a[x]}, ${y:x:n}, ${!x}: bash evaluates subscripts and offsets as arithmetic (and an
      // indirect name's value may be one): the inner text goes to the arithmetic check.
      if (is(n, "expansion") && w.text.size() > 3) arithmetic_text(n, 2, 1);
      children(n, Context{});                            // ${x:-$(cmd)}
      if (is(n, "expansion")) substitutions_in(w.text);  // ${x:-`cmd`}: not in the tree
    } else if (is(n, "command_substitution") || is(n, "process_substitution") ||
               is(n, "arithmetic_expansion") || is(n, "brace_expression")) {
      w.dynamic = true;
      w.text = std::string(text(n));
      w.pieces.push_back(opaque(n, quoted));
      if (is(n, "arithmetic_expansion"))
        w.text.starts_with("$[") ? arithmetic_text(n, 2, 1) : arithmetic_text(n, 3, 2);
      walk(n, Context{});
    } else {
      // number, regex, test operators, ...: their text, and whatever they contain runs.
      w.text = std::string(text(n));
      w.pieces.push_back(literal(w.text, quoted));
      if (ts_node_named_child_count(n) > 0) {
        w.dynamic = true;
        w.pieces = {opaque(n, quoted)};
        children(n, Context{});
      }
    }
    return w;
  }

  // The text of an arithmetic expression (without `$((`/`((` and `))`), kept for the command
  // that runs it: bash evaluates the values of the variables it names as arithmetic again.
  void arithmetic_text(TSNode n, std::size_t open, std::size_t close) {
    const std::string_view t = text(n);
    if (t.size() < open + close || arithmetic_.size() >= kMaxArithmetic) return;
    arithmetic_.push_back({std::string(t.substr(open, t.size() - open - close)), false, false, {}});
  }

  // An operand bash evaluates as arithmetic, after quote removal (`'a[$(id)]'` too).
  void arithmetic_operand(TSNode n) {
    if (arithmetic_.size() >= kMaxArithmetic) return;
    Word w = word(n);
    if (w.dynamic) w.text = std::string(text(n));
    arithmetic_.push_back(std::move(w));
  }

  // A statement of its own that only sets variables, evaluates arithmetic or runs a loop
  // header: a command with no words, kept in script order for the classifier's state.
  void synthetic(TSNode n, const Context& ctx, std::vector<Assignment> sets) {
    SimpleCommand c;
    c.source = std::string(text(n));
    c.redirects = ctx.redirects;
    c.background = ctx.background;
    c.sets = std::move(sets);
    c.arithmetic = std::move(arithmetic_);
    arithmetic_.clear();
    store(std::move(c));
  }

  Assignment assignment(TSNode a) {
    Assignment out;
    for (TSNode c : kids(a, true)) {
      if (is(c, "variable_name") && out.name.empty()) {
        out.name = std::string(text(c));
      } else if (is(c, "subscript")) {
        TSNode name = ts_node_named_child(c, 0);
        if (!ts_node_is_null(name)) out.name = std::string(text(name));
        out.unknown = true;  // one element of an array: the array's value is not tracked
        TSNode index = ts_node_named_child(c, 1);
        if (!ts_node_is_null(index)) arithmetic_operand(index);  // a[x]=1 evaluates x
        children(c, Context{});
      } else if (is(c, "array")) {
        for (TSNode e : kids(c, true)) out.elements.push_back(word(e));
      } else {
        out.value = word(c);
      }
    }
    if (text(a).find("+=") != std::string_view::npos) out.unknown = true;
    return out;
  }

  void assignment_statement(TSNode n, const Context& ctx) {
    std::vector<Assignment> sets;
    if (is(n, "variable_assignment")) {
      sets.push_back(assignment(n));
    } else {
      for (TSNode c : kids(n, true)) {
        if (is(c, "variable_assignment")) sets.push_back(assignment(c));
      }
    }
    synthetic(n, ctx, std::move(sets));
  }

  // for NAME in WORDS; do BODY; done: NAME takes each word (positional parameters when none).
  // for (( ... )): arithmetic.
  void for_loop(TSNode n, const Context& ctx) {
    std::vector<Assignment> sets;
    std::string name;
    std::vector<TSNode> body;
    bool values = false;
    for (TSNode c : kids(n, true)) {
      if (is(c, "variable_name") && name.empty()) {
        name = std::string(text(c));
      } else if (is(c, "do_group") || is(c, "compound_statement")) {
        body.push_back(c);
      } else if (!name.empty()) {
        values = true;
        sets.push_back({name, word(c), false});
      }
    }
    if (!name.empty() && !values) sets.push_back({name, {}, true});
    if (name.empty() && text(n).starts_with("for ((")) {
      const std::string_view t = text(n);
      const auto open = t.find("((");
      const auto close = t.find("))", open);
      if (close != std::string_view::npos && arithmetic_.size() < kMaxArithmetic)
        arithmetic_.push_back(
            {std::string(t.substr(open + 2, close - open - 2)), false, false, {}});
    }
    synthetic(n, ctx, std::move(sets));
    for (TSNode b : body) walk(b, ctx);
  }

  // [[ A -eq B ]] evaluates A and B as arithmetic (so does every operand of ((...))); the
  // rest of a test is words, whose substitutions run.
  void test_command(TSNode n, const Context& ctx) {
    const std::string_view t = text(n);
    if (t.starts_with("((") && t.ends_with("))")) {
      arithmetic_text(n, 2, 2);
      children(n, Context{});
    } else {
      test_operands(n);
    }
    synthetic(n, ctx, {});
  }

  void test_operands(TSNode n) {
    if (!enter()) return;
    if (is(n, "binary_expression")) {
      bool arithmetic = false;
      for (TSNode c : kids(n, false)) {
        if (is(c, "test_operator")) {
          const std::string_view op = text(c);
          arithmetic = op == "-eq" || op == "-ne" || op == "-lt" || op == "-le" || op == "-gt" ||
                       op == "-ge";
        }
      }
      for (TSNode c : kids(n, true)) {
        if (is(c, "test_operator")) continue;
        if (arithmetic) {
          arithmetic_operand(c);
        } else if (is(c, "binary_expression") || is(c, "unary_expression") ||
                   is(c, "parenthesized_expression")) {
          test_operands(c);
        } else {
          word(c);
        }
      }
    } else {
      for (TSNode c : kids(n, true)) {
        if (is(c, "binary_expression") || is(c, "unary_expression") ||
            is(c, "parenthesized_expression")) {
          test_operands(c);
        } else if (!is(c, "test_operator")) {
          word(c);
        }
      }
    }
    --depth_;
  }

  void store(SimpleCommand c) {
    if (out_.commands.size() < kStoredCommands) {
      out_.commands.push_back(std::move(c));
    } else if (!too_many_noted_) {
      too_many_noted_ = true;
      out_.problems.push_back("more simple commands than the analysis keeps");
    }
  }

  // Command substitutions found by reading text the grammar leaves unparsed (a heredoc body,
  // backticks inside ${...}): each is parsed as a script of its own, its commands added.
  void substitutions_in(std::string_view t) {
    for (std::string_view inner : command_substitutions(t)) nested(inner);
  }

  void nested(std::string_view segment) {
    if (++nested_parses_ > kMaxNestedParses) {
      if (nested_parses_ == kMaxNestedParses + 1) {
        out_.problems.push_back("more nested substitutions than the analysis follows");
      }
      return;
    }
    ParsedScript inner = parse_script(segment);
    for (auto& p : inner.problems) out_.problems.push_back(std::move(p));
    for (auto& f : inner.self_calling_functions) out_.self_calling_functions.push_back(f);
    for (auto& c : inner.commands) {
      if (out_.commands.size() >= kStoredCommands) break;
      out_.commands.push_back(std::move(c));
    }
  }

  void redirect(TSNode r, std::vector<Redirect>& redirects, std::vector<Word>& stdin_texts,
                const Context& ctx, const std::string& body_program) {
    if (is(r, "herestring_redirect")) {
      if (ts_node_named_child_count(r) > 0) stdin_texts.push_back(word(ts_node_named_child(r, 0)));
      return;
    }
    if (is(r, "heredoc_redirect")) {
      Word body;
      bool quoted_delimiter = false;
      const std::uint32_t count = ts_node_named_child_count(r);
      for (std::uint32_t i = 0; i < count; ++i) {
        TSNode c = ts_node_named_child(r, i);
        if (is(c, "heredoc_start")) {
          std::string_view d = text(c);
          quoted_delimiter = d.find_first_of("'\"\\") != std::string_view::npos;
        } else if (is(c, "heredoc_body")) {
          body.text = std::string(text(c));
          // An unquoted delimiter expands the body: $(...) and `...` in it run when the
          // heredoc is read (the grammar does not parse backticks there: read textually).
          if (!quoted_delimiter && (ts_node_named_child_count(c) > 0 ||
                                    body.text.find_first_of("`$") != std::string::npos)) {
            body.dynamic = true;
            children(c, Context{});
            substitutions_in(body.text);
          }
        }
      }
      stdin_texts.push_back(body);
      // The rest of a pipeline or list the grammar hangs under the heredoc (`cat <<EOF | sh`):
      // its first stage reads what the heredoc's command prints.
      for (std::uint32_t i = 0; i < count; ++i) {
        TSNode c = ts_node_named_child(r, i);
        if (is(c, "heredoc_start") || is(c, "heredoc_body") || is(c, "heredoc_end")) continue;
        if (is(c, "file_redirect") || is(c, "herestring_redirect")) continue;  // redirected()
        Context rest = ctx;
        rest.redirects.clear();
        rest.stdin_texts = {body};
        rest.piped_in = is(c, "pipeline") || is(c, "command");
        if (!body_program.empty()) rest.upstream.push_back(body_program);
        walk(c, rest);
      }
      return;
    }
    if (!is(r, "file_redirect")) return;
    // `>& /dev/tcp/h/p 0>&1` gives this node two destinations: each is a target.
    std::string op;
    std::vector<Word> targets;
    const std::uint32_t count = ts_node_child_count(r);
    for (std::uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_child(r, i);
      if (!ts_node_is_named(c)) {
        op += std::string(text(c));
      } else if (!is(c, "file_descriptor")) {
        targets.push_back(word(c));
      }
    }
    for (auto& t : targets) redirects.push_back({op, std::move(t)});
  }

  void command(TSNode n, const Context& ctx) {
    SimpleCommand c;
    c.redirects = ctx.redirects;
    c.stdin_texts = ctx.stdin_texts;
    c.upstream = ctx.upstream;
    c.piped_in = ctx.piped_in;
    c.background = ctx.background;
    c.source = std::string(text(n));
    if (is(n, "declaration_command") || is(n, "unset_command")) {
      // export/declare/local/readonly/typeset/unset NAME=...: the keyword is a token.
      TSNode first = ts_node_child(n, 0);
      c.words.push_back({std::string(text(first)), false, false, {}});
    }
    for (TSNode child : kids(n, true)) {
      if (is(child, "command_name")) {
        c.words.push_back(ts_node_named_child_count(child) > 0
                              ? word(ts_node_named_child(child, 0))
                              : Word{std::string(text(child)), false, false, {}});
      } else if (is_redirect(child)) {
        redirect(child, c.redirects, c.stdin_texts, ctx, {});
      } else if (is(child, "variable_assignment") &&
                 !(is(n, "declaration_command") || is(n, "unset_command"))) {
        c.assignments.emplace_back(text(child));
        walk(child, Context{});  // prefix assignments: their values may run commands
      } else if (is(child, "comment")) {
      } else if (is(child, "variable_assignment")) {
        c.words.push_back({std::string(text(child)), false, false, {}});  // export NAME=value
        c.sets.push_back(assignment(child));
      } else if (is(child, "number") && ctx.descriptor_end != 0 &&
                 ts_node_end_byte(child) == ctx.descriptor_end) {
        // the descriptor of the statement's redirect (`0<&3`), not an argument
      } else {
        c.words.push_back(word(child));  // an argument
      }
    }
    // A call that forks (backgrounded, or a stage of a pipeline) multiplies: recursion through
    // such a call is a fork bomb; plain recursion (a directory walk) is not. Every call inside
    // a body is an edge of the call graph, marked when it forks (note_call_cycles).
    const bool forks = c.background || c.piped_in || pipeline_depth_ > 0;
    std::vector<std::pair<std::string, bool>> callees;  // name, forks
    if (!c.words.empty() && !c.words[0].dynamic && !functions_.empty()) {
      callees.push_back({c.words[0].text, forks});
      // eval TEXT in a body calls what TEXT calls (`f(){ eval 'f|f&'; }`).
      // (also `builtin eval` and `command eval`)
      std::size_t at = 0;
      while (at + 1 < c.words.size() && !c.words[at].dynamic &&
             (c.words[at].text == "builtin" || c.words[at].text == "command"))
        ++at;
      if (c.words[at].text == "eval" && !c.words[at].dynamic) {
        std::string text;
        bool known = true;
        for (std::size_t i = at + 1; i < c.words.size(); ++i) {
          known &= !c.words[i].dynamic;
          text += (i > at + 1 ? " " : "") + c.words[i].text;
        }
        if (known) {
          for (const auto& inner : parse_script(text).commands) {
            if (inner.words.empty() || inner.words[0].dynamic) continue;
            callees.push_back({inner.words[0].text, forks || inner.background || inner.piped_in ||
                                                        !inner.upstream.empty()});
          }
        }
      }
    }
    for (const auto& [callee, forking] : callees) {
      for (const auto& f : functions_) {
        if (calls_.size() >= kMaxFunctions && calls_.count(f) == 0) continue;
        auto& called = calls_[f];
        if (called.size() >= kMaxFunctions && called.count(callee) == 0) continue;
        called[callee] |= forking;
      }
    }
    c.arithmetic = std::move(arithmetic_);
    arithmetic_.clear();
    store(std::move(c));
  }

  // `$(...)`. bash's `$(< FILE)` is no command: it reads FILE, and the grammar hangs the
  // redirect on the substitution itself. It becomes a command with no words and that redirect.
  void substitution(TSNode n) {
    const std::uint32_t count = ts_node_named_child_count(n);
    SimpleCommand bare;
    for (std::uint32_t i = 0; i < count; ++i) {
      TSNode child = ts_node_named_child(n, i);
      if (is(child, "file_redirect")) {
        std::vector<Word> ignored;
        redirect(child, bare.redirects, ignored, Context{}, {});
      }
    }
    if (!bare.redirects.empty() && out_.commands.size() < kStoredCommands) {
      bare.source = std::string(text(n));
      store(std::move(bare));
    }
    children(n, Context{});
  }

  void redirected(TSNode n, const Context& ctx) {
    Context inner = ctx;
    std::vector<TSNode> heredocs;
    TSNode body{};
    bool has_body = false;
    const std::uint32_t count = ts_node_named_child_count(n);
    for (std::uint32_t i = 0; i < count; ++i) {
      TSNode child = ts_node_named_child(n, i);
      if (!has_body && !is_redirect(child)) {
        body = child;
        has_body = true;
      } else if (is(child, "heredoc_redirect")) {
        heredocs.push_back(child);  // after the body: its continuation reads the body's output
      } else {
        redirect(child, inner.redirects, inner.stdin_texts, ctx, {});
      }
    }
    // A heredoc's text first goes to the body's stdin.
    std::vector<Word> heredoc_texts;
    for (TSNode h : heredocs) {
      const std::uint32_t hc = ts_node_named_child_count(h);
      for (std::uint32_t i = 0; i < hc; ++i) {
        TSNode c = ts_node_named_child(h, i);
        if (is(c, "heredoc_body"))
          heredoc_texts.push_back(Word{std::string(text(c)), false, false, {}});
        // `cat <<'EOF' > FILE`: the grammar hangs the command's later redirects under the
        // heredoc; they are the command's all the same.
        if (is(c, "file_redirect") || is(c, "herestring_redirect"))
          redirect(c, inner.redirects, inner.stdin_texts, ctx, {});
      }
    }
    inner.stdin_texts.insert(inner.stdin_texts.end(), heredoc_texts.begin(), heredoc_texts.end());
    const std::size_t first = out_.commands.size();
    for (std::uint32_t i = 0; i < count; ++i) {
      TSNode child = ts_node_named_child(n, i);
      if (has_body && is_redirect(child)) {
        inner.descriptor_end = ts_node_start_byte(child);
        break;
      }
    }
    if (has_body) walk(body, inner);
    if (first == out_.commands.size() && !inner.redirects.empty() &&
        out_.commands.size() < kStoredCommands) {
      // `> /etc/passwd`, `[[ 1 ]] > f`, `f() {...} > f`: no simple command took the
      // redirects, and they write all the same.
      SimpleCommand bare;
      bare.redirects = inner.redirects;
      bare.source = std::string(text(n));
      store(std::move(bare));
    }
    // By name, not by pointer: the walks below append to out_.commands (and may move it).
    const std::string body_program =
        first < out_.commands.size() ? program_of(out_.commands[first]) : std::string();
    std::vector<Word> ignored;
    for (TSNode h : heredocs) {
      std::vector<Redirect> unused;
      redirect(h, unused, ignored, ctx, body_program);
    }
  }

  void pipeline(TSNode n, const Context& ctx) {
    ++pipeline_depth_;
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{pipeline_depth_};
    Context stage = ctx;
    for (TSNode part : kids(n, true)) {
      const std::size_t first = out_.commands.size();
      walk(part, stage);
      // What the next stage reads is what this one prints: echo/printf print their arguments
      // (as one text), cat-like filters pass on what they were fed, anything else prints
      // what cannot be known here (no text: a shell reading it is "script-from-pipe").
      // Only this stage's output, never accumulated: a long pipeline stays linear.
      std::vector<Word> printed;
      stage.piped_in = true;
      for (std::size_t k = first; k < out_.commands.size(); ++k) {
        const SimpleCommand& c = out_.commands[k];
        if (stage.upstream.size() < kMaxUpstream) stage.upstream.push_back(program_of(c));
        const std::string p = program_of(c);
        if (p == "echo" || p == "printf") {
          printed.push_back(printed_text(c, p));
        } else if (p == "cat" || p == "tee" || p == "head" || p == "tail" || p == "tac" ||
                   p == "sort" || p == "uniq") {
          printed.insert(printed.end(), c.stdin_texts.begin(), c.stdin_texts.end());
        }
      }
      stage.stdin_texts = std::move(printed);
    }
  }

  // What `echo ARGS` / `printf ARGS` print, as one text. Escapes and formats they expand
  // (\x72\x6d, \162, %s, echo -e) make it something else than what is written: dynamic.
  static Word printed_text(const SimpleCommand& c, const std::string& program) {
    Word out;
    std::size_t i = 1;
    bool expands = program == "printf";
    if (program == "printf" && i < c.words.size() && c.words[i].text == "--") ++i;
    if (program == "echo") {
      for (; i < c.words.size() && c.words[i].text.size() > 1 && c.words[i].text[0] == '-' &&
             c.words[i].text.find_first_not_of("neE", 1) == std::string::npos;
           ++i) {
        if (c.words[i].text.find('e') != std::string::npos) expands = true;
      }
    }
    for (; i < c.words.size(); ++i) {
      if (!out.text.empty()) out.text += ' ';
      out.text += c.words[i].text;
      out.dynamic |= c.words[i].dynamic;
    }
    if (expands && out.text.find_first_of("\\%") != std::string::npos) out.dynamic = true;
    return out;
  }

 public:
  // Arithmetic no command took (in a case pattern, a loop header): still evaluated.
  void flush_arithmetic(TSNode root) {
    if (!arithmetic_.empty()) synthetic(root, Context{}, {});
  }

  // After the walk: functions that reach themselves through a cycle of calls of which at least
  // one forks (`:(){ :|:& };:`, `f(){ g|g& }; g(){ f|f& }`, `a(){ b & }; b(){ a; }`): the fork
  // bomb's shape, also spread over several names. Bounded: kMaxFunctions names, as many edges
  // each, two states per name.
  void note_call_cycles() {
    for (const auto& [start, _] : calls_) {
      std::set<std::pair<std::string, bool>> seen;
      std::vector<std::pair<std::string, bool>> todo;  // (function reached, a fork on the way)
      for (const auto& [name, forks] : calls_.at(start)) todo.emplace_back(name, forks);
      bool bomb = false;
      while (!todo.empty() && !bomb) {
        auto [name, forked] = std::move(todo.back());
        todo.pop_back();
        if (name == start && forked) {
          bomb = true;
        } else if (name != start && seen.emplace(name, forked).second) {
          if (auto it = calls_.find(name); it != calls_.end()) {
            for (const auto& [next, forks] : it->second) todo.emplace_back(next, forked || forks);
          }
        }
      }
      if (bomb) out_.self_calling_functions.push_back(start);
    }
  }

 private:
  void function(TSNode n, const Context& ctx) {
    TSNode name = ts_node_child_by_field_name(n, "name", 4);
    functions_.push_back(ts_node_is_null(name) ? std::string() : std::string(text(name)));
    // `f() { ...; } > file`: the redirect applies to every run of the body.
    Context inner = ctx;
    for (TSNode c : kids(n, true)) {
      if (is_redirect(c)) redirect(c, inner.redirects, inner.stdin_texts, ctx, {});
    }
    TSNode body = ts_node_child_by_field_name(n, "body", 4);
    if (!ts_node_is_null(body)) walk(body, inner);
    functions_.pop_back();
  }

  static constexpr std::size_t kMaxArithmetic = 64;  // expressions kept per command
  std::vector<Word> arithmetic_;                     // evaluated by the next command stored
  static constexpr std::size_t kMaxUpstream = 32;    // earlier stages' names kept per command
  static constexpr int kMaxNestedParses = 16;        // texts re-read as scripts, per parse
  int nested_parses_ = 0;
  // One past the classifier's bound: enough to know it was passed, and no more work.
  static constexpr std::size_t kStoredCommands = kClassifierMaxCommands + 1;
  std::string_view src_;
  ParsedScript& out_;
  std::vector<std::string> functions_;
  int pipeline_depth_ = 0;  // inside a pipeline: every stage is a process of its own
  static constexpr std::size_t kMaxFunctions = 256;           // call-graph nodes and edges per node
  std::map<std::string, std::map<std::string, bool>> calls_;  // caller -> callee -> forks
  int depth_ = 0;
  bool errors_noted_ = false;
  bool nesting_noted_ = false;
  bool too_many_noted_ = false;
};

// Whether every heredoc in the tree is read by bash as the grammar read it: a plain
// delimiter (EOF, 'EOF', "EOF"; quote removal of anything else is where the grammar and the
// shells part ways: E\OF in quotes, $'EOF'), and an end line that is exactly the delimiter
// (for <<-, after leading tabs); the grammar also takes `EOF `, ` EOF`, `EOF;`. A heredoc
// with no end runs to the end of the text for both, unless `ended` is required.
bool heredocs_as_bash_reads(std::string_view text, TSNode root, bool ended_required) {
  const auto slice = [&text](TSNode n) {
    const std::uint32_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
    return b <= e && e <= text.size() ? text.substr(b, e - b) : std::string_view();
  };
  std::vector<TSNode> todo = {root};
  while (!todo.empty()) {
    const TSNode n = todo.back();
    todo.pop_back();
    const std::uint32_t count = ts_node_child_count(n);
    bool ended = false, has_end = false, strip_tabs = false;
    std::string delimiter;
    for (std::uint32_t i = 0; i < count; ++i) {
      const TSNode c = ts_node_child(n, i);
      const char* type = ts_node_type(c);
      if (std::strcmp(type, "<<-") == 0) strip_tabs = true;
      if (std::strcmp(type, "heredoc_start") == 0) {
        std::string_view d = slice(c);
        if (d.size() >= 2 && (d.front() == '\'' || d.front() == '"') && d.back() == d.front())
          d = d.substr(1, d.size() - 2);
        const bool plain = !d.empty() && std::all_of(d.begin(), d.end(), [](char ch) {
          return ch == '_' || std::isalnum(static_cast<unsigned char>(ch));
        });
        if (!plain) return false;
        delimiter = std::string(d);
      }
      if (std::strcmp(type, "heredoc_end") == 0) {
        has_end = true;
        const std::uint32_t at = ts_node_start_byte(c);
        std::size_t begin = text.rfind('\n', at == 0 ? 0 : at - 1);
        begin = begin == std::string_view::npos || at == 0 ? 0 : begin + 1;
        std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(begin, end - begin);
        while (strip_tabs && line.starts_with('\t')) line.remove_prefix(1);
        ended = !delimiter.empty() && line == delimiter;
      }
      todo.push_back(c);
    }
    if (std::strcmp(ts_node_type(n), "heredoc_redirect") == 0) {
      if (has_end && !ended) return false;
      if (!has_end && ended_required) return false;
      // With no end line, bash reads the body to the end of the text; so does the grammar.
      // The text must then not hold a line equal to the delimiter the grammar missed.
      if (!has_end) {
        for (std::size_t at = 0; at <= text.size();) {
          std::size_t end = text.find('\n', at);
          if (end == std::string_view::npos) end = text.size();
          std::string_view line = text.substr(at, end - at);
          while (strip_tabs && line.starts_with('\t')) line.remove_prefix(1);
          if (at > ts_node_start_byte(n) && line == delimiter) return false;
          at = end + 1;
        }
      }
    }
  }
  return true;
}

// Whole commands, as bash reads them to their end: no parse error, every heredoc closed by
// its end line, no line continued past the end.
bool complete_commands(std::string_view text) {
  const Tree tree = parse_tree(Grammar::bash, text);
  if (!tree || ts_node_has_error(ts_tree_root_node(tree.get()))) return false;
  // Where the grammar and bash (or dash) read text differently, no claim: a continued line
  // (also inside a heredoc's body, which joins lines), a carriage return (part of a word or a
  // delimiter for bash), `$'...'` and `$"..."` (dash reads them otherwise).
  if (text.find("\\\n") != std::string_view::npos || text.find('\r') != std::string_view::npos ||
      text.find("$'") != std::string_view::npos || text.find("$\"") != std::string_view::npos)
    return false;
  return heredocs_as_bash_reads(text, ts_tree_root_node(tree.get()), true);
}

// Whether bash reads the rest of the script as the scan did: nothing before it can define
// an alias or change the parser's options (alias, shopt, set -o posix, eval, source, a
// builtin through command/builtin/enable, a command known only at run time), and nothing
// names a start-up file (BASH_ENV, ENV) that could.
bool reads_rest_as_written(std::string_view text, const ParsedScript& before) {
  // Builtins that define aliases, set options or assign variables in ways the analysis does
  // not follow (printf -v, read, declare 'BASH_ALIASES[x]=...', : ${x:=...}).
  static constexpr std::string_view kChanging[] = {
      "alias",   "shopt",     "set",  "eval",    "source",  ".",     "enable", "builtin",
      "command", "printf",    "read", "declare", "typeset", "local", "export", "readonly",
      "mapfile", "readarray", "let",  "getopts", "trap",    "exec",  "hash",   ":"};
  std::string lower(text);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (std::string_view word :
       {"alias", "posix", "shopt", "bashopts", "shellopts", "bash_env", ":="}) {
    if (lower.find(word) != std::string::npos) return false;
  }
  for (const auto& c : before.commands) {
    for (const auto& a : c.assignments) {
      if (a.starts_with("BASH_ENV=") || a.starts_with("ENV=")) return false;
    }
    for (const auto& s : c.sets) {
      if (s.name == "BASH_ENV" || s.name == "ENV" || s.name == "POSIXLY_CORRECT") return false;
    }
    if (c.words.empty()) continue;
    if (c.words[0].dynamic || c.words[0].glob) return false;
    const std::string& name = c.words[0].text;
    const std::string base =
        name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
    if (std::find(std::begin(kChanging), std::end(kChanging), base) != std::end(kChanging))
      return false;
  }
  return true;
}

// A script that does not parse: when bash itself stops at a line (bash_stops.hpp) after
// whole commands, those commands are the script; otherwise nullopt (it stays unanalysable).
std::optional<ParsedScript> before_bash_stops(std::string_view script) {
  constexpr int kMaxCandidates = 16;  // parses of a prefix, each bounded like the script's
  int candidates = 0;
  for (std::size_t line = 0, number = 1; line <= script.size() && candidates < kMaxCandidates;
       ++number) {
    if (auto why = bash_rejects_command_at(script, line)) {
      ++candidates;
      const std::string_view before = script.substr(0, line);
      if (complete_commands(before)) {
        ParsedScript out = parse_script(before);
        if (!out.problems.empty() || !out.stops_at.empty()) return std::nullopt;
        if (!reads_rest_as_written(before, out)) return std::nullopt;
        out.stops_at = "bash stops with a syntax error on line " + std::to_string(number) + " (" +
                       *why + "); that line and what follows never run";
        return out;
      }
    }
    const auto newline = script.find('\n', line);
    if (newline == std::string_view::npos) break;
    line = newline + 1;
  }
  return std::nullopt;
}

// An ERROR or MISSING node other than the grammar's known gaps in redirect operators: it has
// no `<>` and no `N<<<`, and reads them as operator pieces with one an ERROR (the operator
// is still assembled from the pieces: Redirect::op).
bool has_real_error(TSNode root, std::string_view text) {
  std::vector<TSNode> todo = {root};
  while (!todo.empty()) {
    const TSNode n = todo.back();
    todo.pop_back();
    if (ts_node_is_missing(n)) return true;
    if (std::strcmp(ts_node_type(n), "ERROR") == 0) {
      const std::uint32_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
      const TSNode parent = ts_node_parent(n);
      const bool operator_only =
          b < e && e <= text.size() && e - b <= 3 &&
          text.substr(b, e - b).find_first_not_of("<>&") == std::string_view::npos;
      const bool in_redirect =
          !ts_node_is_null(parent) && std::strcmp(ts_node_type(parent), "file_redirect") == 0;
      if (!(operator_only && in_redirect)) return true;
    }
    if (!ts_node_has_error(n) && !ts_node_is_missing(n)) continue;
    const std::uint32_t count = ts_node_child_count(n);
    for (std::uint32_t i = 0; i < count; ++i) todo.push_back(ts_node_child(n, i));
  }
  return false;
}

// `cat <<'EOF' > f` with no EOF line (an agent's text cut short): bash reads the heredoc to
// the end, warns, and runs the command. When closing the last heredoc at the end makes the
// text parse as whole commands, that parse is what bash runs.
std::optional<ParsedScript> heredoc_to_end(std::string_view script) {
  const auto at = script.rfind("<<");
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + 2;
  if (i < script.size() && script[i] == '-') ++i;
  if (i < script.size() && script[i] == '<') return std::nullopt;  // a here-string
  while (i < script.size() && (script[i] == ' ' || script[i] == '\t')) ++i;
  std::string delimiter;
  char quote = 0;
  for (; i < script.size(); ++i) {
    const char c = script[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        delimiter += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\') {
      continue;
    } else if (std::string_view(" \t\n;|&<>()").find(c) != std::string_view::npos) {
      break;
    } else {
      delimiter += c;
    }
  }
  if (delimiter.empty() || quote != 0) return std::nullopt;
  std::string closed(script);
  if (!closed.ends_with('\n')) closed += '\n';
  closed += delimiter + "\n";
  if (!complete_commands(closed)) return std::nullopt;
  ParsedScript out = parse_script(closed);
  if (!out.problems.empty()) return std::nullopt;
  return out;
}

}  // namespace

ParsedScript parse_script(std::string_view script) {
  ParsedScript out;
  // Text re-read as a script (substitutions_in) parses again from inside a walk: bounded.
  thread_local int reentry = 0;
  if (reentry >= 8) {
    out.problems.push_back("substitutions nested deeper than the analysis follows");
    return out;
  }
  struct Enter {
    Enter() { ++reentry; }
    ~Enter() { --reentry; }
  } entered;
  const Tree tree = parse_tree(Grammar::bash, script);
  if (!tree) {
    out.problems.push_back("the parse took longer than the analysis allows");
    return out;
  }
  const TSNode root = ts_tree_root_node(tree.get());
  if (ts_node_has_error(root)) {
    if (auto closed = heredoc_to_end(script)) return std::move(*closed);
    if (auto stopped = before_bash_stops(script)) return std::move(*stopped);
  }
  Walker walker(script, out);
  walker.walk(root, Context{});
  walker.flush_arithmetic(root);
  walker.note_call_cycles();
  // An error inside a node the walk reads otherwise (an array's elements): bash may recover
  // there and run what follows (`x=(\nx y (\nrm -rf ~`), so the script is not analysable.
  if (ts_node_has_error(root) && out.problems.empty() && out.stops_at.empty() &&
      has_real_error(root, script))
    out.problems.push_back("does not parse as bash");
  // A heredoc bash ends elsewhere than the grammar did: what follows is read otherwise.
  if (out.problems.empty() && script.find("<<") != std::string_view::npos &&
      !heredocs_as_bash_reads(script, root, false))
    out.problems.push_back("has a heredoc whose end bash reads differently from the grammar");
  return out;
}

std::vector<std::string_view> command_substitutions(std::string_view t) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < t.size(); ++i) {
    std::size_t begin = std::string_view::npos, end = std::string_view::npos;
    if (t[i] == '`') {
      begin = i + 1;
      end = t.find('`', begin);
    } else if (t[i] == '$' && i + 1 < t.size() && t[i + 1] == '(') {
      begin = i + 2;
      int open = 1;
      for (std::size_t k = begin; k < t.size(); ++k) {
        if (t[k] == '(') ++open;
        if (t[k] == ')' && --open == 0) {
          end = k;
          break;
        }
      }
    }
    if (begin == std::string_view::npos || end == std::string_view::npos) continue;
    out.push_back(t.substr(begin, end - begin));
    i = end;
  }
  return out;
}

// An unquoted `*`, `?` or `[...]` in a word's source: bash expands it to matching files. A
// `[` with no `]` after it is itself (`/usr/bin/[`).
bool unquoted_glob(std::string_view raw) {
  char quote = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"')
        ++i;
    } else if (c == '\\') {
      ++i;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '*' || c == '?' ||
               (c == '[' && raw.find(']', i + 2) != std::string_view::npos)) {
      return true;
    }
  }
  return false;
}

}  // namespace paddock::classifier
