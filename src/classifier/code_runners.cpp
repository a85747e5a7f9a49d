// Hand-written readers: awk, sed and make have no maintained tree-sitter grammar packaged for
// Debian or npm that covers GNU extensions (sed's `e`, gawk's `|&`), and each only has to find
// the few constructs that run commands or write files, not to understand the whole language.
#include "classifier/code_runners.hpp"

#include <cctype>

namespace paddock::classifier {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::size_t skip_blanks(std::string_view t, std::size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t')) ++i;
  return i;
}

// A quoted literal at t[i] (the quote char), its content and the index past it; npos if not
// closed. Backslash escapes are kept as written except \" and \\.
std::size_t read_literal(std::string_view t, std::size_t i, std::string& out) {
  const char q = t[i];
  out.clear();
  for (std::size_t k = i + 1; k < t.size(); ++k) {
    if (t[k] == '\\' && k + 1 < t.size() && q != '\'') {
      const char n = t[k + 1];
      if (n == q || n == '\\') {
        out += n;
      } else if (n == 'n') {
        out += '\n';
      } else {
        out += t.substr(k, 2);
      }
      ++k;
      continue;
    }
    if (t[k] == q) return k + 1;
    out += t[k];
  }
  return std::string_view::npos;
}

// `IDENT` at a word boundary, starting at i.
bool word_at(std::string_view t, std::size_t i, std::string_view word) {
  if (t.substr(i, word.size()) != word) return false;
  if (i > 0 && ident_char(t[i - 1])) return false;
  const std::size_t end = i + word.size();
  return end >= t.size() || !ident_char(t[end]);
}

bool has_word(std::string_view t, std::string_view word) {
  for (std::size_t i = t.find(word); i != std::string_view::npos; i = t.find(word, i + 1)) {
    if (word_at(t, i, word)) return true;
  }
  return false;
}

}  // namespace

Findings awk_program(std::string_view t) {
  Findings out;
  std::string lit, last_literal;
  std::size_t last_literal_end = std::string_view::npos;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '"') {
      const std::size_t end = read_literal(t, i, lit);
      if (end == std::string_view::npos) break;
      last_literal = lit;
      last_literal_end = end;
      i = end - 1;
      continue;
    }
    if (c == '#') {  // a comment to the end of the line
      const auto nl = t.find('\n', i);
      if (nl == std::string_view::npos) break;
      i = nl;
      continue;
    }
    if (word_at(t, i, "system")) {
      std::size_t k = skip_blanks(t, i + 6);
      if (k < t.size() && t[k] == '(') {
        k = skip_blanks(t, k + 1);
        std::size_t end = k < t.size() && t[k] == '"' ? read_literal(t, k, lit) : t.npos;
        if (end != t.npos && skip_blanks(t, end) < t.size() && t[skip_blanks(t, end)] == ')') {
          out.push_back({Finding::Kind::script, lit});
        } else {
          out.push_back({Finding::Kind::opaque, "awk system() of a command built at run time"});
        }
      }
      i += 5;
      continue;
    }
    if (c == '|' && i + 1 < t.size() && t[i + 1] == '|') {
      ++i;
      continue;
    }
    if (c == '|') {
      // `print | "cmd"`, `print |& "cmd"`, `"cmd" | getline`, `cmd | getline` (a variable).
      std::size_t k = skip_blanks(t, i + 1 + (i + 1 < t.size() && t[i + 1] == '&'));
      if (word_at(t, k, "getline")) {
        if (last_literal_end != t.npos && skip_blanks(t, last_literal_end) == i) {
          out.push_back({Finding::Kind::script, last_literal});
        } else {
          out.push_back({Finding::Kind::opaque, "awk reads a command built at run time"});
        }
      } else if (k < t.size() && t[k] == '"' && read_literal(t, k, lit) != t.npos) {
        // The command reads what awk prints: as a stage after a program whose output is not
        // known (a shell there runs it).
        out.push_back({Finding::Kind::script, "cat | " + lit});
      } else {
        out.push_back({Finding::Kind::opaque, "awk pipes into a command built at run time"});
      }
      continue;
    }
    if (c == '>') {
      // print > "file", print >> "file"
      std::size_t k = skip_blanks(t, i + 1 + (i + 1 < t.size() && t[i + 1] == '>'));
      if (k < t.size() && t[k] == '"' && read_literal(t, k, lit) != t.npos)
        out.push_back({Finding::Kind::writes, lit});
    }
  }
  return out;
}

