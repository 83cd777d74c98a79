#!/usr/bin/env bash
# `make test`: every phase, timed, failing fast. Molecule mostly waits on its
# containers and stand-ins (systemd, health windows, drains), so the static
# phases (lint, sanity, build, import, docs-lint, changelog-lint, ee) run
# beside it, one after another, and the pytest suites (on every core) after
# it - unit (in-process), then integration:
#
#   deps venv image | molecule (in the background, its output kept in
#   .build/molecule.log and printed when it ends)
#                   | lint sanity build import docs-lint changelog-lint ee
#   unit integration
#
# TEST_PARALLEL=0 runs every phase one after another (the output as it comes).
# Prints "=== PHASE ok (N ms)" per phase, then one "=== times:" line with each
# phase's own wall time, "molecule" measured from its start to its end, and the
# total wall time of the run; a failed phase ends the run ("=== PHASE FAILED").
# Usage (from the Makefile): scripts/make_test.sh MAKE "SEQUENTIAL PHASES" "BESIDE PHASES" "LAST PHASES"
set -uo pipefail
MAKE_CMD="$1"; FIRST="$2"; BESIDE="$3"; LAST="$4"
PARALLEL="${TEST_PARALLEL:-1}"
BUILD=.build
mkdir -p "$BUILD"
summary=""
t_all=$(date +%s%N)

ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
note() { summary="$summary $1=$(( $2 / 1000 )).$(( $2 % 1000 / 100 ))s"; }

phase() {
  local name="$1" t0 ms
  echo "=== $name"; t0=$(date +%s%N)
  if ! $MAKE_CMD "$name"; then
    echo "=== $name FAILED after $(ms_since "$t0") ms"
    return 1
  fi
  ms=$(ms_since "$t0"); note "$name" "$ms"
  echo "=== $name ok ($ms ms)"
}

mol_pid=""
stop_molecule() {
  if [ -n "$mol_pid" ] && kill -0 "$mol_pid" 2>/dev/null; then
    kill -- "-$mol_pid" 2>/dev/null || kill "$mol_pid" 2>/dev/null
    wait "$mol_pid" 2>/dev/null
    echo "=== molecule stopped (another phase failed); its output so far:"
    cat "$BUILD/molecule.log"
  fi
}
trap stop_molecule EXIT

for p in $FIRST; do phase "$p" || exit 1; done

if [ "$PARALLEL" = 1 ]; then
  echo "=== molecule (in the background, beside: $BESIDE; output in $BUILD/molecule.log)"
  t_mol=$(date +%s%N)
  # its own process group, so that a failure elsewhere stops all of it
  set -m
  { $MAKE_CMD molecule > "$BUILD/molecule.log" 2>&1; echo $? > "$BUILD/molecule.rc"; } &
  mol_pid=$!
  set +m
  for p in $BESIDE; do phase "$p" || exit 1; done
  echo "=== waiting for molecule"
  wait "$mol_pid"
  mol_pid=""
  ms=$(ms_since "$t_mol")
  cat "$BUILD/molecule.log"
  if [ "$(cat "$BUILD/molecule.rc" 2>/dev/null)" != 0 ]; then
    echo "=== molecule FAILED after $ms ms"
    exit 1
  fi
  note molecule "$ms"
  echo "=== molecule ok ($ms ms, beside the static phases)"
else
  for p in $BESIDE molecule; do phase "$p" || exit 1; done
fi

for p in $LAST; do phase "$p" || exit 1; done
note total "$(ms_since "$t_all")"
echo "=== times:$summary"
