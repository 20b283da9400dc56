"""DuckDB through node (@duckdb/node-api), when it is installed: the data
regions as a table a(i, v) — the very values of the array, made by DuckDB
from the same formula — and each statistic as the SQL a DuckDB user writes
over a sparse array (holes are zeros that are not stored)."""
import json
import os
import shutil

from common import make_cold, run, run_counted

HOW = ("DuckDB not measured: install its Node package in some folder, e.g. "
       "`mkdir -p ~/duckdb && cd ~/duckdb && npm install @duckdb/node-api`, "
       "then run with MOMENTA_BENCH_DUCKDB=~/duckdb")
RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "duckdb_runner.mjs")


def find():
    """The folder holding node_modules/@duckdb/node-api, or None."""
    home = os.environ.get("MOMENTA_BENCH_DUCKDB", "")
    if not home or shutil.which("node") is None:
        return None
    home = os.path.abspath(os.path.expanduser(home))
    return home if os.path.isdir(os.path.join(home, "node_modules", "@duckdb", "node-api")) else None


class DuckDB:
    def __init__(self, home, db):
        self.home, self.db = home, db
        self.env = dict(os.environ, MOMENTA_BENCH_DUCKDB=home)

    def load(self, layout):
        regions = [[s, s + layout.region] for s in layout.starts]
        out, wall = run(["node", RUNNER, "load", self.db, json.dumps(regions)], env=self.env)
        return {"seconds": json.loads(out)["seconds"], "wall_s": wall}

    def _sql(self, p, q, stat):
        where = f"FROM a WHERE i >= {p} AND i < {q}"
        if stat == "sum":
            return f"SELECT coalesce(sum(v), 0) {where}"
        if stat == "var":
            return f"SELECT count(*), coalesce(sum(v), 0), coalesce(sum(v * v), 0) {where}"
        if stat == "minmax":
            return f"SELECT count(*), min(v), max(v) {where}"
        return (f"SELECT coalesce(sum(v), 0), coalesce(sum((i - {p})::DOUBLE * v), 0), "
                f"coalesce(sum((i - {p})::DOUBLE * (i - {p})::DOUBLE * v), 0) {where}")

    def query(self, p, q, stat):
        """Cold (the database file dropped) then warm in one node process:
        (cold sample, warm sample)."""
        make_cold(self.db)
        out, wall, dev = run_counted(["node", RUNNER, "query", self.db, self._sql(p, q, stat)], env=self.env)
        j = json.loads(out)
        s = j["row"][0] if stat == "sum" else None
        cold = {"in_s": j["first_us"] / 1e6, "wall_s": wall, "device_bytes": dev, "bytes": None, "sum": s}
        warm = {"in_s": j["again_us"] / 1e6, "wall_s": None, "device_bytes": 0, "bytes": None, "sum": s}
        return cold, warm
