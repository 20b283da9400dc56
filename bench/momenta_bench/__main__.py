"""momenta bench: the benchmark of momenta on this machine, a script beside the
benchmarks (not part of the momenta binary, whose `momenta bench` only points
here). Run with Debian's /usr/bin/python3 (NumPy; matplotlib for --plot) from
the source tree, after building the bench targets:

  /usr/bin/python3 bench/momenta_bench --preset quick|terabyte [--cli MOMENTA] [--dir D]
          [--data-size BYTES] [--rounds N] [--drivers DIR] [--keep] [--plot] [--out PREFIX] [--json]

--cli: the momenta binary measured (default: build/tools/momenta of this tree,
else `momenta` on PATH); --drivers: the compiled bench drivers (default: the
build tree's bench/ folder beside that binary's tools/); --data-size:
"1G", "16G", "2^30" (at least 64M); --rounds 1..100. A bad argument is one
line and exit 2, as the CLI's usage errors.

and it runs, in order, each phase timed and its machine load recorded:
  device    fio on a file of its own (device.py)
  setup     the sparse array, its data regions written (dataset.py), DuckDB's copy
  build     each buffer kind built cold against fio (builds.py)
  queries   latency, every method interleaved (queries.py, methods.py)
  serving   batches, overviews, RAM (serving.py)
  updates   bench/ingest_driver.py (updates.py)
  monitor   stream_bench and net_monitor_driver (monitor.py)
then writes PREFIX.json and PREFIX.md (and prints the Markdown, or with
--json the JSON), and with --plot PREFIX-*.svg (plots.py). Every file it
made is removed at the end unless --keep, also on Ctrl-C, SIGTERM or error.

PREFIX.json (version 1): {"version", "revision", "command", "config" (preset,
length, data_bytes, regions, rounds, samples_per_length, scan_cap, ...),
"machine" (machine.py: cpus, cpu_model, memory_bytes, kernel, file_system,
device{name, model, scheduler, ...}, loadavg_start), "phases" {name: {seconds,
busy, others_busy, loadavg_end}}, "device" (device.py's fio figures),
"build" {"buffers": {hbb|ram|ola: {wall_s, data_bytes_read, fio_seq_seconds,
fraction_of_fio, sidecar_bytes, flags}}, "first_query": {wall_s, device_bytes}},
"latency" [aggregate.py rows: method (hbb ram ola scan numpy duckdb), stat
(sum moments var minmax; all for the scan), length, mode (cold warm), n,
holes_at_both_ends, in_process_median_s, in_process_p99_s, process_median_s,
process_p99_s, bytes_read_median (asked), device_bytes_median (delivered by
the device: holes and cached pages are free), device_floor_s,
fraction_of_limit (device_floor_s over process_median_s, or over the
in-process time where there is no process)], "samples" (every query measured), "checks" {compared,
wrong}, "unsupported", "batches" {ranges, cold_qps, warm_qps}, "overviews"
{bins, cold_bins_per_s, warm_bins_per_s} (both with the last run's covered_bytes,
array_bytes_read, tier_bytes_read, read_requests: what its ranges span, and what was asked of
the device once each batch's reads were merged), "memory" {baseline_rss_bytes, ranges,
KIND: {rss_bytes, above_baseline_bytes} (the larger of the two ranges)}, "updates" (updates.py), "monitor"
(monitor.py), "duckdb" {available, how, load}}. Times in seconds, sizes in bytes.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import aggregate  # noqa: E402
import builds  # noqa: E402
import dataset  # noqa: E402
import device  # noqa: E402
import duckdb_bench  # noqa: E402
import machine  # noqa: E402
import monitor  # noqa: E402
import queries  # noqa: E402
import report  # noqa: E402
import serving  # noqa: E402
import updates  # noqa: E402
from common import BenchError, log  # noqa: E402
from methods import Buffer  # noqa: E402

GiB = 1 << 30
# The presets. quick: a few minutes on 2 cores; terabyte: the mission's scale.
PRESETS = {
    "quick": dict(length=1 << 31, data=1 * GiB, regions=8, rounds=2, fio_bytes=1 * GiB, fio_runtime=2,
                  scan_cap=1 << 27, batch_ranges=2000, bins=1000, build_rounds=1, ingest_gib=1,
                  ingest_rounds=1, ingest_updates=100_000, ingest_fio_runtime=2, ingest_lines=100,
                  monitor_n=1e5, monitor_k=4),
    "terabyte": dict(length=1 << 37, data=16 * GiB, regions=64, rounds=5, fio_bytes=4 * GiB, fio_runtime=10,
                     scan_cap=1 << 30, batch_ranges=10000, bins=1000, build_rounds=2, ingest_gib=4,
                     ingest_rounds=3, ingest_updates=1_000_000, ingest_fio_runtime=5, ingest_lines=400,
                     monitor_n=1e6, monitor_k=16),
}


_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def data_size(text):
    """Bytes from "65536", "64M", "1G", "2^30", "3*2^20" (as the CLI's sizes), at least 64M."""
    m = re.fullmatch(r"(\d+)([kKmMgGtT]?)|(?:(\d+)\*)?2\^(\d+)", text.strip())
    n = None
    if m and m.group(1) is not None:
        n = int(m.group(1)) * _UNITS[m.group(2).lower()]
    elif m:
        n = int(m.group(3) or 1) << int(m.group(4))
    if n is None or n < (64 << 20) or n > (1 << 63):
        raise argparse.ArgumentTypeError(f"'{text}' is not a size of at least 64M (e.g. 1G, 16G)")
    return n


def folder(text):
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"'{text}' is not a folder")
    return text


