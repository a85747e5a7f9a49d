#include "config/commands_section.hpp"

#include <optional>
#include <string_view>

namespace paddock::configuration {
namespace {

Decision get_decision(const json& v, const std::string& path) {
  const std::string s = get_string(v, path);
  for (Decision d :
       {Decision::allow, Decision::sandboxed, Decision::escalated, Decision::forbidden}) {
    if (s == to_string(d)) return d;
  }
  fail(path, "expected \"allow\", \"sandboxed\", \"escalated\" or \"forbidden\", got " + v.dump());
}

std::vector<std::string> get_match(const json& v, const std::string& path) {
  std::vector<std::string> words;
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    std::size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && s[i] == ' ') ++i;
      std::size_t j = s.find(' ', i);
      if (j == std::string::npos) j = s.size();
      if (j > i) words.push_back(s.substr(i, j - i));
      i = j;
    }
  } else if (v.is_array()) {
    words = get_string_list(v, path);
  } else {
    fail(path, "expected a string of words or an array of words, " + got(v));
  }
  if (words.empty()) fail(path, "no words: name at least the program");
  return words;
}

}  // namespace

void read_commands_section(const json& v, const std::string& path, Config::Commands& out) {
  const Field fields[] = {
      {"classify", [&](const json& x, const std::string& p) { out.classify = get_bool(x, p); }},
      {"pathGuard", [&](const json& x, const std::string& p) { out.path_guard = get_bool(x, p); }},
      {"approvalTimeoutSeconds",
       [&](const json& x, const std::string& p) { out.approval_timeout = get_seconds(x, p); }},
      {"rules",
       [&](const json& x, const std::string& p) {
         if (!x.is_array()) fail(p, "expected an array of rules, " + got(x));
         out.custom.rules.clear();
         for (std::size_t i = 0; i < x.size(); ++i) {
           CommandRule rule;
           bool have_match = false, have_decision = false;
           const Field rule_fields[] = {
               {"match",
                [&](const json& y, const std::string& q) {
                  rule.match = get_match(y, q);
                  have_match = true;
                }},
               {"decision",
                [&](const json& y, const std::string& q) {
                  rule.decision = get_decision(y, q);
                  have_decision = true;
                }},
               {"description",
                [&](const json& y, const std::string& q) { rule.description = get_string(y, q); }},
           };
           const std::string where = index(p, i);
           read_section(x[i], where, rule_fields);
           if (!have_match) fail(where, "a rule needs \"match\"");
           if (!have_decision) fail(where, "a rule needs \"decision\"");
           out.custom.rules.push_back(std::move(rule));
         }
       }},
      {"overrides",
       [&](const json& x, const std::string& p) {
         if (!x.is_object()) fail(p, "expected an object of rule name -> decision, " + got(x));
         out.custom.overrides.clear();
         for (const auto& [name, d] : x.items()) {
           out.custom.overrides[name] = get_decision(d, child(p, name));
         }
       }},
      {"allowPrograms",
       [&](const json& x, const std::string& p) {
         out.custom.allow_programs = get_string_list(x, p);
       }},
      {"denyPrograms",
       [&](const json& x, const std::string& p) {
         out.custom.deny_programs = get_string_list(x, p);
       }},
  };
  read_section(v, path, fields);
  validate(out.custom, path);
}

}  // namespace paddock::configuration
