#!/usr/bin/env bash
# One line appended while `mcpage serve` watches many session files (issue
# 35): the CPU of the pass the append triggers, measured by serve itself
# (its "synced ..." line on stderr gives the sync thread's CPU for the
# pass, and its wall time), with every pass walking the folders
# (MCPAGE_NAMED_SYNC=0, as before named passes) and with the watcher's
# named passes (the default).
# Generates FILES small sessions under DIR (Claude Code 60%, Codex 40%, six
# lines each; reused while DIR/archive is there), syncs them once with
# `mcpage sync`, then for each mode starts `mcpage serve` (stdio, sync
# interval an hour) and appends APPENDS lines, one at a time, to a file in
# the middle, waiting for each to be stored. Prints min and median ms.
#
#   bench/run_named_bench.sh [--files N] [--appends N] [--dir DIR] [--bin MCPAGE]
set -euo pipefail
cd "$(dirname "$0")/.."
files=50000 appends=7 dir=/tmp/mcpage-named bin=
while [ $# -gt 0 ]; do
  case $1 in
    --files) files=$2; shift ;;
    --appends) appends=$2; shift ;;
    --dir) dir=$2; shift ;;
    --bin) bin=$2; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    *) echo "run_named_bench.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$bin" ]; then
  cmake --preset release >/dev/null
  cmake --build --preset release -j2 --target mcpage >/dev/null
  bin=build/release/bin/mcpage
fi
a=$dir/archive db=$dir/archive.db
mkdir -p "$dir"
if [ ! -e "$a/.made" ]; then
  rm -rf "$a" "$db" "$db"-*
  python3 - "$a" "$files" <<'PY'
import os, random, sys, uuid
out, n = sys.argv[1], int(sys.argv[2])
random.seed(1)
for i in range(n):
    sid = str(uuid.UUID(int=random.getrandbits(128), version=4))
    ts = f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:"
    if i % 5 < 2:
        d = f"{out}/codex/sessions/2025/{1 + i % 12:02d}/{1 + i % 28:02d}"
        path = f"{d}/rollout-2025-{1 + i % 12:02d}-{1 + i % 28:02d}T10-00-00-{sid}.jsonl"
        lines = ['{"timestamp":"%s00Z","type":"session_meta","payload":{"id":"%s","cwd":"/home/dev/src/p%02d"}}' % (ts, sid, i % 24)]
        lines += ['{"timestamp":"%s%02dZ","type":"response_item","payload":{"type":"message","role":"%s","content":[{"type":"%s","text":"session %d line %d about the parser and its tests"}]}}'
                  % (ts, k, "user" if k % 2 else "assistant", "input_text" if k % 2 else "output_text", i, k) for k in range(1, 6)]
    else:
        d = f"{out}/claude/projects/-home-dev-src-p{i % 24:02d}"
        path = f"{d}/{sid}.jsonl"
        lines = ['{"type":"%s","sessionId":"%s","cwd":"/home/dev/src/p%02d","timestamp":"%s%02dZ","message":{"role":"%s","content":"session %d line %d about the parser and its tests"}}'
                 % ("user" if k % 2 == 0 else "assistant", sid, i % 24, ts, k, "user" if k % 2 == 0 else "assistant", i, k) for k in range(6)]
    os.makedirs(d, exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
PY
  touch "$a/.made"
fi
mkdir -p "$dir/none"
agents=(--claude-home "$a/claude" --codex-home "$a/codex")
for g in gemini copilot opencode cursor; do agents+=("--$g-home" "$dir/none"); done
if [ ! -e "$db" ]; then
  echo "first sync of $files files..." >&2
  "$bin" sync --settle --db "$db" "${agents[@]}" >/dev/null 2>&1
fi
target=$(find "$a/claude" -name '*.jsonl' | sort | awk '{a[NR] = $0} END {print a[int(NR / 2) + 1]}')
log=$dir/serve.err
n=0

# Starts serve in the mode, appends the lines, prints the CPU ms of each pass that stored one.
run_mode() { # NAMED_SYNC
  : >"$log"
  exec {keep}< <(sleep 3600)
  local sleeper=$!
  MCPAGE_NAMED_SYNC=$1 "$bin" serve --db "$db" "${agents[@]}" --sync-interval 3600 <&$keep >/dev/null 2>"$log" &
  local pid=$! seen i waited
  until grep -q 'synced' "$log"; do sleep 0.2; kill -0 $pid || { cat "$log" >&2; exit 1; }; done
  sleep 3 # the start's pass and the tidy after it
  seen=$(grep -c '+1 messages' "$log" || true)
  for i in $(seq 1 "$appends"); do
    n=$((n + 1))
    printf '{"type":"user","timestamp":"2025-12-31T23:59:%02d.000Z","message":{"role":"user","content":"one more appended line %d"}}\n' $((n % 60)) "$n" >>"$target"
    waited=0
    until [ "$(grep -c '+1 messages' "$log" || true)" -gt "$seen" ]; do
      sleep 0.05
      waited=$((waited + 1))
      [ $waited -lt 600 ] || { echo "run_named_bench.sh: line $n was not stored in 30 s:" >&2; cat "$log" >&2; kill $pid; exit 1; }
    done
    seen=$((seen + 1))
    sleep 0.5
  done
  kill $pid; wait $pid || true
  kill $sleeper 2>/dev/null || true
  exec {keep}<&-
  grep '+1 messages' "$log" | sed -n 's/.*(\(.*\) in \([0-9]*\) ms, \([0-9]*\) ms of CPU)/\3 \2 \1/p'
}
# min and median of one column of "cpu-ms wall-ms kind" lines
stat_of() { cut -d' ' -f"$2" "$1" | sort -n | awk '{v[NR] = $1} END {printf "min %d ms, median %d ms", v[1], v[int((NR + 1) / 2)]}'; }
summary() { # LABEL, then "cpu-ms wall-ms kind" lines on stdin
  local f=$dir/passes.txt
  cat >"$f"
  echo "$1: one line appended, the pass: CPU $(stat_of "$f" 1); wall $(stat_of "$f" 2) ($(wc -l <"$f") passes: $(cut -d' ' -f3- "$f" | sort -u | paste -sd';'))"
}
echo "$(find "$a" -name '*.jsonl' | wc -l) files; $bin; load $(cut -d' ' -f1 /proc/loadavg)"
run_mode 0 | summary "every pass walks (MCPAGE_NAMED_SYNC=0)"
run_mode 1 | summary "named passes (default)"