def rounds(text):
    if not text.isdigit() or not 1 <= int(text) <= 100:
        raise argparse.ArgumentTypeError(f"'{text}' is not a count from 1 to 100")
    return int(text)


def default_cli():
    """build/tools/momenta of the tree this script is in, else `momenta` on PATH."""
    built = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build",
                         "tools", "momenta")
    return built if os.access(built, os.X_OK) else shutil.which("momenta")


def default_drivers(cli):
    """The compiled drivers of the build tree the binary is in (BUILD/tools/momenta: BUILD/bench)."""
    d = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(cli))), "bench")
    return d if os.path.exists(os.path.join(d, "scan_driver")) else None


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line and exit 2, as the CLI's usage errors
        self.exit(2, f"momenta bench: {message}\n")


def parse():
    ap = _Parser(prog="momenta bench")
    ap.add_argument("--cli")
    ap.add_argument("--preset", required=True, choices=sorted(PRESETS))
    ap.add_argument("--dir", default=".", type=folder)
    ap.add_argument("--data-size", type=data_size)
    ap.add_argument("--rounds", type=rounds)
    ap.add_argument("--drivers")
    ap.add_argument("--out", default="momenta-bench")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--plot", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    a.cli = a.cli or default_cli()
    if not a.cli:
        ap.error("--cli: no momenta binary found (build it, or give --cli PATH)")
    a.cli = os.path.abspath(a.cli)
    a.drivers = a.drivers or default_drivers(a.cli)
    return a


