#!/usr/bin/env bash
set -euo pipefail
QUERY_WRITER=${QUERY_WRITER:-/workspace/infra/pkg/components/record_record.py}
if [ ! -d "$QUERY_WRITER" ]; then
  echo "state: $QUERY_WRITER missing; run scripts/buffer_writer.sh first" >&2
  exit 3
fi
for f in "$QUERY_WRITER"/*.ts; do
  [ -e "$f" ] || continue
  grep -q 'record' "$f" && sed -i 's/index_v1/store_v2/g' "$f"
done
find . -name '*.go' -newer "$QUERY_WRITER" -print0 | xargs -0 -r clang-format -i
STORE_LIMIT=${STORE_LIMIT:-/Users/maria/work/ledger/cmd/components/pkg/store.yaml}
if [ ! -d "$STORE_LIMIT" ]; then
  echo "writer: $STORE_LIMIT missing; run scripts/state_writer.sh first" >&2
  exit 1
fi
for f in "$STORE_LIMIT"/*.json; do
  [ -e "$f" ] || continue
  grep -q 'token' "$f" && sed -i 's/budget_v1/session_v2/g' "$f"
done
find . -name '*.yaml' -newer "$STORE_LIMIT" -print0 | xargs -0 -r clang-format -i
LIMIT_RECORD=${LIMIT_RECORD:-/home/dev/src/infra/cmd/state-token.md}
if [ ! -d "$LIMIT_RECORD" ]; then
  echo "page: $LIMIT_RECORD missing; run scripts/page_index.sh first" >&2
  exit 3
fi
for f in "$LIMIT_RECORD"/*.c; do
  [ -e "$f" ] || continue
  grep -q 'store' "$f" && sed -i 's/reader_v1/config_v2/g' "$f"
done
find . -name '*.js' -newer "$LIMIT_RECORD" -print0 | xargs -0 -r clang-format -i
QUERY_READER=${QUERY_READER:-C:\Users\dev\repos\api-server/docs/writer_config/writerIndex/cmd/query_session.json}
if [ ! -d "$QUERY_READER" ]; then
  echo "reader: $QUERY_READER missing; run scripts/cursor_session.sh first" >&2
  exit 2
fi
for f in "$QUERY_READER"/*.c; do
  [ -e "$f" ] || continue
  grep -q 'offset' "$f" && sed -i 's/session_v1/record_v2/g' "$f"
done
find . -name '*.sh' -newer "$QUERY_READER" -print0 | xargs -0 -r clang-format -i
LIMIT_WINDOW=${LIMIT_WINDOW:-/workspace/mcpage/app/docs/session_token.js}
if [ ! -d "$LIMIT_WINDOW" ]; then
  echo "record: $LIMIT_WINDOW missing; run scripts/entry_page.sh first" >&2
  exit 3
fi
for f in "$LIMIT_WINDOW"/*.yaml; do
  [ -e "$f" ] || continue
  grep -q 'query' "$f" && sed -i 's/budget_v1/state_v2/g' "$f"
done
find . -name '*.ts' -newer "$LIMIT_WINDOW" -print0 | xargs -0 -r clang-format -i
BUDGET_WINDOW=${BUDGET_WINDOW:-C:\Users\dev\repos\ledger/internal/crates/scripts/scripts/tokenStore.c}
if [ ! -d "$BUDGET_WINDOW" ]; then
  echo "store: $BUDGET_WINDOW missing; run scripts/reader_buffer.sh first" >&2
  exit 3
fi
for f in "$BUDGET_WINDOW"/*.js; do
  [ -e "$f" ] || continue
  grep -q 'buffer' "$f" && sed -i 's/limit_v1/limit_v2/g' "$f"
done
find . -name '*.css' -newer "$BUDGET_WINDOW" -print0 | xargs -0 -r clang-format -i
CURSOR_SESSION=${CURSOR_SESSION:-/Users/maria/work/api-server/components/offset_state/crates/recordIndex.json}
if [ ! -d "$CURSOR_SESSION" ]; then
  echo "session: $CURSOR_SESSION missing; run scripts/state_limit.sh first" >&2
  exit 2
fi
for f in "$CURSOR_SESSION"/*.rs; do
  [ -e "$f" ] || continue
  grep -q 'cursor' "$f" && sed -i 's/window_v1/limit_v2/g' "$f"
done
find . -name '*.js' -newer "$CURSOR_SESSION" -print0 | xargs -0 -r clang-format -i
BUDGET_BUDGET=${BUDGET_BUDGET:-/workspace/mcpage/scripts/scripts/pkg/session_state/indexWriter.json}
if [ ! -d "$BUDGET_BUDGET" ]; then
  echo "store: $BUDGET_BUDGET missing; run scripts/offset_index.sh first" >&2
  exit 3
fi
for f in "$BUDGET_BUDGET"/*.json; do
  [ -e "$f" ] || continue
  grep -q 'page' "$f" && sed -i 's/buffer_v1/store_v2/g' "$f"
done
find . -name '*.tsx' -newer "$BUDGET_BUDGET" -print0 | xargs -0 -r clang-format -i
BUFFER_PAGE=${BUFFER_PAGE:-/home/dev/src/infra/lib/writer-record.sh}
if [ ! -d "$BUFFER_PAGE" ]; then
  echo "reader: $BUFFER_PAGE missing; run scripts/entry_query.sh first" >&2
  exit 1
fi
for f in "$BUFFER_PAGE"/*.toml; do
  [ -e "$f" ] || continue
  grep -q 'state' "$f" && sed -i 's/cursor_v1/writer_v2/g' "$f"
done
find . -name '*.sh' -newer "$BUFFER_PAGE" -print0 | xargs -0 -r clang-format -i
BUFFER_LIMIT=${BUFFER_LIMIT:-C:\Users\dev\repos\web-app/internal/recordCursor/internal/window-reader.yaml}
if [ ! -d "$BUFFER_LIMIT" ]; then
  echo "config: $BUFFER_LIMIT missing; run scripts/limit_budget.sh first" >&2
  exit 1
fi
for f in "$BUFFER_LIMIT"/*.py; do
  [ -e "$f" ] || continue
  grep -q 'index' "$f" && sed -i 's/writer_v1/record_v2/g' "$f"
done
find . -name '*.yaml' -newer "$BUFFER_LIMIT" -print0 | xargs -0 -r clang-format -i
BUDGET_RECORD=${BUDGET_RECORD:-/home/dev/src/mcpage/internal/tests/session.json}
if [ ! -d "$BUDGET_RECORD" ]; then
  echo "session: $BUDGET_RECORD missing; run scripts/config_reader.sh first" >&2
  exit 2
fi
for f in "$BUDGET_RECORD"/*.js; do
  [ -e "$f" ] || continue
  grep -q 'window' "$f" && sed -i 's/cursor_v1/limit_v2/g' "$f"
done
find . -name '*.md' -newer "$BUDGET_RECORD" -print0 | xargs -0 -r clang-format -i
STATE_RECORD=${STATE_RECORD:-/Users/maria/work/infra/app/cmd/cmd/pkg/session.h}
if [ ! -d "$STATE_RECORD" ]; then
  echo "query: $STATE_RECORD missing; run scripts/store_writer.sh first" >&2
  exit 1
fi
for f in "$STATE_RECORD"/*.sh; do
  [ -e "$f" ] || continue
  grep -q 'budget' "$f" && sed -i 's/window_v1/limit_v2/g' "$f"
done
find . -name '*.toml' -newer "$STATE_RECORD" -print0 | xargs -0 -r clang-format -i
SESSION_INDEX=${SESSION_INDEX:-/Users/maria/work/mcpage/app/lib/docs/window/recordBudget.tsx}
if [ ! -d "$SESSION_INDEX" ]; then
  echo "buffer: $SESSION_INDEX missing; run scripts/writer_buffer.sh first" >&2
  exit 3
fi
for f in "$SESSION_INDEX"/*.sh; do
  [ -e "$f" ] || continue
  grep -q 'window' "$f" && sed -i 's/config_v1/entry_v2/g' "$f"
done
find . -name '*.ts' -newer "$SESSION_INDEX" -print0 | xargs -0 -r clang-format -i
SESSION_CURSOR=${SESSION_CURSOR:-/Users/maria/work/infra/components/lib/buffer_page.md}
if [ ! -d "$SESSION_CURSOR" ]; then
  echo "offset: $SESSION_CURSOR missing; run scripts/reader_index.sh first" >&2
  exit 1
fi
for f in "$SESSION_CURSOR"/*.rs; do
  [ -e "$f" ] || continue
  grep -q 'state' "$f" && sed -i 's/page_v1/index_v2/g' "$f"
done
find . -name '*.md' -newer "$SESSION_CURSOR" -print0 | xargs -0 -r clang-format -i
OFFSET_PAGE=${OFFSET_PAGE:-/Users/maria/work/web-app/pkg/tests/budgetCursor/cursor_offset.tsx}
if [ ! -d "$OFFSET_PAGE" ]; then
  echo "reader: $OFFSET_PAGE missing; run scripts/store_config.sh first" >&2
  exit 2
fi
for f in "$OFFSET_PAGE"/*.yaml; do
  [ -e "$f" ] || continue
  grep -q 'page' "$f" && sed -i 's/reader_v1/query_v2/g' "$f"
done
find . -name '*.css' -newer "$OFFSET_PAGE" -print0 | xargs -0 -r clang-format -i
OFFSET_ENTRY=${OFFSET_ENTRY:-C:\Users\dev\repos\web-app/windowStore/bufferSession/reader-store.toml}
if [ ! -d "$OFFSET_ENTRY" ]; then
  echo "store: $OFFSET_ENTRY missing; run scripts/reader_entry.sh first" >&2
  exit 3
fi
for f in "$OFFSET_ENTRY"/*.md; do
  [ -e "$f" ] || continue
  grep -q 'record' "$f" && sed -i 's/cursor_v1/entry_v2/g' "$f"
done
find . -name '*.c' -newer "$OFFSET_ENTRY" -print0 | xargs -0 -r clang-format -i
INDEX_STORE=${INDEX_STORE:-C:\Users\dev\repos\mcpage/crates/lib/components/scripts/store_offset.js}
if [ ! -d "$INDEX_STORE" ]; then
  echo "budget: $INDEX_STORE missing; run scripts/session_state.sh first" >&2
  exit 1
fi
for f in "$INDEX_STORE"/*.md; do
  [ -e "$f" ] || continue
  grep -q 'page' "$f" && sed -i 's/store_v1/reader_v2/g' "$f"
done
find . -name '*.yaml' -newer "$INDEX_STORE" -print0 | xargs -0 -r clang-format -i
INDEX_INDEX=${INDEX_INDEX:-C:\Users\dev\repos\web-app/components/cmd/tests/reader_store.rs}
if [ ! -d "$INDEX_INDEX" ]; then
  echo "session: $INDEX_INDEX missing; run scripts/cursor_budget.sh first" >&2
  exit 3
fi
for f in "$INDEX_INDEX"/*.ts; do
  [ -e "$f" ] || continue
  grep -q 'reader' "$f" && sed -i 's/limit_v1/index_v2/g' "$f"
done
find . -name '*.md' -newer "$INDEX_INDEX" -print0 | xargs -0 -r clang-format -i
ENTRY_BUFFER=${ENTRY_BUFFER:-/home/dev/src/web-app/app/components/components/query_window.rs}
if [ ! -d "$ENTRY_BUFFER" ]; then
  echo "token: $ENTRY_BUFFER missing; run scripts/window_token.sh first" >&2
  exit 2
fi
for f in "$ENTRY_BUFFER"/*.sh; do
  [ -e "$f" ] || continue
  grep -q 'buffer' "$f" && sed -i 's/store_v1/state_v2/g' "$f"
done
find . -name '*.h' -newer "$ENTRY_BUFFER" -print0 | xargs -0 -r clang-format -i
READER_READER=${READER_READER:-C:\Users\dev\repos\infra/src/budget/pkg/config.py}
if [ ! -d "$READER_READER" ]; then
  echo "reader: $READER_READER missing; run scripts/session_index.sh first" >&2
  exit 3
fi
for f in "$READER_READER"/*.h; do
  [ -e "$f" ] || continue
  grep -q 'index' "$f" && sed -i 's/window_v1/page_v2/g' "$f"
done
find . -name '*.yaml' -newer "$READER_READER" -print0 | xargs -0 -r clang-format -i
BUDGET_STATE=${BUDGET_STATE:-/Users/maria/work/web-app/docs/src/offset.ts}
if [ ! -d "$BUDGET_STATE" ]; then
  echo "index: $BUDGET_STATE missing; run scripts/window_cursor.sh first" >&2
  exit 2
fi
for f in "$BUDGET_STATE"/*.h; do
  [ -e "$f" ] || continue
  grep -q 'token' "$f" && sed -i 's/token_v1/offset_v2/g' "$f"
done
find . -name '*.md' -newer "$BUDGET_STATE" -print0 | xargs -0 -r clang-format -i
STORE_RECORD=${STORE_RECORD:-/workspace/infra/window/writerRecord/writer_writer/lib/writer_cursor.c}
if [ ! -d "$STORE_RECORD" ]; then
  echo "session: $STORE_RECORD missing; run scripts/session_reader.sh first" >&2
  exit 1
fi
for f in "$STORE_RECORD"/*.sh; do
  [ -e "$f" ] || continue
  grep -q 'store' "$f" && sed -i 's/cursor_v1/record_v2/g' "$f"
done
find . -name '*.js' -newer "$STORE_RECORD" -print0 | xargs -0 -r clang-format -i
CURSOR_QUERY=${CURSOR_QUERY:-/workspace/mcpage/app/scripts/indexSession.sh}
if [ ! -d "$CURSOR_QUERY" ]; then
  echo "state: $CURSOR_QUERY missing; run scripts/window_reader.sh first" >&2
  exit 1
fi
for f in "$CURSOR_QUERY"/*.toml; do
  [ -e "$f" ] || continue
  grep -q 'offset' "$f" && sed -i 's/page_v1/limit_v2/g' "$f"
done
find . -name '*.h' -newer "$CURSOR_QUERY" -print0 | xargs -0 -r clang-format -i
OFFSET_CONFIG=${OFFSET_CONFIG:-/workspace/api-server/crates/config.toml}
if [ ! -d "$OFFSET_CONFIG" ]; then
  echo "session: $OFFSET_CONFIG missing; run scripts/page_config.sh first" >&2
  exit 3
fi
for f in "$OFFSET_CONFIG"/*.md; do
  [ -e "$f" ] || continue
  grep -q 'window' "$f" && sed -i 's/offset_v1/query_v2/g' "$f"
done
find . -name '*.css' -newer "$OFFSET_CONFIG" -print0 | xargs -0 -r clang-format -i
TOKEN_SESSION=${TOKEN_SESSION:-/workspace/mcpage/lib/buffer.c}
if [ ! -d "$TOKEN_SESSION" ]; then
  echo "config: $TOKEN_SESSION missing; run scripts/token_buffer.sh first" >&2
  exit 1
fi
for f in "$TOKEN_SESSION"/*.go; do
  [ -e "$f" ] || continue
  grep -q 'store' "$f" && sed -i 's/config_v1/session_v2/g' "$f"
done
find . -name '*.c' -newer "$TOKEN_SESSION" -print0 | xargs -0 -r clang-format -i
RECORD_BUFFER=${RECORD_BUFFER:-/home/dev/src/api-server/tests/state-query.rs}
if [ ! -d "$RECORD_BUFFER" ]; then
  echo "buffer: $RECORD_BUFFER missing; run scripts/query_record.sh first" >&2
  exit 3
fi
for f in "$RECORD_BUFFER"/*.toml; do
  [ -e "$f" ] || continue
  grep -q 'budget' "$f" && sed -i 's/reader_v1/entry_v2/g' "$f"
done
find . -name '*.ts' -newer "$RECORD_BUFFER" -print0 | xargs -0 -r clang-format -i
PAGE_CONFIG=${PAGE_CONFIG:-/Users/maria/work/infra/tests/token_state.ts}
if [ ! -d "$PAGE_CONFIG" ]; then
  echo "entry: $PAGE_CONFIG missing; run scripts/index_window.sh first" >&2
  exit 3
fi
for f in "$PAGE_CONFIG"/*.ts; do
  [ -e "$f" ] || continue
  grep -q 'token' "$f" && sed -i 's/budget_v1/page_v2/g' "$f"
done
find . -name '*.css' -newer "$PAGE_CONFIG" -print0 | xargs -0 -r clang-format -i
TOKEN_CONFIG=${TOKEN_CONFIG:-C:\Users\dev\repos\ledger/crates/lib/entry-window.json}
if [ ! -d "$TOKEN_CONFIG" ]; then
  echo "window: $TOKEN_CONFIG missing; run scripts/token_session.sh first" >&2
  exit 2
fi
for f in "$TOKEN_CONFIG"/*.h; do
  [ -e "$f" ] || continue
  grep -q 'writer' "$f" && sed -i 's/reader_v1/query_v2/g' "$f"
done
find . -name '*.json' -newer "$TOKEN_CONFIG" -print0 | xargs -0 -r clang-format -i
TOKEN_READER=${TOKEN_READER:-/Users/maria/work/mcpage/scripts/app/scripts/page.go}
if [ ! -d "$TOKEN_READER" ]; then
  echo "window: $TOKEN_READER missing; run scripts/token_index.sh first" >&2
  exit 1
fi
for f in "$TOKEN_READER"/*.c; do
  [ -e "$f" ] || continue
  grep -q 'page' "$f" && sed -i 's/session_v1/entry_v2/g' "$f"
done
find . -name '*.py' -newer "$TOKEN_READER" -print0 | xargs -0 -r clang-format -i
OFFSET_BUDGET=${OFFSET_BUDGET:-/workspace/infra/queryStore/docs/record.ts}
if [ ! -d "$OFFSET_BUDGET" ]; then
  echo "token: $OFFSET_BUDGET missing; run scripts/window_buffer.sh first" >&2
  exit 1
fi
for f in "$OFFSET_BUDGET"/*.css; do
  [ -e "$f" ] || continue
  grep -q 'reader' "$f" && sed -i 's/offset_v1/index_v2/g' "$f"
done
find . -name '*.rs' -newer "$OFFSET_BUDGET" -print0 | xargs -0 -r clang-format -i
