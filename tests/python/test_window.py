"""momenta.Window against an exact window (a plain list of what arrived): at every check the
count is within eps·c, [low, high] holds c, frequent items keep their promise, each quantile's
rank is within eps·c; late items are dropped and counted; the same answers as `momenta window`."""

import json

import numpy as np
import pytest

import momenta


class Exact:
    """The window as docs/monitor.md defines it: at clock t, the items that arrived by t stamped in
    [t − W + 1, t]; an item more than tau late is refused."""

    def __init__(self, w, tau):
        self.w, self.tau, self.items, self.now, self.dropped = w, tau, [], None, 0

    def add(self, t, item):
        if self.now is None or t > self.now:
            self.now = t
        if t < self.now - self.tau:
            self.dropped += 1
            return False
        self.items.append((t, item))
        return True

    def live(self):
        return [i for t, i in self.items if self.now - self.w + 1 <= t <= self.now]


@pytest.mark.parametrize("eps,tau", [(0.1, 0), (0.02, 5)])
def test_against_an_exact_window(rng, eps, tau):
    W = 200
    win = momenta.Window(window=W, eps=eps, tardiness=tau)
    exact = Exact(W, tau)
    t = 0
    for step in range(40):
        n = int(rng.integers(1, 400))
        t += int(rng.integers(0, 20))
        times = t - rng.integers(0, tau + 3, n)  # some later than tau allows
        times = np.maximum.accumulate(np.maximum(times, 0)) if tau == 0 else times
        items = np.where(rng.random(n) < 0.3, 7, rng.zipf(1.5, n) % 1000)
        accepted = sum(exact.add(int(a), int(b)) for a, b in zip(times, items))
        assert win.update(times, items) == accepted
        live = exact.live()
        c = len(live)
        assert win.now == exact.now and win.dropped == exact.dropped
        assert abs(win.count() - c) <= eps * c + 1e-9, (step, win.count(), c)
        low, high = win.count_bounds()
        assert low <= c <= high
        counts = {}
        for i in live:
            counts[i] = counts.get(i, 0) + 1
        for phi in (0.05, 0.3):
            got = dict(win.frequent(phi))
            for item, k in counts.items():
                if k >= phi * c:
                    assert item in got, (phi, item, k, c)
                if k < (phi - eps) * c:
                    assert item not in got, (phi, item, k, c)
        for item in (7, 1, 2):
            assert abs(win.estimate(item) - counts.get(item, 0)) <= eps / 3 * c + 1e-9
        if c:
            ordered = np.sort(np.array(live))
            for phi in (0.0, 0.5, 0.9, 1.0):
                v = win.quantile(phi)
                # rank of v: somewhere in [#items < v, #items <= v] must be within eps·c of phi·c
                lo_rank = np.searchsorted(ordered, v, "left")
                hi_rank = np.searchsorted(ordered, v, "right")
                assert lo_rank - eps * c - 1 <= phi * c <= hi_rank + eps * c + 1, (phi, v)
        else:
            assert win.quantile(0.5) is None
    win.advance(t + W)  # everything expires
    assert win.count() == 0 and win.count_bounds() == (0, 0) and win.frequent(0.1) == []
    assert win.memory_bytes > 0


def test_durations_and_scalars():
    win = momenta.Window(window="1m", eps=0.01, tardiness="10s")
    assert (win.window, win.tardiness, win.eps) == (60000, 10000, 0.01)
    assert win.now is None
    assert win.update(1000, 5) == 1 and win.now == 1000
    assert win.update([2000, 2000], 9) == 2
    assert win.top(1) == [(9, 2.0)]
    assert "window=60000" in repr(win)


def test_same_answers_as_the_cli(cli, rng):
    times = np.sort(rng.integers(0, 50, 300))
    items = rng.integers(0, 6, 300)
    with open("in.txt", "w") as f:
        f.writelines(f"{t} {i}\n" for t, i in zip(times, items))
    out = cli("window", "--input", "in.txt", "--window", "20", "--eps", "0.05", "--top", "3",
              "--quantiles", "0.5,0.9", "--json").stdout.splitlines()
    reports = [json.loads(line) for line in out]
    win = momenta.Window(window=20, eps=0.05)
    k = 0
    for r in reports:  # a report per tick, once a later item shows the tick complete
        while k < len(times) and times[k] <= r["t"]:
            win.update(times[k], items[k])
            k += 1
        assert win.now == r["t"]
        assert win.count() == r["count"] and win.count_bounds() == (r["count_low"], r["count_high"])
        assert [{"item": i, "count": c} for i, c in win.top(3)] == r["top"]
        assert [win.quantile(q["phi"]) for q in r["quantiles"]] == [q["value"] for q in r["quantiles"]]
