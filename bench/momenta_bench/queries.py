"""Query latency: every range, every statistic, every method, cold then
warm, interleaved (the default buffer, then the scan, then the next buffer,
then NumPy, ...), so that a slow spell of the machine hits all of them."""
from common import log
from methods import STATS, momenta_query, numpy_query, scan_query


def _record(samples, method, stat, r, mode, s):
    s = dict(s, method=method, stat=stat, length=r["length"], kind=r["kind"], holes_at_ends=r["holes_at_ends"],
             mode=mode, p=r["p"], q=r["q"])
    samples.append(s)


def _check(checks, r, a, b, scale):
    """Two sums of one range agree to 1e-9 of the range's Σ|a| (scale)."""
    if a is None or b is None:
        return
    checks["compared"] += 1
    if abs(a - b) > 1e-9 * max(1.0, scale):
        checks["wrong"].append({"p": r["p"], "q": r["q"], "a": a, "b": b})


def run_latency(ctx, ranges):
    """Samples of every method over `ranges`; ctx holds the cli, the array,
    the buffers, the scan driver, DuckDB (or None) and scan_cap (the longest
    range the scans, NumPy and DuckDB are asked, in elements)."""
    samples, checks = [], {"compared": 0, "wrong": []}
    unsupported = {}
    for n, r in enumerate(ranges):
        if n % 8 == 0:
            log(f"queries: range {n + 1} of {len(ranges)} (length {r['length']:,})")
        p, q = r["p"], r["q"]
        small = q - p <= ctx.scan_cap
        scale = 0.25 * ctx.layout.data_inside(p, q)  # Σ|a| of the values: about a quarter per element
        ref_sum = None
        if small:
            for mode in ("cold", "warm"):
                s = scan_query(ctx.scan_driver, ctx.array, p, q, mode == "cold")
                _record(samples, "scan", "all", r, mode, s)
            ref_sum = s["sum"]
        for stat in STATS:
            for buf in ctx.buffers:
                if (buf.name, stat) in unsupported:
                    continue
                for mode in ("cold", "warm"):
                    try:
                        s = momenta_query(ctx.cli, ctx.array, buf, p, q, stat, mode == "cold")
                    except Exception as e:  # a statistic this buffer kind does not answer
                        unsupported[(buf.name, stat)] = str(e)
                        break
                    _record(samples, buf.name, stat, r, mode, s)
                    if stat == "sum":
                        _check(checks, r, s["sum"], ref_sum, scale)
                if small and buf is ctx.buffers[0]:
                    for mode in ("cold", "warm"):
                        s = numpy_query(ctx.array, p, q, stat, mode == "cold")
                        _record(samples, "numpy", stat, r, mode, s)
                        if stat == "sum":
                            _check(checks, r, s["sum"], ref_sum, scale)
            if small and ctx.duckdb is not None:
                cold, warm = ctx.duckdb.query(p, q, stat)
                _record(samples, "duckdb", stat, r, "cold", cold)
                _record(samples, "duckdb", stat, r, "warm", warm)
                if stat == "sum":
                    _check(checks, r, cold["sum"], ref_sum, scale)
    return samples, checks, {f"{k[0]} {k[1]}": v for k, v in unsupported.items()}
