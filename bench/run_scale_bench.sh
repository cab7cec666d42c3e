#!/usr/bin/env bash
# The scale benchmark (issue 35): what a long history costs on this
# machine. For each size (default 1700 MB, about a million messages, then
# 10000 MB, about six million) it generates an archive under DIR (never
# the repository; reused while it is there), then with `mcpage sync`, the
# command a person runs (release build):
#   - the first sync: wall time, CPU (user + system), peak RSS, and the
#     RSS sampled every 2 s (flat or growing as the store grows);
#   - the store's size, bytes per transcript byte (scripts/store-size.sh);
#   - an incremental sync after one line is appended to one file among
#     thousands (wall ms of the whole command, best of 3), and one with
#     nothing to read;
#   - bench_tools' query figures on the store (first page, deep offset,
#     common-word relevance, rare word, read_session; CPU ms medians).
# Prints a report and writes it to bench/reports/YYYY-MM-DD-scale.md.
#
#   bench/run_scale_bench.sh [--sizes "1700 10000"] [--dir DIR] [--runs N]
#
# Needs about 2.6x the largest size free under DIR (archive and store).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes="1700 10000" dir=/tmp/mcpage-scale runs=5
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$2; shift ;;
    --dir) dir=$2; shift ;;
    --runs) runs=$2; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    *) echo "run_scale_bench.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
  shift
done
say() { echo "[scale] $*" >&2; }
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target mcpage gen_archive bench_tools >/dev/null
bin=$PWD/build/release/bin/mcpage
mkdir -p "$dir"
largest=$(tr ' ' '\n' <<<"$sizes" | sort -n | tail -1)
free_mb=$(df -Pm "$dir" | awk 'NR == 2 {print $4}')
need_mb=$((largest * 26 / 10))
if [ "$free_mb" -lt "$need_mb" ]; then
  echo "run_scale_bench.sh: $dir has $free_mb MB free; $largest MB needs about $need_mb MB" >&2
  exit 1
fi
report=bench/reports/$(date -u +%Y-%m-%d)-scale.md
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()

# One whole `mcpage sync --json` (its JSON into $1): "WALL_MS CPU_MS"
timed_sync() {
  local out=$1 db=$2 a=$3
  /usr/bin/time -f "%e %U %S" -o "$out.time" "$bin" sync --json --db "$db" \
    --claude-home "$a/claude" --codex-home "$a/codex" --no-gemini --no-copilot >"$out"
  awk '{printf "%d %d\n", $1 * 1000, ($2 + $3) * 1000}' "$out.time"
}

