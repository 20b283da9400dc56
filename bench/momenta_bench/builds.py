"""Building each buffer kind, the array cold, against fio's sequential read
of the same bytes; and the first query on an array with no buffer yet (the
open builds it)."""
import json
import os
import shutil

from common import bytes_on_disk, log, make_cold, median, run, run_counted


def build_all(cli, array, buffers, rounds, seq_bps, data_bytes):
    """Each buffer built `rounds` times, kinds interleaved, the array and the
    old sidecar cold. Returns {kind: {...}} with the median build time, the
    bytes it read (holes included, where a kind reads them), fio's time to
    read the array's data_bytes of data once, and the buffer's size."""
    out = {b.name: [] for b in buffers}
    for k in range(rounds):
        for b in buffers:
            shutil.rmtree(b.sidecar, ignore_errors=True)
            make_cold(array)
            log(f"build {b.name} (round {k + 1} of {rounds})")
            text, wall = run([cli, "build", array, *b.flags, "--sidecar", b.sidecar, "--json"])
            j = json.loads(text.strip().splitlines()[-1])
            out[b.name].append({"wall_s": wall, "seconds": j["seconds"], "bytes_read": j["data_bytes_read"]})
    res = {}
    for b in buffers:
        rs = out[b.name]
        wall = median(r["wall_s"] for r in rs)
        data = rs[0]["bytes_read"]
        fio_s = data_bytes / seq_bps
        res[b.name] = {"flags": b.flags, "rounds": [r["wall_s"] for r in rs], "wall_s": wall,
                       "data_bytes_read": data, "fio_seq_seconds": fio_s, "fraction_of_fio": fio_s / wall,
                       "sidecar_bytes": bytes_on_disk(b.sidecar)}
    return res


def first_query(cli, array, folder, length):
    """The first `query --stat sum` over the whole array with no buffer (a
    fresh sidecar): the whole process, build on open included; removed after."""
    side = os.path.join(folder, "momenta_bench_first.momenta")
    shutil.rmtree(side, ignore_errors=True)
    make_cold(array)
    try:
        _, wall, dev = run_counted([cli, "query", array, "--range", f"0:{length}", "--stat", "sum", "--sidecar",
                                    side, "--json"])
    finally:
        shutil.rmtree(side, ignore_errors=True)
    return {"wall_s": wall, "device_bytes": dev}