Findings sed_script(std::string_view t) {
  Findings out;
  std::size_t i = 0;
  const auto to_eol = [&](std::size_t from) {
    std::size_t e = t.find('\n', from);
    return e == t.npos ? t.size() : e;
  };
  const auto skip_delimited = [&](std::size_t from, char d) {  // past the closing d
    for (std::size_t k = from; k < t.size(); ++k) {
      if (t[k] == '\\') {
        ++k;
        continue;
      }
      if (t[k] == d) return k + 1;
    }
    return t.size();
  };
  while (i < t.size()) {
    while (i < t.size() && (std::isspace(static_cast<unsigned char>(t[i])) || t[i] == ';')) ++i;
    // Addresses: 1, $, /re/, \%re%, first~step, addr1,addr2, addr!, +N, ~N.
    for (int n = 0; n < 8 && i < t.size(); ++n) {
      const char c = t[i];
      if (std::isdigit(static_cast<unsigned char>(c)) || c == '$' || c == ',' || c == '~' ||
          c == '!' || c == '+' || c == ' ') {
        ++i;
        --n;
      } else if (c == '/') {
        i = skip_delimited(i + 1, '/');
        while (i < t.size() && (t[i] == 'I' || t[i] == 'M')) ++i;
      } else if (c == '\\' && i + 1 < t.size()) {
        i = skip_delimited(i + 2, t[i + 1]);
      } else {
        break;
      }
    }
    if (i >= t.size()) break;
    const char cmd = t[i++];
    switch (cmd) {
      case 's': {
        if (i >= t.size()) return out;
        const char d = t[i];
        const std::size_t pattern_end = skip_delimited(i + 1, d);
        const std::size_t repl_end = skip_delimited(pattern_end, d);
        const std::string_view replacement =
            repl_end > pattern_end ? t.substr(pattern_end, repl_end - pattern_end - 1) : "";
        std::size_t k = repl_end;
        bool exec = false;
        while (k < t.size() && t[k] != ';' && t[k] != '\n' && t[k] != '}') {
          if (t[k] == 'e') exec = true;
          if (t[k] == 'w') {  // w FILE: to the end of the line
            const std::size_t e = to_eol(k + 1);
            std::string file(t.substr(skip_blanks(t, k + 1), e - skip_blanks(t, k + 1)));
            out.push_back({Finding::Kind::writes, file});
            k = e;
            break;
          }
          ++k;
        }
        if (exec) {
          // The pattern space after the substitution runs: exactly the replacement only when
          // the pattern takes the whole line and the replacement refers to nothing of it.
          const std::string_view pattern =
              pattern_end > i + 1 ? t.substr(i + 1, pattern_end - i - 2) : "";
          const bool whole_line = pattern == ".*" || pattern == "^.*$" || pattern == "^.*";
          if (whole_line && replacement.find('&') == t.npos && replacement.find('\\') == t.npos) {
            out.push_back({Finding::Kind::script, std::string(replacement)});
          } else {
            out.push_back({Finding::Kind::opaque, "sed s///e runs the edited input as a command"});
          }
        }
        i = k;
        break;
      }
      case 'y':
        if (i < t.size()) i = skip_delimited(skip_delimited(i + 1, t[i]), t[i]);
        break;
      case 'e': {
        const std::size_t e = to_eol(i);
        std::string command(t.substr(skip_blanks(t, i), e - skip_blanks(t, i)));
        if (command.empty()) {
          out.push_back({Finding::Kind::opaque, "sed e runs the input as a command"});
        } else {
          out.push_back({Finding::Kind::script, command});
        }
        i = e;
        break;
      }
      case 'w':
      case 'W': {
        const std::size_t e = to_eol(i);
        out.push_back({Finding::Kind::writes,
                       std::string(t.substr(skip_blanks(t, i), e - skip_blanks(t, i)))});
        i = e;
        break;
      }
      case 'a':
      case 'i':
      case 'c':
        // text to the end of the line, and on while a line ends with a backslash
        i = to_eol(i);
        while (i < t.size() && i > 0 && t[i - 1] == '\\') i = to_eol(i + 1);
        break;
      case 'r':
      case 'R':
        i = to_eol(i);  // a file to read: to the end of the line
        break;
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'q':
      case 'Q':
      case 'l':
      case 'L':
      case 'v':
      case 'F':
      case 'z':
        // a label or a number: to `;` or the end of the line (GNU)
        while (i < t.size() && t[i] != ';' && t[i] != '\n' && t[i] != '}') ++i;
        break;
      default:
        break;  // { } = d D g G h H n N p P x and unknown ones take nothing
    }
  }
  return out;
}

