"""The package answers what `momenta query --json` answers, bit for bit: one range, a file of
ranges, an overview in bins (exact and snapped), NaN and infinity included."""

import json

import numpy as np
import pytest

import momenta


def parse(v):
    return float(v) if isinstance(v, str) else v  # "NaN", "Infinity", "-Infinity"


def equal(got, want):
    got, want = np.asarray(got, dtype=float), np.asarray(parse(want) if not isinstance(want, list)
                                                         else [parse(w) for w in want], dtype=float)
    np.testing.assert_array_equal(got, want)


@pytest.fixture
def data(rng):
    x = rng.normal(3, 2, 40000)
    x[rng.integers(0, len(x), 30)] = np.nan
    x[rng.integers(0, len(x), 5)] = np.inf
    np.save("a.npy", x)
    with momenta.open("a.npy", "r+") as w:
        w.rebuild(leaf=1024, fanout=8)
    return x


STATS = ["sum", "count", "mean", "var", "std", "min", "max", "moment", "moments", "com", "spread", "polyfit", "sumsq",
         "rms"]


def python_answer(a, name, p, q, skipna):
    f = {"moment": lambda: a.moment(1, p, q, skipna=skipna), "moments": lambda: a.moments(None, p, q, skipna=skipna),
         "polyfit": lambda: a.polyfit(1, p, q, skipna=skipna)}.get(name)
    return f() if f else getattr(a, name)(p, q, skipna=skipna)


@pytest.mark.parametrize("skipna", [False, True])
def test_one_range(cli, data, rng, skipna):
    with momenta.open("a.npy") as a:
        for _ in range(8):
            p, q = sorted(int(v) for v in rng.integers(0, len(data) - 2, 2))
            q += 2  # at least two cells (var with ddof, a line)
            # min and max make a query read its end pieces directly (not as leaf minus complement):
            # asked apart, as the package asks each statistic alone.
            for group in (["min"], ["max"], [s for s in STATS if s not in ("min", "max")]):
                args = ["query", "a.npy", "--range", f"{p}:{q}", "--json"] + [x for s in group for x in ("--stat", s)]
                want = json.loads(cli(*args, *(["--skipna"] if skipna else [])).stdout)["stats"]
                for name in group:
                    equal(python_answer(a, name, p, q, skipna), want[name])


def test_ranges_file_and_batch(cli, data, rng):
    ranges = [tuple(sorted(int(v) for v in rng.integers(0, len(data), 2))) for _ in range(300)]
    ranges = [(p, q + 1) for p, q in ranges]
    with open("ranges.txt", "w") as f:
        f.writelines(f"{p}:{q}\n" for p, q in ranges)
    names = ["sum", "mean", "var", "moments"]
    out = cli("query", "a.npy", "--ranges", "ranges.txt", "--json", *[x for s in names for x in ("--stat", s)]).stdout
    lines = [json.loads(line) for line in out.splitlines()]
    with momenta.open("a.npy") as a:
        got = a.stats([p for p, _ in ranges], [q for _, q in ranges], names)
    for k, line in enumerate(lines):
        for name in names:
            equal(got[name][k], line["stats"][name])


@pytest.mark.parametrize("snap", [False, True])
def test_overview(cli, data, snap):
    names = ["mean", "min", "max", "count"]
    args = ["query", "a.npy", "--range", "17:39999", "--bins", "37", "--json"]
    out = cli(*args, *(["--snap"] if snap else []), *[x for s in names for x in ("--stat", s)]).stdout
    lines = [json.loads(line) for line in out.splitlines()]
    with momenta.open("a.npy") as a:
        got = a.overview(17, 39999, 37, names, snap=snap)
    assert len(lines) == 37
    for k, line in enumerate(lines):
        assert [got["start"][k], got["stop"][k]] == line["range"]
        if snap:
            assert [got["asked_start"][k], got["asked_stop"][k]] == line["asked"]
        for name in names:
            equal(got[name][k], line["stats"][name])


def test_frames_of_a_fixed_length(cli, data):
    names = ["rms", "sumsq", "count"]
    out = cli("query", "a.npy", "--range", "17:39999", "--bin-size", "1000", "--json",
              *[x for s in names for x in ("--stat", s)]).stdout
    lines = [json.loads(line) for line in out.splitlines()]
    with momenta.open("a.npy") as a:
        got = a.overview(17, 39999, bin_size=1000, stats=names)
    assert len(lines) == 40 and lines[-1]["range"] == [39017, 39999]  # the last one shorter
    for k, line in enumerate(lines):
        assert [got["start"][k], got["stop"][k]] == line["range"]
        for name in names:
            equal(got[name][k], line["stats"][name])
