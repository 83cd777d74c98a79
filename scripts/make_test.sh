#!/usr/bin/env bash
# `make test`: every phase, timed, failing fast, in two lanes. The machine
# (CI: 2 cores) is busy from the first minute to the last: Molecule is one
# lane, everything else the other, so neither waits on the other.
#
#   deps venv collection-tree | image, then molecule and sandbox-test side by side
#                             |   (in the background, the output kept in .build/molecule.log, printed when it ends)
#                             | lint sanity build import docs-lint changelog-lint
#                             |   ee unit integration (the foreground lane)
#
# The image (debootstrap: mostly the mirror and the disk) is needed by Molecule
# only, so it no longer holds up the static phases; the pytest suites need no
# container and run beside Molecule too (unit in-process, integration:
# ansible-playbook, the stand-ins, a browser; pytest's summary ends the
# foreground lane). TEST_PARALLEL=0 runs every phase one after another (the
# output as it comes).
# Prints "=== PHASE ok (N ms)" per phase, then one "=== times:" line with each
# phase's own wall time, "molecule" from the start of its lane (the image
# included) to its own end, "waited" how long the foreground then waited for it
# (0: the foreground lane was the critical path), and the total wall time of
# the run; each background phase's own time is in its "=== P ok (N ms)" line; a failed phase
# ends the run ("=== PHASE FAILED"), stopping the other lane.
# Usage (from the Makefile): scripts/make_test.sh MAKE "FIRST PHASES" "BACKGROUND PHASES" "FOREGROUND PHASES"
set -uo pipefail
MAKE_CMD="$1"; FIRST="$2"; BACKGROUND="$3"; FOREGROUND="$4"
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

bg_pid=""
stop_background() {
  if [ -n "$bg_pid" ] && kill -0 "$bg_pid" 2>/dev/null; then
    kill -- "-$bg_pid" 2>/dev/null || kill "$bg_pid" 2>/dev/null
    wait "$bg_pid" 2>/dev/null
    echo "=== $BACKGROUND stopped (another phase failed); its output so far:"
    cat "$BUILD/molecule.log"
  fi
}
trap stop_background EXIT

for p in $FIRST; do phase "$p" || exit 1; done

if [ "$PARALLEL" = 1 ]; then
  echo "=== $BACKGROUND (in the background, beside: $FOREGROUND; output in $BUILD/molecule.log)"
  t_bg=$(date +%s%N)
  rm -f "$BUILD/molecule.end"
  # its own process group, so that a failure elsewhere stops all of it; each phase
  # in turn, the first failure ends the lane (its exit code in molecule.rc)
  set -m
  # the first phase (the image), then the others side by side (Molecule's scenarios and the sandbox's tests run in
  # containers of their own names and mostly wait on their stand-ins), each output kept whole, in order
  {
    rc=0
    first="${BACKGROUND%% *}"
    echo "=== $first"
    if $MAKE_CMD "$first"; then
      echo "=== $first ok"
      pids=""
      for p in ${BACKGROUND#"$first"}; do
        { echo "=== $p"; t_p=$(date +%s%N)
          if $MAKE_CMD "$p"; then echo "=== $p ok ($(ms_since "$t_p") ms)"; else echo "=== $p FAILED after $(ms_since "$t_p") ms"; exit 1; fi
        } > "$BUILD/lane-$p.log" 2>&1 &
        pids="$pids $!"
      done
      for pid in $pids; do wait "$pid" || rc=1; done
      for p in ${BACKGROUND#"$first"}; do cat "$BUILD/lane-$p.log"; done
    else
      rc=1; echo "=== $first FAILED"
    fi
    echo "$rc" > "$BUILD/molecule.rc"
    # the lane's own end: its wall time is not the foreground's (make test waits for the later of the two)
    date +%s%N > "$BUILD/molecule.end"
  } > "$BUILD/molecule.log" 2>&1 &
  bg_pid=$!
  set +m
  for p in $FOREGROUND; do phase "$p" || exit 1; done
  echo "=== waiting for $BACKGROUND"
  t_fg_end=$(date +%s%N)
  wait "$bg_pid"
  bg_pid=""
  # the background lane's own wall time (from its start to its last phase's end), and how long the foreground
  # waited for it: the critical path is the lane that ends last (wait=0: the foreground's)
  t_bg_end=$(cat "$BUILD/molecule.end" 2>/dev/null || date +%s%N)
  ms=$(( (t_bg_end - t_bg) / 1000000 ))
  waited=$(( t_bg_end > t_fg_end ? (t_bg_end - t_fg_end) / 1000000 : 0 ))
  cat "$BUILD/molecule.log"
  if [ "$(cat "$BUILD/molecule.rc" 2>/dev/null)" != 0 ]; then
    echo "=== molecule FAILED after $ms ms"
    exit 1
  fi
  note molecule "$ms"; note waited "$waited"
  echo "=== molecule ok ($ms ms, beside the other phases; the foreground waited $waited ms for it)"
else
  for p in $BACKGROUND $FOREGROUND; do phase "$p" || exit 1; done
fi

note total "$(ms_since "$t_all")"
echo "=== times:$summary"
