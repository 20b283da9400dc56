"""Updates, through bench/ingest_driver.py: hot, scattered and
sequential `momenta update` processes on a dense array of its own, once per
sync policy (--syncs), and the --follow writer's acknowledgment latency and ingest rate per
sync policy next to fio's fdatasync per write. Its JSON is summarized here."""
import json
import os

from common import BenchError, median, run

SYNCS = ("always", "batch", "none")  # each workload's update process runs once per policy


def run_ingest(bench_dir, cli, folder, gib, rounds, updates, fio_runtime, lines):
    script = os.path.join(bench_dir, "ingest_driver.py")
    if not os.path.exists(script):
        raise BenchError(f"{script} not found (the bench's scripts are incomplete)")
    if os.geteuid() != 0:
        return {"skipped": "needs root (ingest_driver drops the page cache for its cold runs)"}
    out_json = os.path.join(folder, "momenta_bench_ingest.json")
    try:
        run(["/usr/bin/python3", script, "--cli", cli, "--dir", folder, "--gib", str(gib), "--rounds", str(rounds),
             "--updates", str(updates), "--fio-runtime", str(fio_runtime), "--latency-lines", str(lines),
             "--syncs", ",".join(SYNCS), "--json", out_json])
        with open(out_json) as f:
            j = json.load(f)
    finally:
        if os.path.exists(out_json):
            os.remove(out_json)
    res = {"array_gib": gib, "updates": updates, "rounds": rounds,
           "fio_randread_4k_qd32_iops_on_its_array": median(j["fio_randread_iops"]), "batch": {}, "follow": {}}
    for kind in ("hot", "scattered", "sequential"):
        for sync in SYNCS:
            rs = [r for r in j["rows"] if r["kind"] == kind and r["sync"] == sync]
            res["batch"][f"{kind} {sync}"] = {
                "kind": kind, "sync": sync, "updates_per_s": median(r["rate"] for r in rs),
                "updates": rs[0]["updates"], "read_bytes_per_update": median(r["read_bytes"] / r["updates"] for r in rs),
                "written_bytes_per_update": median(r["written_bytes"] / r["updates"] for r in rs)}
    fs = [r["iops"] for r in j["follow"] if r["kind"].startswith("fio")]
    res["fio_fdatasync_per_write_iops"] = median(fs)
    for sync in ("always", "batch", "none"):
        lat = [r for r in j["follow"] if r["kind"] == "ack latency" and r["sync"] == sync]
        rate = [r for r in j["follow"] if r["kind"] == "follow rate" and r["sync"] == sync]
        res["follow"][sync] = {"ack_p50_s": median(r["p50_ms"] for r in lat) / 1e3,
                               "ack_p99_s": median(r["p99_ms"] for r in lat) / 1e3,
                               "ingest_lines_per_s": median(r["rate"] for r in rate)}
    return res
