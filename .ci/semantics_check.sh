#!/usr/bin/env bash
# Every promise number cited in the code, tests and docs (S14, S14-S16, S1..S49,
# s14_ in a test name) must be defined in docs/semantics.md as a list item
# starting with **S14**, and docs/semantics.md must define each of S1..S63 once.
set -euo pipefail
cd "$(dirname "$0")/.."

doc=docs/semantics.md
first=1
last=63
sources=(runtime macros examples ui-tests docs README.md ARCHITECTURE.md)

if [ ! -f "$doc" ]; then
  echo "semantics: $doc is missing" >&2
  exit 1
fi

# grep -o over the sources, the definitions themselves and build output left out.
cited_tokens() {
  grep -rhoIE --exclude-dir=target --exclude-dir=.git --exclude=semantics.md \
    -e "$1" "${sources[@]}" || true
}

cited=$(
  {
    # S14, and both ends of a range.
    cited_tokens '\bS[0-9]{1,2}\b' | tr -d 'S'
    # The numbers inside a range: S14-S16, S14–S16, S14..S16.
    cited_tokens '\bS[0-9]{1,2} ?(-|–|\.\.) ?S[0-9]{1,2}\b' |
      sed -E 's/^S([0-9]+)[^0-9]+([0-9]+)$/\1 \2/' |
      while read -r from to; do
        if [ "$from" -le "$to" ]; then seq "$from" "$to"; fi
      done
    # Test names: s14_..., and s10_s11_... (each number of the prefix).
    cited_tokens '\bs[0-9]{1,2}(_s[0-9]{1,2})*_' | grep -oE '[0-9]+'
  } | sed 's/^0*\([0-9]\)/\1/' | sort -n -u
)

defined_all=$(grep -oE '^- \*\*S[0-9]{1,2}\*\*' "$doc" | grep -oE '[0-9]+' | sort -n)
defined=$(echo "$defined_all" | sort -n -u)

status=0

duplicated=$(echo "$defined_all" | uniq -d)
if [ -n "$duplicated" ]; then
  echo "semantics: defined more than once in $doc: $(echo "$duplicated" | sed 's/^/S/' | tr '\n' ' ')" >&2
  status=1
fi

undefined=$(comm -23 <(echo "$cited" | sort) <(echo "$defined" | sort) | sort -n)
if [ -n "$undefined" ]; then
  echo "semantics: cited but not defined as **Sxx** in $doc:" >&2
  for n in $undefined; do
    echo "  S$n, cited in: $(grep -rlE --exclude-dir=target --exclude=semantics.md \
      -e "\bS$n\b|\bs([0-9]{1,2}_s)*${n}_" "${sources[@]}" | head -n 5 | tr '\n' ' ')" >&2
  done
  status=1
fi

missing=$(comm -23 <(seq "$first" "$last" | sort) <(echo "$defined" | sort) | sort -n)
if [ -n "$missing" ]; then
  echo "semantics: absent from $doc: $(echo "$missing" | sed 's/^/S/' | tr '\n' ' ')" >&2
  status=1
fi

extra=$(comm -13 <(seq "$first" "$last" | sort) <(echo "$defined" | sort) | sort -n)
if [ -n "$extra" ]; then
  echo "semantics: $doc defines numbers outside S$first..S$last: $(echo "$extra" | sed 's/^/S/' | tr '\n' ' ')" >&2
  status=1
fi

if [ "$status" -ne 0 ]; then
  exit 1
fi

promises=$(echo "$defined" | grep -c .)
n_cited=$(echo "$cited" | grep -c . || true)
echo "semantics: $promises promises, $n_cited cited, all resolve"