Findings makefile_text(std::string_view t) {
  Findings out;
  // $(shell ...) and ${shell ...}, balanced.
  for (std::size_t i = 0; i + 8 < t.size(); ++i) {
    if (t[i] != '$' || (t[i + 1] != '(' && t[i + 1] != '{') || t.substr(i + 2, 6) != "shell ")
      continue;
    const char open = t[i + 1], close = open == '(' ? ')' : '}';
    int depth = 1;
    std::size_t k = i + 2;
    for (; k < t.size() && depth > 0; ++k) {
      if (t[k] == open) ++depth;
      if (t[k] == close) --depth;
    }
    out.push_back({Finding::Kind::script, std::string(t.substr(i + 8, k - i - 9))});
  }
  // Recipes: lines that start with a tab, and what follows `;` on a rule line.
  std::size_t start = 0;
  while (start < t.size()) {
    std::size_t end = t.find('\n', start);
    if (end == t.npos) end = t.size();
    std::string_view line = t.substr(start, end - start);
    std::string_view recipe;
    if (!line.empty() && line[0] == '\t') {
      recipe = line.substr(1);
    } else if (const auto colon = line.find(':'); colon != line.npos &&
                                                  line.substr(colon, 2) != ":=" &&
                                                  line.find(';', colon) != line.npos) {
      recipe = line.substr(line.find(';', colon) + 1);
    }
    while (!recipe.empty() && (recipe[0] == '@' || recipe[0] == '-' || recipe[0] == '+' ||
                               recipe[0] == ' ' || recipe[0] == '\t'))
      recipe.remove_prefix(1);
    if (!recipe.empty()) out.push_back({Finding::Kind::script, std::string(recipe)});
    start = end + 1;
  }
  return out;
}

