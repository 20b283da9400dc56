"""SVG charts of one run's JSON document with Debian's matplotlib (Agg):
latency against range length (log-log, one line per method), bytes read per
query, throughput against the device's limit, update rates, monitor traffic
against naive. draw() returns the files it wrote."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

METHOD_ORDER = ["hbb", "ram", "ola", "scan", "numpy", "duckdb"]
LABELS = {"hbb": "momenta (hbb, default)", "ram": "momenta (all-in-RAM bins)", "ola": "momenta (Ola)",
          "scan": "plain scan, same backend", "numpy": "NumPy memmap", "duckdb": "DuckDB"}


def _rows(doc, stat, mode):
    out = {}
    for r in doc["latency"]:
        if r["mode"] == mode and (r["stat"] == stat or (r["method"] == "scan" and r["stat"] == "all")):
            out.setdefault(r["method"], []).append(r)
    return {m: sorted(v, key=lambda r: r["length"]) for m, v in out.items()}


def _latency(doc, prefix):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    for ax, mode in zip(axes, ("cold", "warm")):
        rows = _rows(doc, "sum", mode)
        for m in METHOD_ORDER:
            if m in rows:
                xs = [r["length"] for r in rows[m]]
                ax.plot(xs, [r["in_process_median_s"] for r in rows[m]], marker="o", label=LABELS[m])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("range length (elements)")
        ax.set_title(f"sum, {mode}: median in process")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("seconds")
    axes[1].legend(fontsize=8)
    return _save(fig, prefix, "latency")


def _bytes(doc, prefix):
    fig, ax = plt.subplots(figsize=(7, 4.8))
    rows = _rows(doc, "sum", "cold")
    for m in METHOD_ORDER:
        if m in rows and any(r["bytes_read_median"] for r in rows[m]):
            ax.plot([r["length"] for r in rows[m]], [max(1, r["bytes_read_median"] or 0) for r in rows[m]],
                    marker="o", label=LABELS[m])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("range length (elements)")
    ax.set_ylabel("bytes read per query (median, cold)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, prefix, "bytes")


def _bars(ax, names, ours, limits, ylabel):
    x = range(len(names))
    ax.bar([i - 0.2 for i in x], ours, 0.4, label="momenta")
    ax.bar([i + 0.2 for i in x], limits, 0.4, label="device limit (fio)")
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)


def _throughput(doc, prefix):
    d, b = doc["device"], doc["build"]["buffers"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    names = [f"build {k}" for k in b]
    _bars(axes[0], names, [v["data_bytes_read"] / v["wall_s"] / 1e6 for v in b.values()],
          [d["seq_read_bytes_per_s"] / 1e6] * len(b), "MB/s (fio: sequential read)")
    lim = d["rand_read_4k_qd32_iops"]
    _bars(axes[1], ["batch cold q/s", "overview cold bins/s"],
          [doc["batches"]["cold_qps"], doc["overviews"]["cold_bins_per_s"]], [lim, lim],
          "per second (fio: 4 KiB random reads, depth 32)")
    return _save(fig, prefix, "throughput")


def _updates(doc, prefix):
    up = doc["updates"]
    if "batch" not in up:
        return []
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    names = [n.replace(" ", "\n") for n in up["batch"]]
    _bars(axes[0], names, [v["updates_per_s"] for v in up["batch"].values()],
          [doc["device"]["rand_write_4k_qd32_iops"]] * len(names), "updates/s (fio: 4 KiB random writes, depth 32)")
    syncs = list(up["follow"])
    fs = up["fio_fdatasync_per_write_iops"]
    axes[1].bar(syncs, [up["follow"][s]["ack_p50_s"] * 1e3 for s in syncs], label="ack latency p50")
    axes[1].axhline(1e3 / fs, color="k", linestyle="--", label="fio: one fdatasync'd write")
    axes[1].set_ylabel("ms")
    axes[1].set_title("update --follow --ack, per sync policy")
    axes[1].legend(fontsize=8)
    return _save(fig, prefix, "updates")


def _monitor(doc, prefix):
    t = doc["monitor"]["traffic"]
    fig, ax = plt.subplots(figsize=(6, 4.8))
    ax.bar(["ours, first window", "ours, steady", "naive"], [t["fill_bytes"], t["steady_bytes"], t["naive_bytes"]])
    ax.set_yscale("log")
    ax.set_ylabel(f"bytes on the wire per window ({t['k']} sites, eps {t['eps']})")
    return _save(fig, prefix, "monitor")


def _save(fig, prefix, name):
    path = f"{prefix}-{name}.svg"
    fig.tight_layout()
    fig.savefig(path, format="svg")
    plt.close(fig)
    return [path]


def draw(doc, prefix):
    out = []
    for f in (_latency, _bytes, _throughput, _updates, _monitor):
        out += f(doc, prefix)
    return out
