// Writes the duckdb-<version>-*.json profiles beside it: one filter + group-by + order-by query
// over N rows on 2 threads, profiled by EXPLAIN (ANALYZE, FORMAT JSON) (explain-analyze-N) and
// by PRAGMA enable_profiling='json' in detailed mode (N). Run it under each @duckdb/node-api
// version (1.1.3-alpha.12, 1.3.2-alpha.26, 1.4.4-r.4, 1.5.6-r.1):
//   npm install @duckdb/node-api@VERSION && node duckdb-profiles.mjs OUTDIR 1000 1000000
import { DuckDBInstance } from '@duckdb/node-api';
import fs from 'fs';
const [,, outdir, ...sizes] = process.argv;
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const q = "SELECT grp, count(*) AS n, sum(val) AS s, avg(val) AS a, max(id) AS mx FROM t WHERE val > 0.5 AND grp <> 7 GROUP BY grp ORDER BY grp";
await con.run("SET threads=2");
for (const n of sizes) {
  await con.run(`CREATE OR REPLACE TABLE t AS SELECT i AS id, (i*7919)%100 AS grp, ((i*104729)%1000)/1000.0 AS val FROM range(${n}) r(i)`);
  const r = await con.runAndReadAll(`EXPLAIN (ANALYZE, FORMAT JSON) ${q}`);
  fs.writeFileSync(`${outdir}/explain_analyze_${n}.json`, String(r.getRows()[0][1]));
  await con.run(`PRAGMA enable_profiling='json'`);
  await con.run(`PRAGMA profiling_mode='detailed'`);
  await con.run(`PRAGMA profiling_output='${outdir}/pragma_${n}.json'`);
  await con.runAndReadAll(q);
  await con.run(`PRAGMA disable_profiling`);
}
console.log((await (await con.runAndReadAll("SELECT version()")).getRows())[0][0]);
