"""The Markdown report of one run's JSON document (momenta_bench/__main__.py
documents its fields)."""


def _t(s):
    """Seconds as a short time: 12.3 us, 4.56 ms, 1.23 s."""
    if s is None:
        return "–"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def _b(n):
    if n is None:
        return "–"
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            return f"{n / k:.1f} {unit}"
    return f"{n:.0f} B"


def _r(x, unit=""):
    if x is None:
        return "–"
    return f"{x:,.0f}{unit}" if x >= 100 else f"{x:.3g}{unit}"


def _pct(x):
    return "–" if x is None else f"{100 * x:.0f}%"


def _len(n):
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 and n > 1000 else f"{n:,}"


def _phase(doc, name):
    ph = doc["phases"].get(name)
    if not ph:
        return ""
    return (f"_phase {name}: {ph['seconds']:.0f} s; machine busy {_pct(ph['busy'])}, of which other processes "
            f"{_pct(ph['others_busy'])}; load average at its end {' '.join(ph['loadavg_end'])}_\n")


def markdown(doc):
    m, d, L = doc["machine"], doc["device"], []
    cfg = doc["config"]
    L.append(f"# momenta bench --preset {cfg['preset']}\n")
    L.append(f"Array: {cfg['length']:,} f8 elements ({_b(cfg['length'] * 8)} sparse), {_b(cfg['data_bytes'])} of data "
             f"in {cfg['regions']} regions; {cfg['rounds']} interleaved rounds (ranges: {cfg['samples_per_length']} "
             f"per length, half starting in data, half anywhere). Revision {doc['revision']}.\n")
    dev = m["device"]
    L.append(f"Machine: {m['cpus']} x {m['cpu_model']}, {_b(m['memory_bytes'])} RAM, Linux {m['kernel']}, "
             f"{m['file_system']} on {dev.get('name')} ({dev.get('model', '?')}, scheduler {dev.get('scheduler', '?')}, "
             f"read-ahead {dev.get('read_ahead_kb', '?')} KiB); load average at the start {' '.join(m['loadavg_start'])}.\n")
    L.append("## The device's limits (fio, io_uring, O_DIRECT)\n")
    L.append("| measure | value |\n|---|---:|")
    L.append(f"| sequential read, 1 MiB, depth 32 | {d['seq_read_bytes_per_s'] / 1e6:,.0f} MB/s |")
    L.append(f"| random read 4 KiB, depth 1 | {d['rand_read_4k_qd1_iops']:,.0f} IOPS, p50 {_t(d['rand_read_4k_qd1_p50_s'])} |")
    L.append(f"| random read 4 KiB, depth 32 | {d['rand_read_4k_qd32_iops']:,.0f} IOPS |")
    L.append(f"| random read 16 KiB, depth 32 | {d['rand_read_16k_qd32_iops']:,.0f} IOPS |")
    L.append(f"| random write 4 KiB, depth 32 | {d['rand_write_4k_qd32_iops']:,.0f} IOPS |")
    L.append(f"| 4 KiB write + fdatasync each | {d['fdatasync_per_write_iops']:,.0f} /s |\n")
    L.append(_phase(doc, "device"))

    L.append("## Build\n")
    L.append("| buffer | build (cold array) | bytes it read (holes too) | fio's sequential read of the data | fraction of fio | buffer on disk |")
    L.append("|---|---:|---:|---:|---:|---:|")
    for name, b in doc["build"]["buffers"].items():
        L.append(f"| {name} (`{' '.join(b['flags']) or 'default'}`) | {_t(b['wall_s'])} | {_b(b['data_bytes_read'])} | "
                 f"{_t(b['fio_seq_seconds'])} | {_pct(b['fraction_of_fio'])} | {_b(b['sidecar_bytes'])} |")
    fq = doc["build"]["first_query"]
    L.append(f"\nFirst query (sum of the whole array) on the array with no buffer: {_t(fq['wall_s'])} "
             f"(the whole process: the open builds the buffer).")
    dk = doc["duckdb"]
    if dk.get("load"):
        L.append(f"DuckDB: loading the data regions into its table took {_t(dk['load']['seconds'])}.")
    L.append("")
    L.append(_phase(doc, "build"))

    L.append("## Query latency\n")
    L.append("In process: the query's own time (CLI: its `elapsed_us`; NumPy, DuckDB: around the call). "
             "Process: the whole `momenta query` (or `scan_driver`, or `node`) process. Cold: the array and the "
             "whole sidecar (or DuckDB's file) dropped from the page cache first. `% of limit`: fio's time for "
             "the bytes the device delivered (one random read + the bytes at the sequential rate) over the time "
             "of the whole process (NumPy: of the call; the open's reads count too); bytes: asked for (the CLI's array and tier bytes, the scan's reads, NumPy's slice) "
             "and delivered by the device (task I/O accounting: holes and cached pages cost nothing); "
             "`holes`: samples whose both ends lie in holes (no I/O there). scan: one pass computing every "
             "statistic. Ranges longer than the scan cap "
             f"({_len(cfg['scan_cap'])} elements) are not asked of the scan, NumPy and DuckDB.\n")
    L.append("| length | stat | method | cold in process p50 / p99 | cold process p50 | warm in process p50 / p99 "
             "| warm process p50 | bytes asked / from device (cold) | % of limit | holes |")
    L.append("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
    rows = {(r["length"], r["stat"], r["method"], r["mode"]): r for r in doc["latency"]}
    for (length, stat, method, mode), c in rows.items():
        if mode != "cold":
            continue
        w = rows.get((length, stat, method, "warm"), {})
        L.append(f"| {_len(length)} | {stat} | {method} | {_t(c['in_process_median_s'])} / {_t(c['in_process_p99_s'])} "
                 f"| {_t(c['process_median_s'])} | {_t(w.get('in_process_median_s'))} / {_t(w.get('in_process_p99_s'))} "
                 f"| {_t(w.get('process_median_s'))} | {_b(c['bytes_read_median'])} / {_b(c['device_bytes_median'])} "
                 f"| {_pct(c.get('fraction_of_limit'))} "
                 f"| {c['holes_at_both_ends']}/{c['n']} |")
    if doc["unsupported"]:
        L.append("\nNot answered: " + "; ".join(f"{k}: {v}" for k, v in doc["unsupported"].items()))
    ch = doc["checks"]
    L.append(f"\nAnswers checked (sums against the scan): {ch['compared']}, wrong: {len(ch['wrong'])}.")
    if not dk.get("load"):
        L.append(f"\n{dk['how']}")
    L.append("")
    L.append(_phase(doc, "queries"))

    L.append("## Batches, overviews, RAM\n")
    bt, ov = doc["batches"], doc["overviews"]
    lim = d["rand_read_4k_qd32_iops"]
    L.append("| measure | cold | warm | device limit | cold / limit |\n|---|---:|---:|---:|---:|")
    L.append(f"| batch of {bt['ranges']:,} sums (`query --ranges`), queries/s | {_r(bt['cold_qps'])} | {_r(bt['warm_qps'])} "
             f"| {lim:,.0f} random reads/s (4 KiB, depth 32) | {_pct(bt['cold_qps'] / lim)} |")
    L.append(f"| overview, {ov['bins']} bins of the whole array (mean, min, max), bins/s | {_r(ov['cold_bins_per_s'])} "
             f"| {_r(ov['warm_bins_per_s'])} | {lim:,.0f} random reads/s | {_pct(ov['cold_bins_per_s'] / lim)} |")
    for what, r in (("batch", bt), ("overview", ov)):
        if r.get("array_bytes_read") is not None:
            L.append(f"\nThe {what} read {_b(r['array_bytes_read'])} of the array and {_b(r['tier_bytes_read'])} of "
                     f"its buffer in {r['read_requests']:,} requests (its ranges cover {_b(r['covered_bytes'])}; "
                     f"reads merged where they overlap or touch).")
    mem = doc["memory"]
    L.append(f"\nPeak RSS of a sum (the larger of the whole array and 10^8 elements inside data), less "
             f"`momenta --version` ({_b(mem['baseline_rss_bytes'])}): "
             + ", ".join(f"{k} {_b(v['above_baseline_bytes'])}" for k, v in mem.items() if isinstance(v, dict)) + ".\n")
    L.append(_phase(doc, "serving"))

    up = doc["updates"]
    L.append("## Updates (bench/ingest_driver.py)\n")
    if "skipped" in up:
        L.append(f"Skipped: {up['skipped']}\n")
    else:
        wl = d["rand_write_4k_qd32_iops"]
        L.append(f"A dense {up['array_gib']} GiB array of its own; one `momenta update --binary` process per workload "
                 f"and sync policy (always: fdatasync per update batch; batch: one at the end; none: the OS decides).\n")
        # An uncached scattered update costs one page read (the ingest benchmark's floor):
        # fio's 4 KiB random reads at depth 32 on the update bench's own array,
        # in the same rounds, are its limit; random writes are the device's.
        rl = up["fio_randread_4k_qd32_iops_on_its_array"]
        L.append(f"Limits: fio 4 KiB random writes at depth 32 {wl:,.0f}/s (device phase); 4 KiB random reads at "
                 f"depth 32 on this array, in the same rounds, {rl:,.0f}/s.\n")
        L.append("| workload | updates/s (whole process) | / fio random writes | / fio random reads on its array | "
                 "read / update | written / update |")
        L.append("|---|---:|---:|---:|---:|---:|")
        for kind, r in up["batch"].items():
            L.append(f"| {kind} | {r['updates_per_s']:,.0f} | {r['updates_per_s'] / wl:.2f}x | "
                     f"{r['updates_per_s'] / rl:.2f}x | "
                     f"{r['read_bytes_per_update']:,.0f} B | {r['written_bytes_per_update']:,.0f} B |")
        fs = up["fio_fdatasync_per_write_iops"]
        L.append(f"\n`update --follow --ack`, one line at a time (ack latency) and streams of {up['updates']:,} lines; "
                 f"fio on a new 256 MiB file (as the log grows): {fs:,.0f} fdatasync'd writes/s ({_t(1 / fs)} each); "
                 f"on the device phase's preallocated file: {d['fdatasync_per_write_iops']:,.0f}/s.\n")
        L.append("| sync | ack p50 | ack p99 | p50 / fio fdatasync | streamed lines/s |\n|---|---:|---:|---:|---:|")
        for sync, r in up["follow"].items():
            L.append(f"| {sync} | {_t(r['ack_p50_s'])} | {_t(r['ack_p99_s'])} | {r['ack_p50_s'] * fs:.2f} | "
                     f"{r['ingest_lines_per_s']:,.0f} |")
        L.append("")
    L.append(_phase(doc, "updates"))

    mo = doc["monitor"]
    L.append("## Monitor (eps = 0.01)\n")
    s = mo["summarizer"]
    if "items_per_s" in s:
        L.append(f"Summarizer ingest (stream_bench, 100 items per tick): {s['items_per_s']:,.0f} items/s.\n")
    t = mo["traffic"]
    L.append(f"Traffic, {t['k']} sites, {t['window_events']:,.0f} events per window: ours {_b(t['steady_bytes'])} steady, "
             f"{_b(t['fill_bytes'])} in the first window; naive {_b(t['naive_bytes'])}: naive / ours "
             f"{t['naive_over_ours']:.1f}x (worse window); {t['events_per_s']:,.0f} events/s end to end over loopback.\n")
    L.append(_phase(doc, "monitor"))
    return "\n".join(L) + "\n"
