"""momenta.open mirrors the CLI's opening: every I/O backend gives the same answers, sidecar=
(and $MOMENTA_SIDECAR_DIR) put the buffer and the log elsewhere, a reader of a file written by
NumPy behind momenta's back rebuilds with a Notice, and the CLI reads what Python wrote."""

import os
import warnings

import numpy as np
import pytest

import momenta


def test_every_backend_answers_alike(rng):
    np.save("a.npy", rng.normal(size=50_000))
    answers = []
    for io in ("auto", "pread", "mmap", "uring"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", momenta.Notice)
                a = momenta.open("a.npy", io=io)
        except momenta.NotSupportedError as e:  # no ring granted here: named, not a crash
            assert io == "uring", e
            continue
        except momenta.StorageError as e:
            assert io == "uring", e
            continue
        with a:
            assert a.io.split()[0] in ("pread", "mmap", "io_uring")
            answers.append((a.sum(10, 40_000), a.var(3, 49_999), a.max(0, 77), a.stats([0, 5], [7, 9], "mean")["mean"].tolist()))
    assert len(answers) >= 3 and all(x == answers[0] for x in answers)


def test_sidecar_folder(monkeypatch, tmp_path):
    np.save("b.npy", np.arange(100.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", momenta.Notice)
        with momenta.open("b.npy", "r+", sidecar="elsewhere") as w:
            assert os.path.realpath(w.sidecar) == os.path.realpath("elsewhere")
            w[3] = 1000.0
        assert os.path.isdir("elsewhere") and not os.path.exists("b.npy.momenta")
        with momenta.open("b.npy", sidecar="elsewhere") as r:
            assert r.sum() == sum(range(100)) - 3 + 1000
        monkeypatch.setenv("MOMENTA_SIDECAR_DIR", str(tmp_path / "root"))
        with momenta.open("b.npy") as r:
            assert r.sidecar.startswith(str(tmp_path / "root"))
            assert r.sum() == sum(range(100)) - 3 + 1000


def test_numpy_write_behind_the_back_is_noticed(cli):
    np.save("c.npy", np.ones(1000))
    with pytest.warns(momenta.Notice, match="building the moment buffer"):
        momenta.open("c.npy").close()
    x = np.load("c.npy", mmap_mode="r+")
    x[5] = 7.0
    x.flush()
    del x
    with pytest.warns(momenta.Notice, match="rebuil"):
        with momenta.open("c.npy") as a:
            assert a.sum() == 1006.0
    with momenta.open("c.npy", "r+") as w:
        w[0:2] = [2.0, 3.0]
    out = cli("query", "c.npy", "--range", "0:1000", "--stat", "sum").stdout
    assert out.split() == ["sum", "1009"]
