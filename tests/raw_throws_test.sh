#!/usr/bin/env bash
# No raw std exception outside the error root (docs/exit-status.md): dirsched throws dirsched::Error
# classes (core/include/dirsched/error.hpp), never `throw std::...` nor a std exception made to be
# thrown (`return std::runtime_error(...)`). Non-test C++ sources only; two exceptions: throw_for_test
# in cli/error_kind.hpp, which simulates library exceptions on purpose, and `throw std::bad_alloc()` in
# core/src/huge_pages.cpp, an allocator's contract (the CLI reports it as out of memory). Comments and
# build folders (those holding a CMakeCache.txt) are not read.
set -u
root=$1
std='std::(exception|runtime_error|logic_error|invalid_argument|out_of_range|length_error|domain_error|range_error|overflow_error|underflow_error|system_error|bad_alloc)'
prune=(-name .git -o -path "$root/tests")
while IFS= read -r cache; do prune+=(-o -path "$(dirname "$cache")"); done \
  < <(find "$root" -maxdepth 3 -name CMakeCache.txt)
files=$(find "$root" \( "${prune[@]}" \) -prune -o -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cc' \) -print)
[[ -n "$files" ]] || { echo "FAIL no sources under $root"; exit 1; }
hits=$(while IFS= read -r f; do
  awk -v file="${f#"$root"/}" -v std="$std" '
    # throw_for_test is the allowed place: from its signature to the closing brace at column 0.
    file == "cli/error_kind.hpp" && /^inline void throw_for_test\(/ { skip = 1 }
    skip { if (/^}/) skip = 0; next }
    file == "core/src/huge_pages.cpp" && /throw std::bad_alloc\(\);/ { next }
    {
      line = $0
      sub(/\/\/.*/, "", line)  # a comment may name what is refused
      if (line ~ ("throw[ \t]+" std) || line ~ (std "[ \t]*[({]") && line !~ /catch[ \t]*\(/ &&
          line !~ ("[:,][ \t]*public[ \t]+" std))
        print file ":" FNR ": " $0
    }' "$f"
done <<<"$files")
# The root itself derives from std::runtime_error and calls its constructor: that line only.
hits=$(grep -v '^core/include/dirsched/error.hpp:[0-9]*:   Error(ErrorKind kind, const std::string& what) : std::runtime_error(what)' <<<"$hits")
if [[ -n "$hits" ]]; then
  echo "FAIL raw std exceptions outside the error root (throw a dirsched::Error class, error.hpp):"
  echo "$hits"
  exit 1
fi
echo "raw throws: none outside throw_for_test ($(wc -l <<<"$files") sources read)"
