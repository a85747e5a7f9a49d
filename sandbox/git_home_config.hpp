// The git config a hidden home gets in the sandbox (home_view.hpp): the home's own global
// config (~/.gitconfig, ~/.config/git/config) can hold credential helpers, tokens in URLs and
// extra headers, so the sandbox's ~/.gitconfig is written anew with only the settings that
// hold no secret and name no program or file: the identity, the default branch, pull, push,
// diff and merge habits, aliases without a URL (git_home_config.cpp lists them).
#pragma once

#include <string>

namespace paddock::sandbox {

// The text of that file for `home`, or "" when the home's config sets none of them. Cached
// per home while the files stay the same.
std::string git_home_config(const std::string& home);

}  // namespace paddock::sandbox