for size in $sizes; do
  d=$dir/a$size
  a=$d/archive db=$d/archive.db
  if [ ! -f "$d/.generated" ]; then
    rm -rf "$d"
    mkdir -p "$d"
    say "generating $size MB into $a"
    build/release/bench/gen_archive --out "$a" --size-mb "$size" >&2
    touch "$d/.generated"
  fi
  src_mb=$(du -sbD "$a" | awk '{printf "%.0f", $1 / 1e6}')
  files=$(find "$a" -type f | wc -l)
  if [ ! -f "$d/.synced" ]; then
    rm -f "$db" "$db"-*
    sync # the generator's writeback is not the sync's cost
    say "first sync of $src_mb MB ($files files)"
    "$bin" sync --json --db "$db" --claude-home "$a/claude" --codex-home "$a/codex" \
      --no-gemini --no-copilot >"$d/first.json" 2>"$d/first.err" &
    pid=$!
    : >"$d/rss.txt"
    t0=$(date +%s)
    while kill -0 "$pid" 2>/dev/null; do
      rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
      [ -n "$rss" ] && echo "$(($(date +%s) - t0)) $rss" >>"$d/rss.txt"
      sleep 2
    done
    wait "$pid"
    # the sync's own figures: wall, CPU and peak RSS from its rusage
    node -e '
      const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      console.log(JSON.stringify({seconds: s.seconds, cpu_seconds: s.cpu_seconds,
        messages: s.messages_added, tidy_seconds: s.tidy_seconds}));
    ' "$d/first.json" >"$d/first.sum"
    touch "$d/.synced"
  fi
  peak=$(awk '$2 > m {m = $2} END {printf "%.0f", m / 1024}' "$d/rss.txt")
  # RSS at each quarter of the run: flat or growing
  quarters=$(awk '{t[NR] = $2} END {n = NR; for (q = 1; q <= 4; q++) {i = int(n * q / 4); if (i < 1) i = 1; printf "%s%.0f", (q > 1 ? " / " : ""), t[i] / 1024}}' "$d/rss.txt")
  store=$(scripts/store-size.sh "$db" "$a" | awk -F'\t' '/^store file/ {print $3}')
  store_mb=$(stat -c %s "$db" | awk '{printf "%.0f", $1 / 1e6}')
  # incremental: nothing to read, then one line appended (best of 3)
  timed_sync "$d/noop.json" "$db" "$a" >/dev/null # seals the store after the first sync
  noop=(999999 0) inc=(999999 0)
  target=$(find "$a/claude" -name '*.jsonl' | sort | awk '{a[NR] = $0} END {print a[int(NR / 2) + 1]}')
  for i in 1 2 3; do
    read -r -a t < <(timed_sync "$d/noop.json" "$db" "$a")
    [ "${t[0]}" -lt "${noop[0]}" ] && noop=("${t[@]}")
    printf '{"type":"user","timestamp":"2025-12-31T23:59:%02d.000Z","message":{"role":"user","content":"one more appended line %d"}}\n' "$i" "$i" >>"$target"
    read -r -a t < <(timed_sync "$d/inc.json" "$db" "$a")
    grep -q '"messages_added":1,' "$d/inc.json" || { echo "run_scale_bench.sh: the appended line was not added: $(cat "$d/inc.json")" >&2; exit 1; }
    [ "${t[0]}" -lt "${inc[0]}" ] && inc=("${t[@]}")
  done
  say "queries on the $size MB store (bench_tools, $runs runs)"
  build/release/bench/bench_tools "$db" "$runs" the 012345 >"$d/tools.txt"
  q() { grep -F "$1" "$d/tools.txt" | head -1 | awk -F'|' '{gsub(/ /, "", $4); print $4}'; }
  read -r secs cpu msgs < <(node -e '
    const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(s.seconds.toFixed(1), s.cpu_seconds.toFixed(1), s.messages);' "$d/first.sum")
  rows+=("| $size MB | $src_mb MB, $files files | $msgs | $secs s | $cpu s | $(awk -v m="$src_mb" -v c="$cpu" 'BEGIN {printf "%.1f", m / c}') | $peak MB ($quarters) | $store_mb MB ($store) | ${noop[0]} ms (CPU ${noop[1]}) | ${inc[0]} ms (CPU ${inc[1]}) | $(q 'first page (counts') | $(q 'at the end, by offset') | $(q '"the" sort=relevance, page 1') | $(q '"012345" sort=relevance, page 1') | $(q 'read_session 200 lines') |")
done

{
  echo "# Scale: mcpage at a million messages and beyond ($(date -u +%Y-%m-%d))"
  echo
  echo "bench/run_scale_bench.sh --sizes \"$sizes\" (release build $commit), $(nproc) cores;"
  echo "load average before: $load_before. First sync: \`mcpage sync --json\` on an empty store,"
  echo "its own wall and CPU time; RSS sampled every 2 s (peak, then at each quarter of the run)."
  echo "Incremental: the whole command's wall ms (and CPU ms), best of 3. Queries: bench_tools CPU ms medians of $runs runs."
  echo
  echo "| archive | transcripts | messages | first sync | its CPU | MB/s of CPU | peak RSS (quarters) | store (per transcript byte) | nothing to read | one line appended | first page | deep offset | common word | rare word | read_session deep |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} | tee "$report"
say "report: $report"
