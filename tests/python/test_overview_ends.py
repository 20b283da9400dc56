"""first and last: a bin's (a range's) first and last element, the M4 lines of an overview, in
the CLI (--bins, --bin-size, --ranges, --range; text and --json) and in Array.overview, checked
against NumPy; read as two elements per bin, never a scan."""

import json

import numpy as np
import pytest

import momenta


def stat_args(names):
    return [x for s in names for x in ("--stat", s)]


def json_lines(out):
    return [json.loads(line) for line in out.splitlines()]


def as_float(v):
    return float(v) if isinstance(v, str) else v  # "NaN", "Infinity", "-Infinity"


@pytest.fixture
def floats(rng):
    x = rng.normal(3, 2, 50_000)
    x[rng.integers(0, len(x), 40)] = np.nan
    x[rng.integers(0, len(x), 5)] = -np.inf
    np.save("f.npy", x)
    with momenta.open("f.npy", "r+") as w:
        w.rebuild(leaf=1024, fanout=8)
    return x


@pytest.mark.parametrize("bins", [1, 37, 2000, 49_983])
def test_cli_bins_first_last_are_numpy_ends(cli, floats, bins):
    p, q = 17, 50_000
    names = ["first", "min", "max", "last", "mean"]
    lines = json_lines(cli("query", "f.npy", "--range", f"{p}:{q}", "--bins", bins, "--json", *stat_args(names)).stdout)
    assert len(lines) == bins
    for line in lines:
        lo, hi = line["range"]
        s = line["stats"]
        assert list(s) == names  # in the order asked
        np.testing.assert_array_equal([as_float(s["first"]), as_float(s["last"])], [floats[lo], floats[hi - 1]],
                                      err_msg=f"bin {lo}:{hi}")


def test_cli_text_and_bin_size(cli, floats):
    out = cli("query", "f.npy", "--range", "100:5100", "--bin-size", "1000", "--stat", "last", "--stat", "first").stdout
    rows = out.splitlines()
    assert len(rows) == 5
    for k, row in enumerate(rows):
        lo, hi = 100 + 1000 * k, 100 + 1000 * (k + 1)
        words = row.split()
        assert [words[0], words[1], words[3]] == [f"{lo}:{hi}", "last", "first"], row
        np.testing.assert_array_equal([float(words[2]), float(words[4])], [floats[hi - 1], floats[lo]], err_msg=row)


def test_ends_read_two_elements_per_bin_not_a_scan(cli, floats):
    # Snapped bins are whole leaves: the summaries read no element, so every byte read from the
    # array is the ends': at most two elements per bin (neighbouring ends share one request).
    r = cli("query", "f.npy", "--range", "0:50000", "--bins", "40", "--snap", "--json", "--stat", "first",
            "--stat", "last")
    totals = json.loads(r.stderr.strip().splitlines()[-1])
    assert 0 < totals["array_bytes_read"] <= 40 * 2 * 8, totals
    assert totals["read_requests"] <= 41, totals


def test_integers_exact_and_single_ranges(cli, rng):
    x = rng.integers(-(1 << 62), 1 << 62, 5000, dtype=np.int64)
    x[0], x[4999] = (1 << 53) + 1, -(1 << 60) - 3  # not representable as a double
    np.save("i.npy", x)
    lines = json_lines(cli("query", "i.npy", "--range", "0:5000", "--bins", "7", "--json", "--stat", "first",
                           "--stat", "last").stdout)
    for line in lines:
        lo, hi = line["range"]
        assert (line["stats"]["first"], line["stats"]["last"]) == (int(x[lo]), int(x[hi - 1]))
    assert lines[0]["stats"]["first"] == (1 << 53) + 1 and lines[-1]["stats"]["last"] == -(1 << 60) - 3
    one = json.loads(cli("query", "i.npy", "--range", "10:20", "--json", "--stat", "last", "--stat", "sum").stdout)
    assert one["stats"] == {"last": int(x[19]), "sum": sum(int(v) for v in x[10:20])}  # exact, past int64
    with open("ranges.txt", "w") as f:
        f.write('3:9\n{"range":[4000,4001],"stat":["first","last"]}\n')
    got = json_lines(cli("query", "i.npy", "--ranges", "ranges.txt", "--json", "--stat", "first").stdout)
    assert got[0]["stats"] == {"first": int(x[3])}
    assert got[1]["stats"] == {"first": int(x[4000]), "last": int(x[4000])}
    empty = cli("query", "i.npy", "--range", "5:5", "--stat", "first", check=False)
    assert empty.returncode == 1 and "first: the range is empty" in empty.stderr


@pytest.mark.parametrize("snap", [False, True])
def test_python_overview_matches_numpy_and_cli(cli, floats, snap):
    names = ["min", "first", "last", "max"]
    with momenta.open("f.npy") as a:
        got = a.overview(17, 49_999, 300, names, snap=snap)
    for lo, hi, f, l in zip(got["start"], got["stop"], got["first"], got["last"]):
        want = [floats[lo], floats[hi - 1]] if hi > lo else [np.nan, np.nan]  # snapping empties most bins
        np.testing.assert_array_equal([f, l], want, err_msg=f"bin {lo}:{hi}")
    args = ["query", "f.npy", "--range", "17:49999", "--bins", "300", "--json", *stat_args(names)]
    lines = json_lines(cli(*args, *(["--snap"] if snap else [])).stdout)
    for k, line in enumerate(lines):
        for name in names:
            np.testing.assert_array_equal(got[name][k], as_float(line["stats"][name]))


def test_python_overview_dtype_and_emptied_bins(rng):
    x = rng.integers(-100, 100, 1000, dtype=np.int16)
    a = momenta.create("s.npy", x.size, "i2", leaf=64, fanout=4)
    a[:] = x
    ov = a.overview(0, 1000, bin_size=100, stats=["last", "count", "first"])
    assert list(ov) == ["start", "stop", "last", "count", "first"]
    assert ov["first"].dtype == np.int16
    assert ov["first"].tolist() == x[0:1000:100].tolist() and ov["last"].tolist() == x[99:1000:100].tolist()
    # Snapping to leaves of 64 empties the bin [10, 20) -> [0, 0): NaN there.
    snapped = a.overview(0, 40, 4, ["first", "last"], snap=True)
    assert np.isnan(snapped["first"][0]) and snapped["first"].dtype == np.float64
    with pytest.raises(momenta.InvalidArgumentError, match="first: a range's end element is read from the array"):
        momenta.summary_stat(a.summary(0, 10), "first")


def test_python_stats_batch_answers_first_and_last(rng):
    x = rng.normal(0, 1, 3000)
    np.save("b.npy", x)
    starts = rng.integers(0, 2000, 50)
    stops = starts + rng.integers(1, 1000, 50)
    with momenta.open("b.npy") as a:
        got = a.stats(starts, stops, ["last", "mean", "first"])
        with pytest.raises(momenta.InvalidArgumentError, match="first: the range 7:7 is empty"):
            a.stats([1, 7], [5, 7], "first")
    np.testing.assert_array_equal(got["first"], x[starts])
    np.testing.assert_array_equal(got["last"], x[stops - 1])
    np.testing.assert_allclose(got["mean"], [x[p:q].mean() for p, q in zip(starts, stops)], rtol=1e-12)
