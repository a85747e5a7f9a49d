// git's config file syntax, read by hand (git_config_syntax.cpp says why): sections, quoted
// subsections, keys, values with git's quoting, escapes, comments and line continuations.
// Reading stops where git would refuse the file.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace paddock::sandbox {

// Calls `on_setting("section.key", value)` for each variable of a section without a
// subsection (lower case; a key with no `=` has the empty value), and
// `on_include(path, conditional)` for `include.path` (false) and `includeIf.<cond>.path`
// (true), each where it stands in the text, so a caller following includes gets git's order.
void read_git_config(
    std::string_view text,
    const std::function<void(const std::string& key, const std::string& value)>& on_setting,
    const std::function<void(const std::string& path, bool conditional)>& on_include);

}  // namespace paddock::sandbox
