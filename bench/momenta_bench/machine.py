"""The machine: CPUs, memory, kernel, file system and device of the bench
folder; and how busy it was during each phase (/proc/stat, /proc/loadavg)."""
import os
import platform
import resource
import time


def _read(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def _mount_of(path):
    """(mount point, file system type, source) of the longest mount prefix of path."""
    best = ("/", "?", "?")
    path = os.path.realpath(path)
    for line in _read("/proc/mounts").splitlines():
        src, mnt, fstype = line.split()[:3]
        if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best[0]):
            best = (mnt, fstype, src)
    return best


def _device_of(path):
    """The block device holding path: name, model, rotational, scheduler, read-ahead."""
    st = os.stat(path)
    sys_dir = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    if not os.path.exists(sys_dir):
        return {"name": "?"}
    real = os.path.realpath(sys_dir)
    disk = real if os.path.exists(os.path.join(real, "queue")) else os.path.dirname(real)
    sched = _read(os.path.join(disk, "queue/scheduler"))
    return {"name": os.path.basename(real),
            "model": _read(os.path.join(disk, "device/model")) or _read(os.path.join(disk, "device/vendor")) or "?",
            "rotational": _read(os.path.join(disk, "queue/rotational")) == "1",
            "scheduler": sched[sched.find("[") + 1:sched.find("]")] if "[" in sched else sched,
            "read_ahead_kb": int(_read(os.path.join(disk, "queue/read_ahead_kb"), "0") or 0),
            "size_bytes": int(_read(os.path.join(disk, "size"), "0") or 0) * 512,
            "stat_path": sys_dir + "/stat"}


def describe(folder):
    cpu_model = "?"
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            cpu_model = line.split(":", 1)[1].strip()
            break
    mem = {}
    for line in _read("/proc/meminfo").splitlines():
        k, v = line.split(":", 1)
        mem[k] = int(v.split()[0]) * 1024
    mnt, fstype, src = _mount_of(folder)
    vfs = os.statvfs(folder)
    return {"cpus": os.cpu_count(), "cpu_model": cpu_model, "memory_bytes": mem.get("MemTotal", 0),
            "memory_available_bytes": mem.get("MemAvailable", 0), "kernel": platform.release(),
            "hostname": platform.node(), "folder": os.path.realpath(folder), "mount": mnt,
            "file_system": fstype, "source": src, "free_bytes": vfs.f_bavail * vfs.f_frsize,
            "device": _device_of(folder), "loadavg_start": _read("/proc/loadavg").split()[:3]}


def _cpu_ticks():
    """(busy, total) jiffies of all CPUs since boot."""
    f = [int(x) for x in _read("/proc/stat").splitlines()[0].split()[1:]]
    idle = f[3] + (f[4] if len(f) > 4 else 0)
    return sum(f) - idle, sum(f)


def _own_cpu_seconds():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


class Phase:
    """with Phase(name, phases): records the phase's wall time, the machine's
    busy fraction (all CPUs), the part of it that was not this bench (other
    processes: what disturbed the figures) and the load average at its end."""

    def __init__(self, name, phases):
        self.name, self.phases = name, phases

    def __enter__(self):
        self.t0, self.ticks0, self.own0 = time.perf_counter(), _cpu_ticks(), _own_cpu_seconds()
        return self

    def __exit__(self, *exc):
        wall = time.perf_counter() - self.t0
        b1, t1 = _cpu_ticks()
        busy_j, total_j = b1 - self.ticks0[0], max(1, t1 - self.ticks0[1])
        hz = os.sysconf("SC_CLK_TCK")
        own = _own_cpu_seconds() - self.own0  # children counted once they were waited for
        others = max(0.0, busy_j / hz - own)
        self.phases[self.name] = {"seconds": round(wall, 3), "busy": round(busy_j / total_j, 3),
                                  "others_busy": round(min(1.0, others / max(1e-9, total_j / hz)), 3),
                                  "loadavg_end": _read("/proc/loadavg").split()[:3]}
        return False
