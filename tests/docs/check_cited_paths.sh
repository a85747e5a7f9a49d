#!/usr/bin/env bash
# Every document a comment, a script or a page cites exists: a path ending in `.md`, or a
# folder's README spelled without it (`bench/README`), found from the repository's top or
# from the citing file's folder. A page moved or never written (a `DESIGN.md` that lives
# outside the repository) fails here, naming the file and line that cite it.
# Usage: tests/docs/check_cited_paths.sh REPO
set -euo pipefail
repo=$(cd "${1:?usage: check_cited_paths.sh REPO}" && pwd)
cd "$repo"

# What is cited from: the production code, the build and bench scripts, the examples and
# every page. Tests are left out: their fixtures name files that exist only in a scratch tree
# (`cat README.md` as a command to classify).
mapfile -t files < <(
  find src sandbox net proxy cmake bench examples docs .ci -type f \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.c' -o -name '*.md' \
       -o -name '*.sh' -o -name '*.cmake' -o -name '*.txt' -o -name '*.py' -o -name '*.mjs' \
       -o -name '*.yaml' -o -name '*.in' -o -name 'run' -o -name 'dev' -o -name 'setup' \) \
    2>/dev/null
  ls ./*.md CMakeLists.txt 2>/dev/null
)
[ "${#files[@]}" -gt 50 ] || { echo "check_cited_paths: only ${#files[@]} files found in $repo" >&2; exit 1; }

missing=0 checked=0
for f in "${files[@]}"; do
  dir=$(dirname "$f")
  # file:line:match, one per cited path on the line
  while IFS= read -r hit; do
    line=${hit%%:*}
    cited=${hit#*:}
    cited=${cited#./}
    checked=$((checked + 1))
    for base in "$repo" "$repo/$dir"; do
      if [ -e "$base/$cited" ] || [ -e "$base/$cited.md" ]; then continue 2; fi
    done
    echo "$f:$line: cites $cited, which does not exist" >&2
    missing=$((missing + 1))
  done < <(grep -noE '([A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\.md\b|([A-Za-z0-9_.-]+/)+README\b' "$f" || true)
done
echo "check_cited_paths: $checked citations in ${#files[@]} files, $missing missing"
[ "$checked" -gt 20 ] || { echo "check_cited_paths: too few citations found: the pattern is broken" >&2; exit 1; }
[ "$missing" -eq 0 ]
