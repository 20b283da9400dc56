"""Ctrl-C (SIGINT) during a long library call stops it at a chunk boundary with
KeyboardInterrupt, and the array stays consistent: here an update of 2^22 scattered
cells into a sparse array, interrupted 0.3 s in, leaves a prefix of whole chunks applied
(the reader's sum counts exactly the cells the log says were applied)."""

import os
import signal
import subprocess
import sys
import time

import momenta

CHILD = r"""
import warnings, numpy as np, momenta
warnings.simplefilter("ignore", momenta.Notice)
a = momenta.create("c.npy", 1 << 26)
idx = np.arange(1 << 22, dtype=np.int64) * 16  # distinct cells, one per 128 bytes
print("ready", flush=True)
try:
    a.update(idx, 1.0)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", a.applied_sequence, flush=True)
a.close()
"""


def test_sigint_stops_a_long_update_consistently():
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(momenta.__file__))))
    # start_new_session: the child's SIGINT is not ignored as a background job's would be.
    p = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 0, out
    words = out.split()
    assert words[0] == "interrupted", f"the update was not interrupted: {out}"
    applied = int(words[1])
    assert applied < 1 << 22
    with momenta.open("c.npy") as a:
        assert a.sum() == applied and a.count(skipna=True) == 1 << 26