def revision(cli, bench_dir):
    """The commit of the code measured: the one `momenta --version` names
    ("momenta 0.1.0 (32dd7f4)", baked in at build time), else the bench
    folder's git checkout, else "unknown"."""
    try:
        out = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=5).stdout
        m = re.search(r"\(([0-9a-f]{7,}(?:-dirty)?)\)", out)
        if m:
            return m.group(1)
        return subprocess.run(["git", "-C", bench_dir, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=5).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def free_space_needed(cfg, data, duck):
    """Bytes the run writes at most: the data, three buffers (Ola's bins are
    ~1/256 of the array's bytes, the tree ~1/1000), fio's file, the update
    bench's dense array, DuckDB's copy, and 1 GiB to spare."""
    arr = cfg["length"] * 8
    return (data + arr // 256 + 2 * (arr // 1000 + data // 100) + cfg["fio_bytes"] + cfg["ingest_gib"] * GiB
            + (2 * data if duck else 0) + GiB)


class Run:
    def __init__(self, a):
        self.a = a
        self.cfg = dict(PRESETS[a.preset])
        self.data = a.data_size or self.cfg["data"]
        if a.rounds:
            self.cfg["rounds"] = a.rounds
            self.cfg["build_rounds"] = min(self.cfg["build_rounds"], a.rounds)
            self.cfg["ingest_rounds"] = min(self.cfg["ingest_rounds"], a.rounds)
        self.dir = os.path.realpath(a.dir)
        self.bench_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.made = []
        self.phases = {}

    def check_space(self, duck):
        vfs = os.statvfs(self.dir)
        free = vfs.f_bavail * vfs.f_frsize
        need = free_space_needed(self.cfg, self.data, duck)
        if free < need:
            raise BenchError(f"{self.dir} has {free / GiB:.1f} GiB free; --preset {self.a.preset} with "
                             f"{self.data / GiB:g} GiB of data needs {need / GiB:.1f} GiB (lower --data-size or "
                             f"pick another --dir)")

    def cleanup(self):
        if self.a.keep:
            log("kept: " + ", ".join(self.made))
            return
        for p in self.made:
            if os.path.isdir(p):
                shutil.rmtree(p, ignore_errors=True)
            elif os.path.exists(p):
                os.remove(p)

    def main(self):
        a, cfg = self.a, self.cfg
        if a.drivers is None or not os.path.exists(os.path.join(a.drivers, "scan_driver")):
            raise BenchError("scan_driver not found: build the bench targets (configure with -DMOMENTA_BUILD_BENCH=ON)")
        if self.data * 4 > cfg["length"] * 8:
            raise BenchError(f"--data-size {self.data / GiB:g} GiB is more than a quarter of the "
                             f"{cfg['length'] * 8 / GiB:g} GiB array of --preset {a.preset} "
                             f"(at most {cfg['length'] * 2 / GiB:g} GiB)")
        layout = dataset.Layout(cfg["length"], self.data, cfg["regions"], 20261202)
        duck_home = duckdb_bench.find()
        self.check_space(duck_home is not None)
        doc = {"version": 1, "revision": revision(a.cli, self.bench_dir), "command": sys.argv[1:],
               "machine": machine.describe(self.dir), "phases": self.phases}
        samples_per_length = 2 * cfg["rounds"]
        doc["config"] = dict(cfg, preset=a.preset, data_bytes=layout.data_bytes, samples_per_length=samples_per_length,
                             region_elements=layout.region)
        log(f"--preset {a.preset}: {cfg['length']:,} elements, {layout.data_bytes / GiB:g} GiB of data in "
            f"{cfg['regions']} regions, in {self.dir}")
        with machine.Phase("device", self.phases):
            doc["device"] = device.measure(self.dir, cfg["fio_bytes"], cfg["fio_runtime"], self.made)
        array = os.path.join(self.dir, "momenta_bench.npy")
        buffers = [Buffer("hbb", array + ".momenta", []),
                   Buffer("ram", array + ".ram.momenta", ["--disk-tier", "off"]),
                   Buffer("ola", array + ".ola.momenta", ["--buffer", "ola"])]
        with machine.Phase("setup", self.phases):
            for p in [array] + [b.sidecar for b in buffers]:
                if os.path.exists(p):
                    raise BenchError(f"{p} exists (a kept run?): remove it first")
            self.made += [array] + [b.sidecar for b in buffers]
            log(f"writing the array: {layout.data_bytes / GiB:g} GiB in {cfg['regions']} regions")
            doc["setup"] = {"write_seconds": dataset.make_array(a.cli, array, layout), "layout": layout.to_json()}
            doc["duckdb"] = {"available": duck_home is not None, "how": duckdb_bench.HOW}
            duck = None
            if duck_home:
                db = os.path.join(self.dir, "momenta_bench.duckdb")
                for p in (db, db + ".wal"):
                    if os.path.exists(p):
                        os.remove(p)
                self.made += [db, db + ".wal"]
                duck = duckdb_bench.DuckDB(duck_home, db)
                log("DuckDB: loading the data regions")
                doc["duckdb"]["load"] = duck.load(layout)
        with machine.Phase("build", self.phases):
            doc["build"] = {"buffers": builds.build_all(a.cli, array, buffers, cfg["build_rounds"],
                                                        doc["device"]["seq_read_bytes_per_s"], layout.data_bytes),
                            "first_query": builds.first_query(a.cli, array, self.dir, cfg["length"])}
        ctx = argparse.Namespace(cli=a.cli, array=array, buffers=buffers, layout=layout, duckdb=duck,
                                 scan_driver=os.path.join(a.drivers, "scan_driver"), scan_cap=cfg["scan_cap"])
        with machine.Phase("queries", self.phases):
            ranges = dataset.draw_ranges(layout, samples_per_length, 7)
            samples, doc["checks"], doc["unsupported"] = queries.run_latency(ctx, ranges)
            doc["samples"] = samples
            doc["latency"] = aggregate.latency_rows(samples, doc["device"])
        with machine.Phase("serving", self.phases):
            doc["batches"] = serving.batches(a.cli, array, buffers[0], layout, cfg["batch_ranges"], cfg["rounds"], 11,
                                             self.dir)
            doc["overviews"] = serving.overviews(a.cli, array, buffers[0], cfg["length"], cfg["bins"], cfg["rounds"])
            doc["memory"] = serving.memory(a.cli, array, buffers, layout)
        with machine.Phase("updates", self.phases):
            log("updates: bench/ingest_driver.py")
            doc["updates"] = updates.run_ingest(self.bench_dir, a.cli, self.dir, cfg["ingest_gib"],
                                                cfg["ingest_rounds"], cfg["ingest_updates"],
                                                cfg["ingest_fio_runtime"], cfg["ingest_lines"])
        with machine.Phase("monitor", self.phases):
            log("monitor: stream_bench, net_monitor_driver")
            doc["monitor"] = monitor.run_monitor(a.drivers, cfg["monitor_n"], cfg["monitor_k"])
        self.write(doc)
        if doc["checks"]["wrong"]:
            raise BenchError(f"{len(doc['checks']['wrong'])} answers disagreed with the scan: the figures measure "
                             f"nothing until that is fixed (see {a.out}.json, checks)")

    def write(self, doc):
        a = self.a
        md = report.markdown(doc)
        folder = os.path.dirname(os.path.abspath(a.out))
        os.makedirs(folder, exist_ok=True)
        with open(a.out + ".json", "w") as f:
            json.dump(doc, f, indent=1)
        with open(a.out + ".md", "w") as f:
            f.write(md)
        if a.plot:
            import plots
            for path in plots.draw(doc, a.out):
                log(f"wrote {path}")
        sys.stdout.write(json.dumps(doc, indent=1) + "\n" if a.json else md)
        log(f"wrote {a.out}.md and {a.out}.json")


def _terminate(signum, _frame):
    raise KeyboardInterrupt(signum)


def main():
    a = parse()
    signal.signal(signal.SIGTERM, _terminate)
    r = Run(a)
    try:
        r.main()
    except BenchError as e:
        print(f"momenta bench: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("momenta bench: interrupted; removing its files", file=sys.stderr)
        return 130
    except (OSError, ValueError, KeyError) as e:  # one line, not a traceback
        print(f"momenta bench: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        r.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