Findings perl_or_ruby(std::string_view t) {
  Findings out;
  const bool loops = has_word(t, "while") || has_word(t, "until") || has_word(t, "for") ||
                     has_word(t, "loop") || has_word(t, "redo") || has_word(t, "times");
  std::string lit;
  // fork in a loop, after a label (goto) or in a sub/def that may call itself
  if (has_word(t, "fork") &&
      (loops || has_word(t, "goto") || has_word(t, "sub") || has_word(t, "def")))
    out.push_back({Finding::Kind::fork_bomb, "fork in a loop or in recursion"});
  if (has_word(t, "public_send") || has_word(t, "send") || has_word(t, "__send__") ||
      has_word(t, "const_get") || has_word(t, "method"))
    out.push_back({Finding::Kind::opaque, "a method called by a name built at run time"});
  // open(F, ">/etc/passwd"), File.write("/etc/passwd"), IO.write
  for (std::size_t i = t.find(">/"); i != t.npos; i = t.find(">/", i + 1)) {
    const auto end = t.find_first_of("\"' );", i + 1);
    out.push_back({Finding::Kind::writes,
                   std::string(t.substr(i + 1, end == t.npos ? t.npos : end - i - 1))});
  }
  for (std::string_view writer : {"File.write", "IO.write", "File.open"}) {
    for (std::size_t i = t.find(writer); i != t.npos; i = t.find(writer, i + 1)) {
      std::size_t k = skip_blanks(t, i + writer.size());
      if (k < t.size() && t[k] == '(') k = skip_blanks(t, k + 1);
      if (k < t.size() && (t[k] == '\'' || t[k] == '"') && read_literal(t, k, lit) != t.npos &&
          (writer != "File.open" || t.find("\"w", k) != t.npos || t.find("'w", k) != t.npos))
        out.push_back({Finding::Kind::writes, lit});
    }
  }
  const bool sock = has_word(t, "socket") || has_word(t, "Socket") ||
                    t.find("TCPSocket") != t.npos || t.find("IO::Socket") != t.npos;
  if (sock && (has_word(t, "exec") || has_word(t, "system") || t.find("/bin/") != t.npos ||
               has_word(t, "open") || has_word(t, "dup2") || has_word(t, "reopen")))
    out.push_back({Finding::Kind::reverse_shell, "a socket and a shell"});

  for (std::string_view runner :
       {"system", "exec", "spawn", "qx", "popen", "syscall", "readpipe"}) {
    for (std::size_t i = t.find(runner); i != t.npos; i = t.find(runner, i + 1)) {
      if (!word_at(t, i, runner)) continue;
      std::size_t k = skip_blanks(t, i + runner.size());
      if (k < t.size() && t[k] == '(') k = skip_blanks(t, k + 1);
      const bool quoted = k < t.size() && (t[k] == '\'' || t[k] == '"');
      const std::size_t end = quoted ? read_literal(t, k, lit) : t.npos;
      const std::size_t after = end == t.npos ? t.npos : skip_blanks(t, end);
      const bool alone = after != t.npos && (after == t.size() || t[after] == ')' ||
                                             t[after] == ';' || t[after] == '}');
      const bool interpolates =
          quoted && t[k] == '"' &&
          (lit.find('$') != lit.npos || lit.find("#{") != lit.npos || lit.find('@') != lit.npos);
      if (alone && !interpolates) {
        out.push_back({Finding::Kind::script, lit});
      } else {
        out.push_back(
            {Finding::Kind::opaque, std::string(runner) + " of a command built at run time"});
      }
    }
  }
  // `...` and %x(...) run a command line; #{...} or $var inside make it one built at run time.
  for (std::size_t i = t.find('`'); i != t.npos; i = t.find('`', i + 1)) {
    const std::size_t end = t.find('`', i + 1);
    if (end == t.npos) break;
    const std::string_view cmd = t.substr(i + 1, end - i - 1);
    if (cmd.find('$') != t.npos || cmd.find("#{") != t.npos) {
      out.push_back({Finding::Kind::opaque, "backticks around a command built at run time"});
    } else {
      out.push_back({Finding::Kind::script, std::string(cmd)});
    }
    i = end;
  }
  if (t.find("%x") != t.npos || t.find("IO.popen") != t.npos || t.find("Open3") != t.npos ||
      (has_word(t, "open") && t.find("|") != t.npos))
    out.push_back({Finding::Kind::opaque, "a pipe to or from a command"});
  if (has_word(t, "eval") || has_word(t, "instance_eval") || has_word(t, "class_eval"))
    out.push_back({Finding::Kind::opaque, "eval of code built at run time"});
  for (std::string_view remover : {"rmtree", "remove_tree", "rm_rf", "rm_r", "remove_dir",
                                   "remove_entry", "remove_entry_secure"}) {
    for (std::size_t i = t.find(remover); i != t.npos; i = t.find(remover, i + 1)) {
      if (!word_at(t, i, remover)) continue;
      std::size_t k = skip_blanks(t, i + remover.size());
      if (k < t.size() && t[k] == '(') k = skip_blanks(t, k + 1);
      if (k < t.size() && (t[k] == '\'' || t[k] == '"') && read_literal(t, k, lit) != t.npos)
        out.push_back({Finding::Kind::removes, lit});
    }
  }
  return out;
}

Findings other_language(std::string_view t) {
  Findings out;
  for (std::string_view name :
       {"system",    "exec",          "shell_exec",      "passthru",
        "proc_open", "popen",         "pcntl_exec",      "pcntl_fork",
        "eval",      "assert",        "execute",         "Invoke-Expression",
        "iex",       "Start-Process", "do shell script", "socket",
        "fork",      "unlink",        "rmdir",           "file_put_contents"}) {
    if (has_word(t, name)) {
      out.push_back(
          {Finding::Kind::opaque, std::string(name) + " in code this analysis cannot read"});
      break;
    }
  }
  if (t.find('`') != std::string_view::npos)
    out.push_back({Finding::Kind::opaque, "backticks in code this analysis cannot read"});
  return out;
}

}  // namespace paddock::classifier
