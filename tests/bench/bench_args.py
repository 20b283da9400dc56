#!/usr/bin/python3
"""ctest bench/args: the benchmark script's refusals (bench/momenta_bench), each
fast, one line, non-zero: a bad preset, no preset, a malformed --data-size, a
missing --dir, and a --data-size the folder has no room for (statvfs, before
anything is written); and `momenta bench`, which runs nothing, pointing to it.

  bench_args.py MOMENTA SCRATCH_DIR BENCH_SCRIPT"""
import os
import shutil
import subprocess
import sys

SCRIPT = None  # bench/momenta_bench


def expect(cli, args, code, words):
    p = subprocess.run(["/usr/bin/python3", "-B", SCRIPT, "--cli", cli] + args, capture_output=True, text=True,
                       timeout=120)
    err = p.stderr.strip()
    if p.returncode != code or not all(w in err for w in words):
        print(f"bench_args: momenta bench {' '.join(args)}: exit {p.returncode} (want {code}), stderr {err!r} "
              f"(want {words})", file=sys.stderr)
        sys.exit(1)


def main():
    global SCRIPT
    cli, scratch, SCRIPT = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    # The binary's subcommand points to the script and runs nothing, whatever it is given.
    p = subprocess.run([cli, "bench", "--preset", "quick", "--dir", scratch], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 2 or "bench/momenta_bench --preset quick --cli" not in p.stderr or os.listdir(scratch):
        print(f"bench_args: momenta bench: exit {p.returncode}, stderr {p.stderr!r}", file=sys.stderr)
        sys.exit(1)
    expect(cli, ["--preset", "huge"], 2, ["--preset", "huge"])
    expect(cli, [], 2, ["--preset"])
    expect(cli, ["--preset", "quick", "--data-size", "lots"], 2, ["--data-size", "lots"])
    expect(cli, ["--preset", "quick", "--data-size", "1M"], 2, ["--data-size", "at least 64M"])
    expect(cli, ["--preset", "quick", "--dir", os.path.join(scratch, "nope")], 2, ["--dir", "nope"])
    # More data than a quarter of the array, then more than the folder holds
    # (256 GiB, the most the terabyte preset takes): refused before anything is made.
    expect(cli, ["--preset", "terabyte", "--data-size", str(1 << 50), "--dir", scratch], 1,
           ["more than a quarter", "--data-size"])
    vfs = os.statvfs(scratch)
    if vfs.f_bavail * vfs.f_frsize < (300 << 30):
        expect(cli, ["--preset", "terabyte", "--data-size", "256G", "--dir", scratch], 1, ["GiB free", "--data-size"])
    else:
        print("bench_args: more than 300 GiB free here: the free-space refusal is not tried")
    if os.listdir(scratch):
        print(f"bench_args: the refusal left files: {os.listdir(scratch)}", file=sys.stderr)
        sys.exit(1)
    shutil.rmtree(scratch)
    print("bench_args: every refusal clear and non-zero")
    return 0


if __name__ == "__main__":
    sys.exit(main())
