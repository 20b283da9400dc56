"""The device's limits, measured with fio on a file of its own in the bench
folder: sequential read, random reads at depth 1 and 32, random writes and
one fdatasync per write. Every momenta figure is also given as a fraction of
one of these."""
import json
import os
import shutil

from common import BenchError, log, run


def _fio(args):
    out, _ = run(["fio", "--output-format=json"] + args)
    return json.loads(out)["jobs"][0]


def measure(folder, size, runtime, made):
    """fio's figures on FILE = folder/momenta_bench_fio.dat (size bytes,
    written fully first with random bytes: holes would read without the
    disk). Appends the file to `made` (the caller removes it)."""
    if shutil.which("fio") is None:
        raise BenchError("fio not found (apt-get install fio): the device's limits are part of every figure")
    path = os.path.join(folder, "momenta_bench_fio.dat")
    made.append(path)
    if not (os.path.exists(path) and os.stat(path).st_size == size and os.stat(path).st_blocks * 512 >= size):
        log(f"writing fio's {size >> 20} MiB file")
        run(["fio", "--name=layout", f"--filename={path}", f"--size={size}", "--rw=write", "--bs=1M",
             "--ioengine=psync", "--end_fsync=1", "--refill_buffers=1", "--output-format=terse"])
    base = [f"--filename={path}", f"--size={size}", f"--runtime={runtime}", "--time_based"]
    direct = base + ["--ioengine=io_uring", "--direct=1"]
    out = {"file_bytes": size, "runtime_s": runtime, "engine": "io_uring, O_DIRECT"}
    log("fio: sequential read 1 MiB at depth 32")
    j = _fio(["--name=seq"] + direct + ["--rw=read", "--bs=1M", "--iodepth=32", "--readonly"])
    out["seq_read_bytes_per_s"] = j["read"]["bw_bytes"]
    log("fio: random reads 4 KiB at depth 1 and 32, 16 KiB at depth 32")
    j = _fio(["--name=rr1"] + direct + ["--rw=randread", "--bs=4k", "--iodepth=1", "--readonly"])
    out["rand_read_4k_qd1_iops"] = j["read"]["iops"]
    out["rand_read_4k_qd1_p50_s"] = j["read"]["clat_ns"]["percentile"]["50.000000"] / 1e9
    j = _fio(["--name=rr32"] + direct + ["--rw=randread", "--bs=4k", "--iodepth=32", "--readonly"])
    out["rand_read_4k_qd32_iops"] = j["read"]["iops"]
    j = _fio(["--name=rr16"] + direct + ["--rw=randread", "--bs=16k", "--iodepth=32", "--readonly"])
    out["rand_read_16k_qd32_iops"] = j["read"]["iops"]
    log("fio: random writes 4 KiB at depth 32; 4 KiB writes with fdatasync after each")
    j = _fio(["--name=rw32"] + direct + ["--rw=randwrite", "--bs=4k", "--iodepth=32"])
    out["rand_write_4k_qd32_iops"] = j["write"]["iops"]
    j = _fio(["--name=fsync"] + base + ["--rw=write", "--bs=4k", "--ioengine=psync", "--fdatasync=1"])
    out["fdatasync_per_write_iops"] = j["write"]["iops"]
    return out
