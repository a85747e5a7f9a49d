#include "classifier/script_state.hpp"

#include <algorithm>
#include <cctype>

#include "classifier/rule_matchers.hpp"

namespace paddock::classifier {
namespace {

bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> components(std::string_view p) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < p.size()) {
    while (i < p.size() && p[i] == '/') ++i;
    const std::size_t j = p.find('/', i);
    const std::string_view part = p.substr(i, j == std::string_view::npos ? p.npos : j - i);
    i = j == std::string_view::npos ? p.size() : j;
    if (!part.empty()) out.emplace_back(part);
  }
  return out;
}

// `.` and `..` applied lexically; an absolute path never climbs above `/`, a relative one
// keeps the `..` it cannot apply.
std::string lexical(std::string_view p) {
  const bool absolute = !p.empty() && p[0] == '/';
  std::vector<std::string> parts;
  for (auto& c : components(p)) {
    if (c == ".") continue;
    if (c == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!absolute) {
        parts.push_back(c);
      }
      continue;
    }
    parts.push_back(std::move(c));
  }
  std::string out = absolute ? "" : ".";
  for (const auto& c : parts) {
    if (out == ".") out.clear();
    out += (out.empty() && !absolute ? "" : "/") + c;
  }
  if (out.empty()) out = absolute ? "/" : ".";
  return out;
}

// A path walked the way the kernel walks it, component by component: `..` climbs from where
// the walk is, so /proc/self/root/.. is `/` and /proc/self/cwd/.. the working directory's
// parent (collapsing `..` first would make them /proc/self). /proc/<pid>/root is the root;
// another process's cwd is not known: taken as the root (the worst case). A relative path
// from an unknown directory stays relative, its leading `..` kept.
std::string walk(std::string_view p, const std::string& cwd) {
  bool unknown = p.empty() || p[0] != '/';
  std::vector<std::string> at;      // the directory reached, as components
  std::vector<std::string> climbs;  // `..` above an unknown starting directory
  for (auto& c : components(p)) {
    if (c == ".") continue;
    if (c == "..") {
      if (!at.empty()) {
        at.pop_back();
      } else if (unknown) {
        climbs.push_back("..");
      }
      continue;
    }
    at.push_back(std::move(c));
    if (!unknown && at.size() == 3 && at[0] == "proc" &&
        (at[1] == "self" || at[1] == "thread-self" || digits(at[1]))) {
      const bool self = !digits(at[1]);
      if (at[2] == "root" || (at[2] == "cwd" && !self)) {
        at.clear();
      } else if (at[2] == "cwd" && !cwd.empty()) {
        at = components(cwd);
      } else if (at[2] == "cwd") {
        at.clear();
        unknown = true;  // this process's working directory, not known
      }
    }
  }
  std::string out;
  for (const auto& c : climbs) out += (out.empty() ? "" : "/") + c;
  for (const auto& c : at) out += (out.empty() && unknown ? "" : "/") + c;
  if (out.empty()) out = unknown ? "." : "/";
  return out;
}

std::string resolve_one(std::string_view raw, const std::string& cwd, const std::string& home) {
  std::string t;
  for (char c : raw) {
    if (c != '"' && c != '\'') t += c;
  }
  if (t.empty()) return t;
  for (std::string_view h : {"${HOME}", "$HOME"}) {
    if (t.starts_with(h) && (t.size() == h.size() || t[h.size()] == '/')) {
      t = "~" + t.substr(h.size());
      break;
    }
  }
  // `${HOME%/}` (a trailing slash removed) and `${HOME:-x}`, `${HOME-x}`, `${HOME:?x}`,
  // `${HOME?x}` (a default or an error when it is unset): the home, where HOME is set.
  if (t.starts_with("${HOME") && t.size() > 7) {
    const auto close = t.find('}');
    const std::string_view op = std::string_view(t).substr(6, close == t.npos ? 0 : close - 6);
    const bool home_itself = op == "%/" || op == "%%/" || op.starts_with(":-") ||
                             op.starts_with("-") || op.starts_with(":?") || op.starts_with("?");
    if (close != t.npos && home_itself && op.find_first_of("$`") == std::string_view::npos) {
      t = "~" + t.substr(close + 1);
    }
  }
  if (t[0] == '~') {
    const auto slash = t.find('/');
    const std::string user = t.substr(1, slash == std::string::npos ? t.npos : slash - 1);
    const std::string rest = slash == std::string::npos ? "" : t.substr(slash);
    // ~ is the home, ~+ the working directory, ~- the previous one (not known), ~user theirs.
    std::string base = user.empty()     ? home
                       : user == "+"    ? cwd
                       : user == "-"    ? std::string()
                       : user == "root" ? std::string("/root")
                                        : "/home/" + user;
    if (base.empty()) return "~" + user + (rest.empty() ? "" : walk(rest, ""));
    t = base + rest;
  }
  if (t[0] != '/' && !cwd.empty()) t = cwd + "/" + t;
  return walk(t, cwd);
}

