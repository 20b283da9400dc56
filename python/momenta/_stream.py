"""The monitor from Python: momenta.Window (a sliding-window summarizer, what ``momenta
window`` prints) and momenta.Client (questions to a running ``momenta root``)."""

import json
import re

import numpy as np

from . import _momenta
from ._errors import Error, InvalidArgumentError

_UNITS = {"": 1, "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_MAX_TIME = 1 << 61


def _duration(value, what):
    """A duration in time units: an int, or text with a unit for millisecond clocks ("250ms",
    "10s", "5m", "2h", "1d"), as the CLI's --window."""
    if isinstance(value, (bool, np.bool_)):
        raise InvalidArgumentError(f"{what}: expected a duration, got {value!r}")
    if isinstance(value, (int, np.integer)):
        v = int(value)
    elif isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+)\s*(ms|s|m|h|d)?\s*", value)
        if not m:
            raise InvalidArgumentError(f"{what}: {value!r} is not a duration (e.g. 5000, 250ms, 10s, 5m, 2h, 1d)")
        v = int(m.group(1)) * _UNITS[m.group(2) or ""]
    else:
        raise InvalidArgumentError(f"{what}: expected a duration, got {value!r}")
    if not 0 <= v <= _MAX_TIME:
        raise InvalidArgumentError(f"{what}: {value!r} is outside [0, 2^61]")
    return v


def _int64s(x, what):
    a = np.asarray(x)
    if a.dtype.kind not in "iu":
        if a.size == 0:
            return a.astype(np.int64).reshape(-1)
        raise InvalidArgumentError(f"{what}: expected integers, got an array of {a.dtype}")
    if a.dtype == np.uint64 and a.size and a.max() >= 1 << 63:
        raise InvalidArgumentError(f"{what}: {int(a.max())} is outside int64")
    return a.astype(np.int64).reshape(-1)


class Window:
    """A sliding-window summary of a stream of (time, item) pairs, within `eps`: the count,
    each item's count and the frequent items, quantiles of the items, over the last `window`
    time units (`tardiness`: how late an item may arrive). Memory does not grow with the
    items in the window. The same synopses as ``momenta window`` (docs/monitor.md: what is guaranteed).

    At clock t the window holds the items that arrived by t stamped in [t − W + 1, t]; a
    later timestamp moves the clock; an item later than the tardiness allows is dropped
    (counted). Thread-safe (calls are serialized)."""

    def __init__(self, window, eps, tardiness=0):
        w = _duration(window, "window")
        t = _duration(tardiness, "tardiness")
        try:
            e = float(eps)
        except (TypeError, ValueError):
            raise InvalidArgumentError(f"eps: expected a number, got {eps!r}") from None
        self._w = _momenta._Window(w, t, e)

    def update(self, times, items):
        """Adds items[k] stamped times[k] in order (arrays or scalars, broadcast); returns
        how many were accepted (the rest arrived too late and count as dropped)."""
        try:
            t, i = np.broadcast_arrays(np.asarray(times), np.asarray(items))
        except ValueError:
            raise InvalidArgumentError("window: times and items must be arrays of one length") from None
        return self._w.update(_int64s(t, "times"), _int64s(i, "items"))

    def advance(self, t):
        """Moves the clock to `t` (>= now): what falls out of the window expires."""
        if np.ndim(t) != 0:
            raise InvalidArgumentError(f"time: expected one integer, got {t!r}")
        self._w.advance(int(_int64s(t, "time")[0]))

    def count(self):
        """The number of items in the window, within eps·c of the true count c."""
        return self._w.count()

    def count_bounds(self):
        """(low, high) with low <= c <= high."""
        return self._w.count_bounds()

    def estimate(self, item):
        """The estimated count of `item` in the window, within (eps/3)·c."""
        if np.ndim(item) != 0:
            raise InvalidArgumentError(f"item: expected one integer, got {item!r}")
        return self._w.estimate(int(_int64s(item, "item")[0]))

    def frequent(self, phi):
        """[(item, estimate)], largest first: every item with at least phi·c occurrences,
        none with fewer than (phi − eps)·c. 0 < phi <= 1."""
        return self._w.frequent(_phi(phi))

    def top(self, k):
        """The k items with the largest estimates, [(item, estimate)], largest first."""
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 0:
            raise InvalidArgumentError(f"top: k must be a non-negative integer, got {k!r}")
        return self._w.top(int(k))

    def quantile(self, phi):
        """An item whose rank is within eps·c of phi·c (0 <= phi <= 1); None when empty."""
        return self._w.quantile(_phi(phi))

    now = property(lambda self: self._w.now, doc="The clock (None before the first item or advance).")
    dropped = property(lambda self: self._w.dropped, doc="Items refused as too late, since the start.")
    eps = property(lambda self: self._w.eps)
    window = property(lambda self: self._w.window)
    tardiness = property(lambda self: self._w.tardiness)
    memory_bytes = property(lambda self: self._w.memory_bytes, doc="What the synopses take.")

    def __repr__(self):
        return f"<momenta.Window window={self.window} eps={self.eps} tardiness={self.tardiness} now={self.now}>"


