"""The monitor: the sliding-window summarizer's ingest rate (stream_bench,
BM_ThroughputSummarizer at eps 0.01) and a site's traffic on the wire
against the naive protocol (net_monitor_driver --json 1, eps 0.01)."""
import json
import os

from common import BenchError, run


def run_monitor(drivers, n, k):
    res = {}
    sb = os.path.join(drivers, "stream_bench")
    if os.path.exists(sb):
        out, _ = run([sb, "--benchmark_filter=BM_ThroughputSummarizer/items_per_tick:100/",
                      "--benchmark_format=json"])  # its own MinTime(2): 2 s
        b = json.loads(out)["benchmarks"][0]
        res["summarizer"] = {"eps": 0.01, "items_per_tick": 100, "items_per_s": b["items_per_second"]}
    else:
        res["summarizer"] = {"skipped": f"{sb} not built (configure with -DMOMENTA_BUILD_BENCH=ON)"}
    nm = os.path.join(drivers, "net_monitor_driver")
    if not os.path.exists(nm):
        raise BenchError(f"{nm} not found (configure with -DMOMENTA_BUILD_BENCH=ON)")
    out, _ = run([nm, "--k", str(k), "--eps", "0.01", "--n", f"{n:g}", "--json", "1"])
    j = json.loads(out.strip().splitlines()[-1])
    worse = max(j["steady_bytes"], j["fill_bytes"])
    j["naive_over_ours"] = j["naive_bytes"] / max(1.0, worse)
    j["events_per_s"] = (j["window_events"] + j["fill_events"]) / j["seconds"]
    res["traffic"] = j
    return res
