"""Batches and overviews through the CLI, cold and warm, against fio's
random reads at depth 32 (a cold query of a batch reads its two partial end
leaves: about two random reads); and the process's RAM per buffer kind."""
import json
import os
import random

from common import BenchError, make_cold, median, peak_rss, spawn


def query_many(argv):
    """Runs a `momenta query --ranges/--bins ... --json`: (stdout, wall seconds, its closing
    line on stderr as a dict: "covered_bytes", "array_bytes_read" (asked of the device, the
    batch's reads merged), "tier_bytes_read", "read_requests", ...)."""
    code, out, err, wall, _ = spawn(argv, text=True)
    if code != 0:
        raise BenchError(f"momenta {' '.join(argv[1:3])}... failed ({code}): {err.strip()[-300:]}")
    closing = [ln for ln in err.splitlines() if ln.startswith("{")]
    if not closing:
        raise BenchError(f"momenta {' '.join(argv[1:3])}... printed no closing JSON line on stderr")
    return out, wall, json.loads(closing[-1])


def batches(cli, array, buf, layout, count, rounds, seed, folder):
    """`query --ranges FILE --stat sum` over `count` ranges (lengths uniform in
    [1, 2^20], half starting in data), cold and warm, `rounds` times."""
    rng = random.Random(seed)
    path = os.path.join(folder, "momenta_bench_ranges.txt")
    lines = []
    for k in range(count):
        n = rng.randint(1, 1 << 20)
        p = (rng.choice(layout.starts) + rng.randrange(layout.region)) if k % 2 == 0 else rng.randrange(layout.length)
        p = min(p, layout.length - n)
        lines.append(f"{p}:{p + n}\n")
    with open(path, "w") as f:
        f.writelines(lines)
    res = {"cold": [], "warm": []}
    closing = {}
    try:
        for _ in range(rounds):
            for mode in ("cold", "warm"):
                if mode == "cold":
                    make_cold(array, buf.sidecar)
                out, wall, closing = query_many([cli, "query", array, "--ranges", path, "--stat", "sum", "--sidecar",
                                                 buf.sidecar, "--json"])
                answers = [ln for ln in out.splitlines() if ln.startswith("{\"line\"")]
                if len(answers) != count:
                    raise BenchError(f"query --ranges answered {len(answers)} of {count} ranges")
                res[mode].append(count / wall)
    finally:
        os.remove(path)
    return {"ranges": count, "cold_qps": median(res["cold"]), "warm_qps": median(res["warm"]),
            "cold_rounds": res["cold"], "warm_rounds": res["warm"], **_bytes(closing)}


def _bytes(closing):
    """What a batch read, from its closing line: the bytes its ranges cover, and those asked
    of the device (array and disk tier, reads merged) in so many requests."""
    return {k: closing.get(k) for k in ("covered_bytes", "array_bytes_read", "tier_bytes_read", "read_requests")}


def overviews(cli, array, buf, length, bins, rounds):
    """`query --range 0:N --bins K --stat mean --stat min --stat max`, cold and warm."""
    res = {"cold": [], "warm": []}
    closing = {}
    for _ in range(rounds):
        for mode in ("cold", "warm"):
            if mode == "cold":
                make_cold(array, buf.sidecar)
            out, wall, closing = query_many([cli, "query", array, "--range", f"0:{length}", "--bins", str(bins),
                                             "--stat", "mean", "--stat", "min", "--stat", "max", "--sidecar",
                                             buf.sidecar, "--json"])
            if sum(1 for ln in out.splitlines() if ln.startswith("{\"range\"")) != bins:
                raise BenchError(f"query --bins {bins} did not answer {bins} bins")
            res[mode].append(wall)
    return {"bins": bins, "cold_s": median(res["cold"]), "warm_s": median(res["warm"]),
            "cold_bins_per_s": bins / median(res["cold"]), "warm_bins_per_s": bins / median(res["warm"]),
            **_bytes(closing)}


def memory(cli, array, buffers, layout):
    """Peak RSS per buffer kind of two sums, the larger kept: the whole array
    (the RAM tier alone) and 10^8 elements from inside the first region (end
    leaves or bins read: the all-in-RAM scheme's per-query scratch shows
    here); less that of `momenta --version` (the binary alone): the buffer's
    RAM, measured."""
    base = peak_rss([cli, "--version"])
    s = layout.starts[0] + layout.region // 2
    ranges = [(0, layout.length), (s, min(layout.length, s + 10**8))]
    out = {"baseline_rss_bytes": base, "ranges": ranges}
    for b in buffers:
        rss = max(peak_rss([cli, "query", array, "--range", f"{p}:{q}", "--stat", "sum", "--sidecar", b.sidecar])
                  for p, q in ranges)
        out[b.name] = {"rss_bytes": rss, "above_baseline_bytes": max(0, rss - base)}
    return out
