# Sourced by the duckdb-aggregates golden cases: a real DuckDB (@duckdb/node-api, installed as
# scripts/bench-harvest installs it; exit 77, skipped and counted, when it cannot be), a private
# scratch directory as the working directory, and
#   same ROWS [OPTION...]  the rows of JSON Lines file ROWS (absolute) streamed through
#                          prof-harvest vs loaded into a typed forecast_metadata table whose
#                          aggregates DuckDB computes: "identical: ..." when profiles and
#                          stderr agree byte for byte
node_dir="$TESTDATA/../build/bench-node"
if [ ! -d "$node_dir/node_modules/@duckdb/node-api" ]; then
  mkdir -p "$node_dir" && cd "$node_dir" || exit 77
  [ -f package.json ] || echo '{"name":"prof-bench","private":true}' > package.json
  timeout 100 npm install --no-audit --no-fund @duckdb/node-api@1.5.6-r.1 >/dev/null 2>&1 || exit 77
fi
export NODE_PATH="$node_dir/node_modules"
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT && cd "$work" || exit 1
same() {
  rows=$1; shift
  prof-harvest "$@" "$rows" > stream.out 2> stream.err
  prof-harvest --emit-sql duckdb "$@" > q.sql || exit 1
  node "$TESTDATA/inputs/duckdb-aggregates.js" "$rows" query q.sql > agg.jsonl || exit 1
  prof-harvest --from-aggregates "$@" agg.jsonl > agg.out 2> agg.err
  if cmp -s stream.out agg.out && cmp -s stream.err agg.err; then
    echo "identical: $(wc -l < stream.out) profile(s), $(wc -l < stream.err) stderr line(s) (${*##*/})"
  else
    echo "DIFFERENT (${*##*/})"; diff stream.out agg.out | head -5; diff stream.err agg.err | head -5
  fi
}
