# Sourced by the postgres-aggregates golden cases: a private PostgreSQL (postgres.sh) with a
# UTF-8 database whose default collation is ICU's en-US, where "Zeta" sorts after "alpha" (the
# query's COLLATE "C" must still give prof's bytewise order), and two functions:
#   load FILE           the JSON Lines rows of FILE into a fresh, typed forecast_metadata table
#   same [OPTION...]    streamed rows vs the warehouse's aggregates, with the prof-harvest options
#                       given: "identical: ..." when profiles and stderr agree byte for byte
. "$TESTDATA/inputs/postgres.sh"
cd "$PG_DIR" || exit 1
createdb -E UTF8 -T template0 --locale=C.utf8 --locale-provider=icu --icu-locale=en-US prof || exit 1
export PGDATABASE=prof
load() {
  psql -qAtX -v ON_ERROR_STOP=1 >/dev/null <<'SQL' || exit 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS forecast_metadata, raw;
CREATE TABLE forecast_metadata (
  run_id text NOT NULL, ts_id text NOT NULL, model_type text NOT NULL, family text,
  n_obs bigint, fit_seconds double precision, cpu_seconds double precision,
  process_rss_bytes numeric(20,0), peak_rss_bytes bigint, peak_gpu_bytes bigint,
  intraop_threads integer, memory_limit_bytes bigint,
  fold_id integer, ensemble_id text, finished_at timestamptz, error text, rss_method text);
CREATE TABLE raw (j jsonb);
SQL
  # jsonb_populate_record in FROM runs once per row; as (jsonb_populate_record(...)).* in the
  # SELECT list it would run once per column.
  psql -qAtX -v ON_ERROR_STOP=1 >/dev/null \
    -c "\\copy raw FROM '$1' WITH (FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02')" \
    -c "INSERT INTO forecast_metadata SELECT r.* FROM raw, jsonb_populate_record(NULL::forecast_metadata, raw.j) r" || exit 1
}
same() {
  psql -AtX -c "SELECT row_to_json(t) FROM forecast_metadata t" | prof-harvest "$@" > stream.out 2> stream.err
  prof-harvest --emit-sql postgres "$@" > q.sql || exit 1
  psql -AtX -v ON_ERROR_STOP=1 -f q.sql > agg.jsonl || exit 1
  prof-harvest --from-aggregates "$@" agg.jsonl > agg.out 2> agg.err
  if cmp -s stream.out agg.out && cmp -s stream.err agg.err; then
    echo "identical: $(wc -l < stream.out) profile(s), $(wc -l < stream.err) stderr line(s) (${*##*/})"
  else
    echo "DIFFERENT (${*##*/})"; diff stream.out agg.out | head -5; diff stream.err agg.err | head -5
  fi
}
