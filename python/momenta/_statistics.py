"""The statistics of a range, as NumPy names them, defined once for momenta.Array and
momenta.dask.ShardedArray (and their helpers that check a statistic's options).

A class that mixes in Statistics supplies how one statistic is answered:

    _stat(code, key, q, axis, skipna, ddof=0, order=-1, about=_NONE, degree=1, **options)

key, q: the range as the caller gave it (two sides of the flat index, one index expression, or
None for the whole array); axis: None or the axes to reduce. The options each class adds are
keywords every statistic passes on unchanged: Array's approx= (sum, mean, sumsq, rms: from the
buffer alone), ShardedArray's as_of= and timeout=. skipna is passed as the caller gave it: the
class checks it."""

import math

import numpy as np

from . import _momenta
from ._errors import InvalidArgumentError

_STAT_CODES = {name: code for code, name in enumerate(_momenta.kStatNames)}
_SUM, _COUNT, _MEAN, _VAR, _STD, _MOMENT, _MOMENTS, _COM, _SPREAD, _POLYFIT, _MIN, _MAX, _SUMSQ, _RMS = range(14)
_NONE = math.nan  # "no center given" to the extension


def _count(value, what, lo=0, hi=None, none=None):
    """A non-negative int option (orders, degrees, ddof, bins)."""
    if value is None:
        return none
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InvalidArgumentError(f"{what}: expected an integer, got {value!r}")
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        bound = f"{lo} <= {what} <= {hi}" if hi is not None else f"{what} >= {lo}"
        raise InvalidArgumentError(f"{what}: {value} is outside {bound}")
    return value


def _center(about):
    if about is None:
        return _NONE
    try:
        c = float(about)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"about: expected a number (an index), got {about!r}") from None
    if not math.isfinite(c):
        raise InvalidArgumentError(f"about: the center must be finite, got {about!r}")
    return c


class Statistics:
    """sum count mean var std min max sumsq rms moment moments com spread polyfit over a range:
    ``f(p, q)`` (two sides of the flat index, negative from the end), ``f(key)`` (one index
    expression selecting a run of it), ``f()`` (the whole array), or ``f(key, axis=...)``
    (reducing those axes, as NumPy does)."""

    __slots__ = ()

    def sum(self, p=None, q=None, *, axis=None, skipna=False, **options):
        """Σ a_i (np.sum; skipna: np.nansum). Exact for integer dtypes (a Python int).
        approx=True (Array): an Approx (estimate, lower, upper, exact, nan) from the buffer
        alone, without reading the array; the exact sum lies in [lower, upper]."""
        return self._stat(_SUM, p, q, axis, skipna, **options)

    def count(self, p=None, q=None, *, axis=None, skipna=False, **options):
        """The elements of the range (skipna: the non-NaN ones)."""
        return self._stat(_COUNT, p, q, axis, skipna, **options)

    def mean(self, p=None, q=None, *, axis=None, skipna=False, **options):
        """np.mean (skipna: np.nanmean). An empty range is an InvalidArgumentError.
        approx=True (Array): an Approx from the buffer alone, as sum(approx=True)."""
        return self._stat(_MEAN, p, q, axis, skipna, **options)

    def var(self, p=None, q=None, *, ddof=0, axis=None, skipna=False, **options):
        """np.var with ddof (skipna: np.nanvar)."""
        return self._stat(_VAR, p, q, axis, skipna, _count(ddof, "ddof"), **options)

    def std(self, p=None, q=None, *, ddof=0, axis=None, skipna=False, **options):
        """np.std with ddof (skipna: np.nanstd)."""
        return self._stat(_STD, p, q, axis, skipna, _count(ddof, "ddof"), **options)

    def min(self, p=None, q=None, *, axis=None, skipna=False, **options):
        """np.min (skipna: np.nanmin)."""
        return self._stat(_MIN, p, q, axis, skipna, **options)

    def max(self, p=None, q=None, *, axis=None, skipna=False, **options):
        """np.max (skipna: np.nanmax)."""
        return self._stat(_MAX, p, q, axis, skipna, **options)

    def sumsq(self, p=None, q=None, *, axis=None, skipna=False, **options):
        """Σ a_i² (np.sum(x.astype(np.float64)**2); skipna: np.nansum) from the buffer: for an
        integer dtype exactly (a Python int while Σa² < 2^127, else its nearest float), for a float
        dtype a float within 1e-9 of itself. approx=True (Array): an
        Approx from the buffer alone, as sum(approx=True) (``query --stat sumsq --approx``)."""
        return self._stat(_SUMSQ, p, q, axis, skipna, **options)

    def rms(self, p=None, q=None, *, axis=None, skipna=False, **options):
        """The root mean square sqrt(mean(a_i²)) (np.sqrt(np.mean(x.astype(np.float64)**2)); skipna:
        of np.nanmean). A NaN gives NaN, an infinity inf; an empty range is an
        InvalidArgumentError. approx=True (Array): an Approx from the buffer alone."""
        return self._stat(_RMS, p, q, axis, skipna, **options)

    def moment(self, k=1, p=None, q=None, *, about=None, axis=None, skipna=False, **options):
        """Σ (i − c)^k a_i over the range, c = `about` (an absolute flat index; default: the
        range's start). 0 <= k <= the buffer's order J."""
        return self._stat(_MOMENT, p, q, axis, skipna, 0, _count(k, "k"), _center(about), **options)

    def moments(self, k=None, p=None, q=None, *, about=None, axis=None, skipna=False, **options):
        """Σ (i − c)^j a_i for j = 0..k (default k = J), a float64 array."""
        return self._stat(_MOMENTS, p, q, axis, skipna, 0, _count(k, "k", none=-1), _center(about), **options)

    def com(self, p=None, q=None, *, axis=None, skipna=False, **options):
        """The center of mass Σ i·a_i / Σ a_i (i the absolute flat index)."""
        return self._stat(_COM, p, q, axis, skipna, **options)

    def spread(self, p=None, q=None, *, axis=None, skipna=False, **options):
        """The a_i-weighted standard deviation of the index."""
        return self._stat(_SPREAD, p, q, axis, skipna, **options)

    def polyfit(self, degree=1, p=None, q=None, *, axis=None, skipna=False, **options):
        """The least-squares polynomial of `degree` (<= J) through (i − p, a_i): its
        coefficients c_0..c_D, lowest first (np.polynomial's order, not np.polyfit's)."""
        return self._stat(_POLYFIT, p, q, axis, skipna, 0, -1, _NONE, _count(degree, "degree"), **options)
