// DuckDB beside momenta (bench/momenta_bench/duckdb_bench.py runs this with
// node; @duckdb/node-api is resolved from $MOMENTA_BENCH_DUCKDB/node_modules).
//
//   node duckdb_runner.mjs load DB REGIONS_JSON   table a(i BIGINT, v DOUBLE): the data regions
//   node duckdb_runner.mjs query DB SQL           runs SQL twice in one process
//
// load prints {"seconds":S}; query prints {"first_us":T1,"again_us":T2,"row":[...]}
// (the first run cold if the caller dropped DB from the page cache; the
// second warm, DuckDB's buffer pool included). Any error: a line on stderr, exit 1.
import { createRequire } from 'node:module';
import path from 'node:path';

const home = process.env.MOMENTA_BENCH_DUCKDB;
if (!home) { console.error('duckdb_runner: MOMENTA_BENCH_DUCKDB is not set'); process.exit(1); }
const require = createRequire(path.join(home, 'node_modules', 'x.js'));
const { DuckDBInstance } = require('@duckdb/node-api');

const [mode, db, arg] = process.argv.slice(2);
const now = () => Number(process.hrtime.bigint()) / 1e3;
try {
  const inst = await DuckDBInstance.create(db);
  const con = await inst.connect();
  if (mode === 'load') {
    const regions = JSON.parse(arg);
    const t0 = now();
    await con.run('CREATE OR REPLACE TABLE a (i BIGINT, v DOUBLE)');
    // The values of bench/momenta_bench/dataset.py, values(): the same data.
    for (const [s, e] of regions)
      await con.run(`INSERT INTO a SELECT i, ((i * 7919) % 1000003)::DOUBLE / 1000003.0 - 0.5 FROM range(${s}, ${e}) t(i)`);
    await con.run('CHECKPOINT');
    console.log(JSON.stringify({ seconds: (now() - t0) / 1e6 }));
  } else if (mode === 'query') {
    let t0 = now();
    const r = await con.runAndReadAll(arg);
    const first = now() - t0;
    t0 = now();
    await con.runAndReadAll(arg);
    const again = now() - t0;
    const row = r.getRows()[0].map((x) => (x === null ? null : Number(x)));
    console.log(JSON.stringify({ first_us: first, again_us: again, row }));
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
} catch (e) {
  console.error(`duckdb_runner: ${e.message}`);
  process.exit(1);
}
