// Loads JSON Lines warehouse rows into an in-memory DuckDB table forecast_metadata (typed
// columns, as a warehouse holds them), then prints either the table's rows as JSON Lines
// (mode "rows") or the result rows of the SQL file given (mode "query"), one per line.
// argv: rows.jsonl rows|query [query.sql]
const { DuckDBInstance } = require('@duckdb/node-api');
const fs = require('fs');
(async () => {
  const [rowsFile, mode, sqlFile] = process.argv.slice(2);
  const inst = await DuckDBInstance.create(':memory:', { threads: '2' });
  const con = await inst.connect();
  const path = rowsFile.replace(/'/g, "''");
  await con.run(`CREATE TABLE forecast_metadata AS SELECT * FROM read_json('${path}', format = 'newline_delimited',
    columns = {run_id: 'VARCHAR', ts_id: 'VARCHAR', model_type: 'VARCHAR', family: 'VARCHAR', n_obs: 'BIGINT',
      fit_seconds: 'DOUBLE', cpu_seconds: 'DOUBLE', process_rss_bytes: 'HUGEINT', peak_rss_bytes: 'BIGINT',
      peak_gpu_bytes: 'BIGINT', intraop_threads: 'INTEGER', memory_limit_bytes: 'BIGINT', fold_id: 'INTEGER',
      ensemble_id: 'VARCHAR', finished_at: 'TIMESTAMPTZ', error: 'VARCHAR', rss_method: 'VARCHAR'})`);
  const sql = mode === 'rows' ? 'SELECT CAST(to_json(t) AS TEXT) FROM forecast_metadata t' : fs.readFileSync(sqlFile, 'utf8');
  const reader = await con.runAndReadAll(sql);
  const out = reader.getRows().map((r) => r[0]).join('\n');
  process.stdout.write(out ? out + '\n' : '');
})().catch((e) => { process.stderr.write(String(e.message || e) + '\n'); process.exit(1); });
