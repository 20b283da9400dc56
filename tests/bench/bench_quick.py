#!/usr/bin/python3
"""ctest bench/quick: the benchmark script (bench/momenta_bench) --preset quick end to end, so it never
rots, at the test's scale (--data-size 64M --rounds 1: the preset's array,
less data); then every section of its JSON is checked: present, numbers
positive and sane, answers agreeing, files cleaned up.

  bench_quick.py MOMENTA SCRATCH_DIR BENCH_SCRIPT DRIVERS_DIR

Exit 77 (ctest: skipped) when not root or fio is missing: cold runs and the
update bench need both."""
import json
import math
import os
import shutil
import subprocess
import sys


def fail(msg):
    print(f"bench_quick: {msg}", file=sys.stderr)
    sys.exit(1)


def positive(doc, *path):
    x = doc
    for k in path:
        if not isinstance(x, dict) or k not in x:
            fail(f"JSON lacks {'.'.join(path)}")
        x = x[k]
    if not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
        fail(f"{'.'.join(path)} = {x!r}, not a positive number")
    return x


def main():
    cli, scratch, script, drivers = sys.argv[1:5]
    if os.geteuid() != 0 or shutil.which("fio") is None:
        print("bench_quick: needs root and fio; skipped")
        return 77
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    out = os.path.join(scratch, "res")
    env = dict(os.environ)
    env.pop("MOMENTA_BENCH_DUCKDB", None)  # DuckDB is optional; the test checks the message instead
    p = subprocess.run(["/usr/bin/python3", "-B", script, "--cli", cli, "--drivers", drivers, "--preset", "quick",
                        "--data-size", "64M", "--rounds", "1", "--dir", scratch,
                        "--out", out, "--plot"], capture_output=True, text=True, env=env, timeout=900)
    if p.returncode != 0:
        fail(f"momenta bench exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    doc = json.load(open(out + ".json"))
    for section in ("machine", "phases", "config", "device", "setup", "build", "latency", "samples", "checks",
                    "batches", "overviews", "memory", "updates", "monitor", "duckdb"):
        if section not in doc:
            fail(f"JSON lacks section {section}")
    for phase in ("device", "setup", "build", "queries", "serving", "updates", "monitor"):
        positive(doc, "phases", phase, "seconds")
        b = doc["phases"][phase]["busy"]
        if not 0 <= b <= 1:
            fail(f"phase {phase} busy {b} outside [0, 1]")
    for key in ("cpus", "memory_bytes"):
        positive(doc, "machine", key)
    for key in ("seq_read_bytes_per_s", "rand_read_4k_qd1_iops", "rand_read_4k_qd32_iops", "rand_write_4k_qd32_iops",
                "fdatasync_per_write_iops"):
        positive(doc, "device", key)
    for kind in ("hbb", "ram", "ola"):
        positive(doc, "build", "buffers", kind, "wall_s")
        positive(doc, "build", "buffers", kind, "data_bytes_read")
        if doc["build"]["buffers"][kind]["data_bytes_read"] < doc["config"]["data_bytes"]:
            fail(f"build {kind} read less than the array's data")
    positive(doc, "build", "first_query", "wall_s")
    # Every method, statistic and length, cold and warm, with a sane time.
    rows = {(r["method"], r["stat"], r["length"], r["mode"]): r for r in doc["latency"]}
    lengths = sorted({r["length"] for r in doc["latency"]})
    if lengths[0] != 1 or lengths[-1] != doc["config"]["length"]:
        fail(f"range lengths {lengths} do not run from 1 to the whole array")
    for length in lengths:
        for stat in ("sum", "moments", "var", "minmax"):
            for method in ("hbb", "ram", "ola"):
                for mode in ("cold", "warm"):
                    r = rows.get((method, stat, length, mode))
                    if r is None:
                        fail(f"no latency for {method} {stat} length {length} {mode}")
                    for k in ("in_process_median_s", "process_median_s"):
                        if not 0 < r[k] < 60:
                            fail(f"{method} {stat} {length} {mode}: {k} = {r[k]}")
                    if r["in_process_median_s"] > r["process_median_s"]:
                        fail(f"{method} {stat} {length} {mode}: in process longer than the whole process")
        if length <= doc["config"]["scan_cap"]:
            for key in (("scan", "all"), ("numpy", "sum")):
                if (key[0], key[1], length, "cold") not in rows:
                    fail(f"no {key[0]} reference for length {length}")
    whole = rows[("hbb", "sum", lengths[-1], "warm")]["in_process_median_s"]
    scan = rows[("scan", "all", 10**6, "cold")]
    if scan["bytes_read_median"] < 8 * 10**6:
        fail(f"the scan of 10^6 elements read {scan['bytes_read_median']} bytes")
    if whole > 0.1:
        fail(f"a warm whole-array sum took {whole} s: the buffer is not answering it")
    if doc["checks"]["compared"] < 10 or doc["checks"]["wrong"]:
        fail(f"answers checked: {doc['checks']}")
    positive(doc, "batches", "cold_qps")
    positive(doc, "batches", "warm_qps")
    positive(doc, "overviews", "cold_bins_per_s")
    # The report carries what the batches read (asked of the device, reads merged) beside
    # what their ranges cover; the overview of the whole array reads it at most about once.
    for what in ("batches", "overviews"):
        positive(doc, what, "covered_bytes")
        if not isinstance(doc[what].get("array_bytes_read"), int):
            fail(f"{what}: array_bytes_read is {doc[what].get('array_bytes_read')!r}, not a count of bytes")
    ov = doc["overviews"]
    if ov["array_bytes_read"] > ov["covered_bytes"] + 4096 * (ov["bins"] // 256 + 1):
        fail(f"overviews: read {ov['array_bytes_read']} bytes of an array of {ov['covered_bytes']}")
    positive(doc, "memory", "baseline_rss_bytes")
    for kind in ("hot", "scattered", "sequential"):
        for sync in ("always", "batch", "none"):
            positive(doc, "updates", "batch", f"{kind} {sync}", "updates_per_s")
    for sync in ("always", "batch", "none"):
        positive(doc, "updates", "follow", sync, "ack_p50_s")
        positive(doc, "updates", "follow", sync, "ingest_lines_per_s")
    positive(doc, "monitor", "summarizer", "items_per_s")
    positive(doc, "monitor", "traffic", "naive_over_ours")
    if doc["monitor"]["traffic"]["naive_over_ours"] < 1:
        fail("the monitor sent more than the naive protocol")
    if doc["duckdb"]["available"] or "npm install" not in open(out + ".md").read():
        fail("without MOMENTA_BENCH_DUCKDB the report must say how to install DuckDB")
    for name in ("latency", "bytes", "throughput", "updates", "monitor"):
        svg = f"{out}-{name}.svg"
        if not os.path.exists(svg) or "<svg" not in open(svg).read(2000):
            fail(f"{svg} is not an SVG chart")
    left = sorted(set(os.listdir(scratch)) - {os.path.basename(f) for f in os.listdir(scratch) if f.startswith("res")})
    if left:
        fail(f"files left behind in {scratch}: {left}")
    shutil.rmtree(scratch)
    print("bench_quick: every section present and sane")
    return 0


if __name__ == "__main__":
    sys.exit(main())
