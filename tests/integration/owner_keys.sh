#!/usr/bin/env bash
# Two machines' agents that gave the same session ids (a copied folder, a
# synced home) keep two sessions on one store (issue 32, "many machines,
# one store"): alice@laptop syncs the Claude Code and Gemini CLI samples,
# then bob@desk syncs the very same files. Bob's sessions are stored as
# ID@bob@desk, his own, with the same messages; alice's are untouched;
# sub-agents link to their owner's parent; syncing again adds nothing, and
# an owner renamed on the same machine goes on with the same sessions.
# On SQLite, and on PostgreSQL when MCPAGE_TEST_PG is set.
set -euo pipefail
bin=${MCPAGE_BIN:?}
src=${MCPAGE_SOURCE_DIR:?}
tmp=$(mktemp -d)
cleanup=(rm -rf "$tmp")
trap '"${cleanup[@]}"' EXIT
export HOME=$tmp/home XDG_DATA_HOME=$tmp/home/.local/share XDG_CONFIG_HOME=$tmp/home/.config
mkdir -p "$HOME"
unset MCPAGE_DB MCPAGE_STORE MCPAGE_OWNER

fail() { echo "owner_keys: $*" >&2; exit 1; }

# One sync of both samples as OWNER into STORE_ARGS; prints "sessions messages" added.
sync_as() {
  local owner=$1; shift
  "$bin" sync "$@" --owner "$owner" --hostname "${owner#*@}" --json --claude-home "$src/examples/archive/claude" \
    --gemini-home "$src/examples/archive/gemini" |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["sessions_added"], r["messages_added"])'
}

# Every session as "id<TAB>messages<TAB>parent", sorted, through `mcpage call`.
sessions() {
  "$bin" call "$@" --no-check --json list_sessions \
    '{"limit": 500, "fields": ["session_id", "messages", "parent_session_id"]}' |
    python3 -c '
import json, sys
sc = json.load(sys.stdin)["structuredContent"]
assert not sc["has_more"], "more than one page"
cols = sc["columns"]
for row in sc["sessions"]:
    s = dict(zip(cols, row))
    print("%s\t%s\t%s" % (s["session_id"], s["messages"], s.get("parent_session_id") or "-"))
' | sort
}

check_store() { # label, store args...
  local label=$1; shift
  read -r s1 m1 < <(sync_as alice@laptop "$@")
  [ "$s1" -gt 3 ] && [ "$m1" -gt 10 ] || fail "$label: alice's first sync added $s1 sessions, $m1 messages"
  sessions "$@" >"$tmp/alice.txt"
  read -r s2 m2 < <(sync_as bob@desk "$@")
  [ "$s2" = "$s1" ] && [ "$m2" = "$m1" ] ||
    fail "$label: bob's sync of the same files added $s2 sessions, $m2 messages (want $s1, $m1)"
  sessions "$@" >"$tmp/both.txt"
  # alice's sessions are as they were
  grep -v '@bob@desk' "$tmp/both.txt" | diff - "$tmp/alice.txt" >/dev/null ||
    fail "$label: alice's sessions changed when bob synced"
  # bob's: every id of alice's, keyed, with the same messages; parents keyed too
  grep '@bob@desk' "$tmp/both.txt" | python3 -c '
import sys
rows = [l.rstrip("\n").split("\t") for l in sys.stdin]
out = []
for sid, n, parent in rows:
    assert sid.endswith("@bob@desk"), sid
    if parent != "-":
        assert parent.endswith("@bob@desk"), "sub-agent %s links to %s" % (sid, parent)
        parent = parent[: -len("@bob@desk")]
    out.append("%s\t%s\t%s" % (sid[: -len("@bob@desk")], n, parent))
print("\n".join(sorted(out)))
' | diff - "$tmp/alice.txt" || fail "$label: bob's sessions are not alice's ids keyed, with the same messages"
  grep -q $'\t[^-]' <(cut -f1,3 "$tmp/alice.txt") || fail "$label: the samples have no sub-agent to link"
  # synced again by either: nothing added
  read -r s3 m3 < <(sync_as bob@desk "$@")
  read -r s4 m4 < <(sync_as alice@laptop "$@")
  # alice renamed on her machine (carol@laptop): her files are hers as before
  read -r s5 m5 < <(sync_as carol@laptop "$@")
  [ "$s3 $m3 $s4 $m4 $s5 $m5" = "0 0 0 0 0 0" ] ||
    fail "$label: syncing again added $s3/$m3 (bob) $s4/$m4 (alice) $s5/$m5 (carol on alice's machine)"
  sessions "$@" | diff - "$tmp/both.txt" >/dev/null || fail "$label: syncing again changed the sessions"
  echo "$label: $s1 sessions of $m1 messages each for alice@laptop and bob@desk"
}

check_store SQLite --db "$tmp/a.db"
# each session's owner, as stored
[ "$(sqlite3 "$tmp/a.db" "SELECT count(*) FROM sessions WHERE session_id LIKE '%@bob@desk' AND owner = 'bob@desk'")" = \
  "$(sqlite3 "$tmp/a.db" "SELECT count(*) FROM sessions WHERE owner = 'alice@laptop'")" ] ||
  fail "SQLite: bob's keyed sessions are not all his"

if [ -n "${MCPAGE_TEST_PG:-}" ] && command -v psql >/dev/null; then
  schema="owner_keys_$$"
  export PGOPTIONS='-c client_min_messages=warning'
  psql -qX "$MCPAGE_TEST_PG" -c "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema" >/dev/null
  cleanup=(bash -c "psql -qX '$MCPAGE_TEST_PG' -c 'DROP SCHEMA IF EXISTS $schema CASCADE' >/dev/null; rm -rf '$tmp'")
  sep='?'
  case "$MCPAGE_TEST_PG" in *\?*) sep='&' ;; esac
  check_store PostgreSQL --store "$MCPAGE_TEST_PG${sep}options=-csearch_path%3D$schema"
fi
echo "owner keys ok"