bool trusted_path_entry(std::string_view raw) {
  if (raw.empty() || raw[0] != '/') return false;  // "", ".", relative: wherever the command is
  const std::string normal = lexical(raw);         // /usr/../tmp is /tmp
  const std::string_view e = normal;
  for (std::string_view dir : {"/usr/", "/bin", "/sbin", "/snap/", "/nix/"}) {
    if (e.starts_with(dir)) return true;
  }
  if (e.starts_with("/tmp") || e.starts_with("/var/tmp") || e.starts_with("/dev/shm")) return false;
  // A toolchain's bin directory (~/.cargo/bin, /work/x/node_modules/.bin, .venv/bin).
  return e.ends_with("/bin") || e.ends_with("/.bin") || e.ends_with("/sbin");
}

}  // namespace

std::vector<std::string> resolve_path(std::string_view raw, const PathContext& where) {
  std::vector<std::string> out;
  const std::vector<std::string> unknown = {""};
  for (const auto& cwd : where.cwds.empty() ? unknown : where.cwds) {
    std::string r = resolve_one(raw, cwd, where.home);
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(std::move(r));
  }
  return out;
}

ScriptState::ScriptState(std::string cwd, std::string home,
                         const std::map<std::string, std::string>& env) {
  paths_.workdir = cwd;
  paths_.cwds.push_back(std::move(cwd));
  paths_.home = std::move(home);
  vars_["IFS"] = {std::string(" \t\n")};  // bash's default: `rm${IFS}-rf${IFS}/` splits
  for (const auto& [name, value] : env) vars_[name] = {value};
  if (!paths_.home.empty() && vars_.count("HOME") == 0) vars_["HOME"] = {paths_.home};
  if (!paths_.cwds[0].empty()) vars_["PWD"] = {paths_.cwds[0]};
}

void ScriptState::set(const std::string& name, std::optional<std::string> value) {
  auto& values = vars_[name];
  if (std::find(values.begin(), values.end(), value) != values.end()) return;
  if (values.size() >= kMaxValues) value = std::nullopt;
  if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
}

const std::vector<std::optional<std::string>>* ScriptState::values(const std::string& name) const {
  const auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : &it->second;
}

