#!/bin/sh
# Every C++ file of the tree is formatted as .clang-format says (run by ctest, so CI fails on a
# file that is not). Skips (77) where clang-format is missing.
command -v clang-format >/dev/null 2>&1 || { echo "clang-format is not installed: skipped"; exit 77; }
cd "$1" || exit 1
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files '*.cpp' '*.hpp')
else
  files=$(find src net proxy sandbox tests bench examples -name '*.cpp' -o -name '*.hpp')
fi
# shellcheck disable=SC2086  # one word per file name (the tree has no spaces in them)
clang-format --dry-run --Werror $files || {
  echo "clang-format: the files above differ; run: clang-format -i \$(git ls-files '*.cpp' '*.hpp')"
  exit 1
}
