#!/usr/bin/env bash
# Mutation testing of hubprobe's packages with gremlins: it plants small
# bugs in a package's code one at a time (a < turned into <=, a + into -,
# a condition negated) and runs the package's tests against each. A mutant
# the tests do not notice ("LIVED") is a behaviour no test guards.
#
#   scripts/mutation.sh [DIR...] [-- GREMLINS_FLAGS...]
#   e.g. scripts/mutation.sh scenarios bench
#        scripts/mutation.sh scenarios -- -E 'plot\.go$' --invert-logical
#
# With no DIR, the packages whose Go files differ from main (committed or
# not). Each package runs alone, one after another, on its own code only
# (its subpackages are packages of their own: name them to include them).
# It is CPU-heavy, slower than the whole test suite, and not part of
# scripts/test.sh. Settings, from the environment:
#
#   HUBPROBE_MUTATION_BASE      the branch to compare with (main)
#   HUBPROBE_MUTATION_WORKERS   mutants tested at once (1)
#   HUBPROBE_MUTATION_TIMEOUT   gremlins' timeout coefficient: a mutant's
#                               tests may take this many times as long as
#                               the package's tests took unmutated (3)
#   HUBPROBE_MUTATION_OUT       where each package's log and JSON results go
#                               (/tmp/hubprobe-mutation)
#   GOFLAGS                     reaches every `go test` gremlins runs, e.g.
#                               GOFLAGS=-skip=TestAcceleratedSoak to leave out
#                               the slowest tests of a package
set -euo pipefail
cd "$(dirname "$0")/.."

# gremlins, at a pinned version, into $(go env GOPATH)/bin; a binary that
# is already that version is kept.
version=v0.6.0
gobin="$(go env GOPATH | cut -d: -f1)/bin"
gremlins="$gobin/gremlins"
if [ "$(go version -m "$gremlins" 2>/dev/null | awk '$1 == "mod" { print $3 }')" != "$version" ]; then
  echo "go install github.com/go-gremlins/gremlins/cmd/gremlins@$version"
  GOBIN="$gobin" go install "github.com/go-gremlins/gremlins/cmd/gremlins@$version"
fi

# changed_packages lists the directories of the Go files that differ from
# the base, uncommitted and untracked files included, that still hold
# code other than tests.
changed_packages() {
  local base=${HUBPROBE_MUTATION_BASE:-main} dir
  {
    git diff --name-only "$(git merge-base "$base" HEAD)" -- '*.go'
    git ls-files --others --exclude-standard -- '*.go'
  } | xargs -r -n1 dirname | sort -u | while read -r dir; do
    if compgen -G "$dir/*.go" >/dev/null && ls "$dir"/*.go | grep -qv '_test\.go$'; then
      echo "$dir"
    fi
  done
}

packages=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  packages+=("$1")
  shift
done
[ $# -gt 0 ] && shift # what follows -- goes to gremlins as it is
if [ ${#packages[@]} -eq 0 ]; then
  mapfile -t packages < <(changed_packages)
fi
if [ ${#packages[@]} -eq 0 ]; then
  echo "no package with code differs from ${HUBPROBE_MUTATION_BASE:-main}; name the packages to test" >&2
  exit 2
fi

# gremlins times each mutant against the unmutated coverage run: a cached
# test result there would make every mutant time out.
GOFLAGS="$(go env GOFLAGS) -count=1"
export GOFLAGS

out=${HUBPROBE_MUTATION_OUT:-/tmp/hubprobe-mutation}
mkdir -p "$out"
for dir in "${packages[@]}"; do
  dir=${dir%/}
  dir=${dir#./}
  name=${dir//\//_}
  echo "== gremlins on ./$dir (log and JSON results: $out/$name.*)"
  # -E / leaves out the files of subdirectories: other packages.
  "$gremlins" unleash "./$dir" -E / \
    --workers "${HUBPROBE_MUTATION_WORKERS:-1}" \
    --timeout-coefficient "${HUBPROBE_MUTATION_TIMEOUT:-3}" \
    --output "$out/$name.json" "$@" 2>&1 | tee "$out/$name.log"
done

echo
echo "== summary"
for dir in "${packages[@]}"; do
  dir=${dir%/}
  dir=${dir#./}
  log="$out/${dir//\//_}.log"
  if grep -q '^Killed' "$log"; then
    echo "$dir: $(grep -E '^(Killed|Timed out|Test efficacy|Mutator coverage)' "$log" | paste -sd ' ' -)"
  else
    echo "$dir: no mutant of the enabled kinds (or gremlins failed: see $log)"
  fi
  grep -E '^ *LIVED ' "$log" | sed 's/^ */  /' || true
done