def _phi(phi):
    try:
        return float(phi)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"phi: expected a number, got {phi!r}") from None


class Client:
    """A connection to a running root (``momenta root``), asking in its line protocol, as
    ``momenta ask`` does. Each method answers with the root's JSON answer as a dict (which
    says ``as_of``, the time it is valid for, and the sites it covers). `at` holds the answer
    until every live site has reported time `at` (then the same answer whenever asked),
    giving up after `wait` ms. An error answer raises InvalidArgumentError (a malformed
    question) or Error; a root that closes or does not answer in time, StorageError."""

    def __init__(self, address, timeout=5.0):
        if not isinstance(address, str):
            raise InvalidArgumentError(f"address: expected 'HOST:PORT', got {address!r}")
        self._timeout = _seconds(timeout)
        self._c = _momenta._Client(address, self._timeout)

    def ask(self, query, timeout=None):
        """The root's answer to one line of its protocol (``count``, ``frequent 0.05 json``,
        ``at 3000 wait 100 quantile 0.5``...), as text without the closing empty line."""
        if not isinstance(query, str):
            raise InvalidArgumentError(f"query: expected a string, got {query!r}")
        answer = self._c.ask(query, -1.0 if timeout is None else _seconds(timeout))
        if answer.startswith("error: "):
            _raise_answer(answer[7:])
        return answer

    def _json(self, words, at, wait):
        line = ""
        if at is not None:
            line = f"at {int(at)} wait {10000 if wait is None else int(wait)} "
        line += words + " json"
        # An `at` question waits at the root up to `wait` ms: the reply may take that long.
        timeout = self._timeout + (0 if at is None else (10000 if wait is None else int(wait)) / 1000)
        answer = json.loads(self._c.ask(line, timeout))
        if "error" in answer:
            _raise_answer(answer["error"])
        return answer

    def count(self, at=None, wait=None):
        """{"as_of", "sites", "uncovered", "count"}."""
        return self._json("count", at, wait)

    def item(self, j, at=None, wait=None):
        """The estimated count of item j."""
        return self._json(f"item {int(j)}", at, wait)

    def frequent(self, phi, at=None, wait=None):
        """The frequent items for phi: {"items": [{"item", "count"}...], ...}."""
        return self._json(f"frequent {float(phi)!r}", at, wait)

    def quantile(self, phi, at=None, wait=None):
        return self._json(f"quantile {float(phi)!r}", at, wait)

    def items(self, at=None, wait=None):
        return self._json("items", at, wait)

    def sites(self):
        return self._json("sites", None, None)

    def stats(self):
        return self._json("stats", None, None)

    def close(self):
        self._c.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _seconds(t):
    try:
        s = float(t)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"timeout: expected seconds, got {t!r}") from None
    if not 0 <= s <= 1e9:
        raise InvalidArgumentError(f"timeout: {t!r} is outside [0, 1e9] seconds")
    return s


def _raise_answer(message):
    if message.startswith("Invalid argument"):
        raise InvalidArgumentError(message)
    raise Error(message)
