#!/usr/bin/env bash
# Formats every C and C++ source of the project with its one formatter (.clang-format, read by
# clang-format 14: Debian 12's `clang-format`; another version formats some lines differently).
#
#   scripts/format.sh          rewrite the files in place
#   scripts/format.sh --check  change nothing; list the files that are not formatted and fail
#
# The check is also the CTest test `format_check`. Exit status 77 when clang-format 14 is not
# installed (CTest reports the test as skipped, saying why).
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
[[ "${1:-}" == "--check" ]] && check=1

tool=""
for candidate in clang-format-14 clang-format; do
  if command -v "$candidate" >/dev/null && "$candidate" --version | grep -q 'version 14\.'; then
    tool=$candidate
    break
  fi
done
if [[ -z "$tool" ]]; then
  echo "format.sh: clang-format 14 is not installed (apt-get install clang-format on Debian 12); not checked" >&2
  exit 77
fi

# The project's own sources: never node_modules, build trees or fetched dependencies.
mapfile -t files < <(find src include apps tests python tools examples integrations \
  \( -name node_modules -o -name build -o -name .deps \) -prune -o \
  -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.c' -o -name '*.cc' -o -name '*.hpp' \) -print 2>/dev/null | sort)

if ((check == 0)); then
  "$tool" -i "${files[@]}"
  echo "formatted ${#files[@]} files"
  exit 0
fi

# One run over every file; its warnings name each line that differs.
if ! report=$("$tool" --dry-run --Werror "${files[@]}" 2>&1); then
  mapfile -t unformatted < <(grep -o '^[^:]*:[0-9]*:[0-9]*: error' <<<"$report" | cut -d: -f1 | sort -u)
  printf 'not formatted: %s\n' "${unformatted[@]}" >&2
  echo "format.sh: ${#unformatted[@]} of ${#files[@]} files differ from .clang-format; run scripts/format.sh" >&2
  exit 1
fi
echo "all ${#files[@]} files formatted"
