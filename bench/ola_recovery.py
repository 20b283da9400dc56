#!/usr/bin/python3
"""Recovery after a killed writer, default buffer (hbb) against the Ola kind:
an array of 2^24 f8 cells is imported with each buffer, a `momenta update` fed 3·10^6
scattered updates is SIGKILLed after 2.0, 2.37 and 2.74 s, and the next open (a one-range
query) is timed; `momenta verify` must pass after it. Prints one line per kill: the kind,
the open's wall time and the notices it gave (whether it replayed or rebuilt).

    /usr/bin/python3 bench/ola_recovery.py --cli build/tools/momenta --dir SCRATCH

bench/README.md ("The Ola buffer beside the default buffer") has the figures."""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    src, updates, a = (os.path.join(args.dir, f) for f in ("src.npy", "upd.txt", "a.npy"))
    n = 1 << 24
    rng = np.random.default_rng(7)
    np.save(src, rng.normal(5, 1, n))
    idx, val = rng.integers(0, n, 3_000_000), rng.normal(0, 10, 3_000_000)
    with open(updates, "w") as f:
        f.write("\n".join(f"{i} {v:.6g}" for i, v in zip(idx, val)) + "\n")
    failed = False
    for kind in ("hbb", "ola"):
        for rnd in range(args.rounds):
            shutil.rmtree(a + ".momenta", ignore_errors=True)
            if os.path.exists(a):
                os.remove(a)
            extra = ["--buffer", "ola", "--order", "3"] if kind == "ola" else []
            subprocess.run([args.cli, "import", src, a] + extra, check=True, capture_output=True)
            with open(updates) as f:
                writer = subprocess.Popen([args.cli, "update", a], stdin=f, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL)
                time.sleep(2.0 + rnd * 0.37)
                writer.send_signal(signal.SIGKILL)
                writer.wait()
            t = time.monotonic()
            r = subprocess.run([args.cli, "query", a, "--range", "0:10", "--stat", "sum"], capture_output=True, text=True)
            ms = (time.monotonic() - t) * 1000
            v = subprocess.run([args.cli, "verify", a], capture_output=True, text=True)
            failed = failed or r.returncode != 0 or v.returncode != 0
            notes = " / ".join(line for line in r.stderr.splitlines() if "note:" in line)
            print(f"{kind} kill {rnd}: open {ms:.0f} ms, verify exit {v.returncode}; {notes}", flush=True)
    shutil.rmtree(a + ".momenta", ignore_errors=True)
    for f in (src, updates, a):
        if os.path.exists(f):
            os.remove(f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
