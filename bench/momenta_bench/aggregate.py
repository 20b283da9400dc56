"""Samples into figures: per method, statistic, range length and cold/warm,
the median and p99 inside the process and of the whole process, the bytes
asked for and delivered by the device, and the device's floor for the
delivered bytes (fio) as a fraction of the query's time."""
from common import median, p99


def device_floor(bytes_read, device):
    """The least time the device needs for a cold query that reads bytes_read:
    one random read's latency (depth 1) plus the bytes at fio's sequential rate;
    0 for a query that reads nothing (holes, or all from the buffer's RAM)."""
    if not bytes_read:
        return 0.0
    return device["rand_read_4k_qd1_p50_s"] + bytes_read / device["seq_read_bytes_per_s"]


def latency_rows(samples, device):
    groups = {}
    for s in samples:
        groups.setdefault((s["method"], s["stat"], s["length"], s["mode"]), []).append(s)
    rows = []
    for (method, stat, length, mode), ss in sorted(groups.items(), key=lambda kv: (kv[0][2], kv[0][1], kv[0][0],
                                                                                    kv[0][3])):
        ins = [s["in_s"] for s in ss]
        walls = [s["wall_s"] for s in ss if s["wall_s"] is not None]
        by = [s["bytes"] for s in ss if s["bytes"] is not None]
        dev = [s["device_bytes"] for s in ss if s.get("device_bytes") is not None]
        row = {"method": method, "stat": stat, "length": length, "mode": mode, "n": len(ss),
               "holes_at_both_ends": sum(1 for s in ss if s["holes_at_ends"]),
               "in_process_median_s": median(ins), "in_process_p99_s": p99(ins),
               "process_median_s": median(walls), "process_p99_s": p99(walls),
               "bytes_read_median": median(by), "device_bytes_median": median(dev)}
        if mode == "cold" and dev:
            # Against the whole process where there is one: its open reads
            # too (the RAM tier, the header), outside the query's own time.
            floor = device_floor(row["device_bytes_median"], device)
            took = row["process_median_s"] if row["process_median_s"] is not None else row["in_process_median_s"]
            row["device_floor_s"] = floor
            row["fraction_of_limit"] = floor / took if floor > 0 else None
        rows.append(row)
    return rows