void ScriptState::learn_assignments(const std::vector<SimpleCommand>& commands) {
  std::vector<std::pair<std::string, std::string>> namerefs;
  for (const auto& c : commands) {
    const bool nameref =
        !c.words.empty() && std::any_of(c.words.begin() + 1, c.words.end(), [](const Word& w) {
          return !w.dynamic && w.text.size() > 1 && w.text[0] == '-' &&
                 w.text.find('n') != std::string::npos;
        });
    for (const auto& a : c.sets) {
      if (a.name.empty()) continue;
      if (a.name == "PATH") {
        path_changed_ = true;
        // The entries searched before the old PATH: each must be a system or toolchain bin.
        std::string joined;
        for (const auto& p : a.value.pieces) {
          if (p.kind == Piece::Kind::literal) joined += p.text;
          if (p.kind == Piece::Kind::variable) joined += p.text == "PATH" ? "\x01" : "\x02";
          if (p.kind == Piece::Kind::opaque) joined += "\x02";
        }
        if (a.value.pieces.empty()) joined = a.value.text;
        std::size_t start = 0;
        while (start <= joined.size()) {
          std::size_t colon = joined.find(':', start);
          if (colon == std::string::npos) colon = joined.size();
          const std::string entry = joined.substr(start, colon - start);
          if (entry == "\x01") break;
          if (entry.find('\x02') != std::string::npos || !trusted_path_entry(entry))
            path_hijacked_ = true;
          start = colon + 1;
        }
      }
      if (a.unknown) {
        set(a.name, std::nullopt);
        continue;
      }
      for (const auto& element : a.elements) {
        for (const auto& alt : expand(element)) {
          set(a.name, alt.size() == 1 && !alt[0].dynamic ? std::optional<std::string>(alt[0].text)
                                                         : std::nullopt);
        }
      }
      if (!a.elements.empty()) continue;
      if (nameref) {  // declare -n r=x: r is x
        namerefs.emplace_back(a.name, a.value.text);
        continue;
      }
      for (const auto& alt : expand(a.value)) {
        std::string text;
        bool dynamic = false;
        for (const auto& w : alt) {
          text += (text.empty() ? "" : " ") + w.text;
          dynamic |= w.dynamic;
        }
        if (alt.empty()) text.clear();
        set(a.name, dynamic ? std::nullopt : std::optional<std::string>(text));
      }
    }
    // read NAME, mapfile NAME, getopts OPTS NAME, printf -v NAME: values from the run, or
    // known when the command line gave them (`read x <<< /`, `printf -v x %s /etc`).
    if (c.words.empty() || c.words[0].dynamic) continue;
    const std::string& p = c.words[0].text;
    if (p == "printf" && c.words.size() >= 4 && c.words[1].text == "-v" && !c.words[2].dynamic) {
      const std::string& format = c.words[3].text;
      std::optional<std::string> value;
      if (!c.words[3].dynamic && format.find_first_of("%\\") == std::string::npos) {
        value = format;
      } else if (format == "%s" && c.words.size() == 5 && !c.words[4].dynamic) {
        value = c.words[4].text;
      }
      assigned(c.words[2].text, value);
      continue;
    }
    if (p == "read" && c.stdin_texts.size() == 1 && !c.stdin_texts[0].dynamic) {
      std::vector<std::string> names;
      for (std::size_t i = 1; i < c.words.size(); ++i) {
        if (!c.words[i].text.starts_with("-")) names.push_back(c.words[i].text);
        if (c.words[i].text == "-p" || c.words[i].text == "-d" || c.words[i].text == "-t" ||
            c.words[i].text == "-n" || c.words[i].text == "-u")
          ++i;
      }
      if (names.size() == 1) {
        std::string line = c.stdin_texts[0].text.substr(0, c.stdin_texts[0].text.find('\n'));
        assigned(names[0], line);
        continue;
      }
    }
    if (p == "read" || p == "mapfile" || p == "readarray" || p == "getopts" || p == "printf" ||
        p == "select") {
      for (std::size_t i = 1; i < c.words.size(); ++i) {
        const std::string& w = c.words[i].text;
        if (w.empty() || c.words[i].dynamic ||
            !(std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_'))
          continue;
        if (std::all_of(w.begin(), w.end(), [](char ch) {
              return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
            }))
          assigned(w, std::nullopt);
      }
    }
  }
  for (const auto& [name, target] : namerefs) {
    if (const auto* values = this->values(target)) {
      for (const auto& value : std::vector<std::optional<std::string>>(*values)) set(name, value);
    } else {
      set(name, std::nullopt);
    }
  }
}

// A value given by a command (read, printf -v): PATH given one it cannot vouch for is a hijack.
void ScriptState::assigned(const std::string& name, std::optional<std::string> value) {
  if (name == "PATH") {
    path_changed_ = true;
    if (!value || !trusted_path_entry(value->substr(0, value->find(':')))) path_hijacked_ = true;
  }
  set(name, std::move(value));
}

void ScriptState::change_directory(const std::vector<Word>& args, bool only_there) {
  std::vector<Word> operands;
  for (const auto& a : args) {
    if (!a.dynamic && a.text.size() > 1 && a.text[0] == '-' && operands.empty()) continue;
    operands.push_back(a);
  }
  std::vector<std::string> targets;
  if (operands.empty()) {
    targets.push_back(paths_.home);
  } else if (!operands[0].dynamic && operands[0].text == "-") {
    targets.push_back("");
  } else {
    for (const auto& alt : expand(operands[0])) {
      if (alt.empty() || alt[0].dynamic) {
        targets.push_back("");
        continue;
      }
      for (auto& r : resolve_path(alt[0].text, paths_)) {
        targets.push_back(!r.empty() && r[0] == '/' ? r : std::string());
      }
    }
  }
  if (only_there) paths_.cwds.clear();
  for (auto& t : targets) {
    if (std::find(paths_.cwds.begin(), paths_.cwds.end(), t) != paths_.cwds.end()) continue;
    if (paths_.cwds.size() >= kMaxValues) t.clear();
    if (std::find(paths_.cwds.begin(), paths_.cwds.end(), t) == paths_.cwds.end())
      paths_.cwds.push_back(t);
  }
}

std::vector<std::vector<Word>> ScriptState::expand(const Word& w) const {
  // Brace expansion of an unquoted literal (`git p{u,}sh` is `git push psh`).
  const auto open = w.text.find('{');
  if (!w.dynamic && open != std::string::npos && w.text.find(',', open) != std::string::npos &&
      w.text.find('}', open) != std::string::npos &&
      std::any_of(w.pieces.begin(), w.pieces.end(), [](const Piece& p) {
        return !p.quoted && p.text.find('{') != std::string::npos;
      })) {
    std::vector<Word> words;
    for (auto& text : matchers::brace_alternatives(w.text)) {
      if (words.size() < kMaxVariants * 4) words.push_back({std::move(text), false, false, {}});
    }
    return {words};
  }
  if (!w.dynamic || w.pieces.empty()) return {{w}};
  // Brace expansion (`git p{u,}sh` is `git push psh`): one word becomes several.
  const bool braces = std::any_of(w.pieces.begin(), w.pieces.end(), [](const Piece& p) {
    return p.kind == Piece::Kind::opaque && p.text.starts_with("{") && p.text.ends_with("}") &&
           p.text.find(',') != std::string::npos && p.text.find('$') == std::string::npos;
  });
  if (braces && std::all_of(w.pieces.begin(), w.pieces.end(), [](const Piece& p) {
        return p.kind == Piece::Kind::literal ||
               (p.kind == Piece::Kind::opaque && p.text.starts_with("{"));
      })) {
    std::vector<std::string> words = {""};
    for (const auto& p : w.pieces) {
      std::vector<std::string> alternatives = {p.text};
      if (p.kind == Piece::Kind::opaque) {
        alternatives.clear();
        const std::string inner = p.text.substr(1, p.text.size() - 2);
        std::size_t from = 0;
        while (from <= inner.size() && alternatives.size() < kMaxVariants) {
          auto comma = inner.find(',', from);
          if (comma == std::string::npos) comma = inner.size();
          alternatives.push_back(inner.substr(from, comma - from));
          from = comma + 1;
        }
      }
      std::vector<std::string> next;
      for (const auto& prefix : words) {
        for (const auto& a : alternatives) {
          if (next.size() < kMaxVariants) next.push_back(prefix + a);
        }
      }
      words = std::move(next);
    }
    std::vector<Word> out;
    for (auto& text : words) out.push_back({std::move(text), false, false, {}});
    return {out};
  }
  struct Partial {
    std::string text;
    bool split = false;  // an unquoted expansion brought blanks
  };
  std::vector<Partial> partials = {{}};
  bool unknown = false;  // some value is not known: the word as it is is one more alternative
  for (const auto& p : w.pieces) {
    if (p.kind == Piece::Kind::opaque) return {{w}};
    if (p.kind == Piece::Kind::literal) {
      for (auto& part : partials) part.text += p.text;
      continue;
    }
    std::vector<std::optional<std::string>> indirect;
    const auto* vals = values(p.text);
    if (p.text.starts_with("!")) {  // ${!x}: the variables x names
      if (const auto* names = values(p.text.substr(1))) {
        for (const auto& n : *names) {
          const auto* named = n ? values(*n) : nullptr;
          if (named == nullptr) {
            indirect.push_back(std::nullopt);
          } else {
            indirect.insert(indirect.end(), named->begin(), named->end());
          }
        }
        vals = &indirect;
      }
    }
    std::vector<std::optional<std::string>> or_fallback;
    if (p.fallback) {  // ${x:-lit}: x's values (or not known), and the literal
      or_fallback = vals != nullptr && !vals->empty()
                        ? *vals
                        : std::vector<std::optional<std::string>>{std::nullopt};
      if (p.fallback->starts_with("$")) {  // ${x:-$y/rest}: y's values, then the rest
        const std::string& f = *p.fallback;
        std::size_t end = f.starts_with("${") ? f.find('}') + 1 : 1;
        while (!f.starts_with("${") && end < f.size() &&
               (f[end] == '_' || std::isalnum(static_cast<unsigned char>(f[end]))))
          ++end;
        const std::string name = f.starts_with("${") ? f.substr(2, end - 3) : f.substr(1, end - 1);
        const std::string rest = f.substr(end);
        const auto* other = values(name);
        if (other == nullptr || other->empty()) {
          or_fallback.push_back(std::nullopt);
        } else {
          for (const auto& o : *other)
            or_fallback.push_back(o ? std::optional<std::string>(*o + rest) : std::nullopt);
        }
      } else {
        or_fallback.push_back(*p.fallback);
      }
      vals = &or_fallback;
    }
    if (vals == nullptr || vals->empty()) return {{w}};
    std::vector<Partial> next;
    for (const auto& part : partials) {
      for (const auto& v : *vals) {
        if (!v || next.size() >= kMaxVariants) {
          unknown = true;
          continue;
        }
        const bool blanks = v->find_first_of(" \t\n") != std::string::npos;
        next.push_back({part.text + *v, part.split || (blanks && !p.quoted)});
      }
    }
    if (next.empty()) return {{w}};
    partials = std::move(next);
  }
  std::vector<std::vector<Word>> out;
  for (const auto& part : partials) {
    std::vector<Word> words;
    if (!part.split) {
      words.push_back({part.text, false, false, {}});
    } else {
      std::size_t i = 0;
      while (i < part.text.size()) {
        const auto b = part.text.find_first_not_of(" \t\n", i);
        if (b == std::string::npos) break;
        auto e = part.text.find_first_of(" \t\n", b);
        if (e == std::string::npos) e = part.text.size();
        words.push_back({part.text.substr(b, e - b), false, false, {}});
        i = e;
      }
    }
    out.push_back(std::move(words));
  }
  if (unknown) out.push_back({w});
  return out;
}

std::vector<std::vector<Word>> ScriptState::expand_all(const std::vector<Word>& words) const {
  std::vector<std::vector<Word>> out = {{}};
  for (const auto& w : words) {
    const auto alts = expand(w);
    std::vector<std::vector<Word>> next;
    for (const auto& prefix : out) {
      for (const auto& alt : alts) {
        if (next.size() >= kMaxVariants) break;
        auto v = prefix;
        v.insert(v.end(), alt.begin(), alt.end());
        next.push_back(std::move(v));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::string ScriptState::key(const std::string& path) const {
  const auto r = resolve_path(path, {{paths_.cwds.front()}, paths_.home, paths_.workdir});
  return r.empty() ? path : r.front();
}

void ScriptState::wrote(const std::string& path, WrittenFile f) {
  if (files_.size() >= 256) return;
  files_[key(path)] = std::move(f);
}

const WrittenFile* ScriptState::written(const std::string& path) const {
  const auto it = files_.find(key(path));
  return it == files_.end() ? nullptr : &it->second;
}

}  // namespace paddock::classifier
