#!/usr/bin/python3
"""System calls per query of each pass, from `strace -f -o FILE serve_driver --parts=revisit ...`.

    bench/strace_passes.py FILE QUERIES_PER_PASS

The driver brackets each pass with getppid(2) calls (bench/serving/revisit.cc);
the calls between a pair, every thread's, are one pass's. Prints, for each
pass, the calls per query by name.
"""
import collections, re, sys

path, per_pass = sys.argv[1], int(sys.argv[2])
call = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?([a-z_0-9]+)\(")
passes, inside, counts = [], False, None
for line in open(path):
    m = call.match(line)
    if not m:
        continue
    name = m.group(1)
    if name == "getppid":
        if inside:
            passes.append(counts)
        else:
            counts = collections.Counter()
        inside = not inside
    elif inside:
        counts[name] += 1
for k, c in enumerate(passes):
    total = sum(c.values()) / per_pass
    parts = ", ".join(f"{n} {v / per_pass:.2f}" for n, v in c.most_common())
    print(f"pass {k % 5 + 1}: {total:.2f} calls/query ({parts})")
