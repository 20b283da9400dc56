"""Summaries taken apart merged into one, and the statistics of a summary: the algebra that
lets a range spanning many arrays (shards) be answered from each one's summary."""

from . import _momenta
from ._array import _STAT_CODES, _center, _count
from ._errors import InvalidArgumentError

Summary = _momenta.Summary


def merge_summaries(summaries):
    """The summary of the union of adjacent runs, merged left to right with the library's
    merge rule (the one the buffer's tree uses). Each summary must start where the one
    before it stops, all of one dtype; orders may differ (the result keeps the smallest).
    min and max of the result need every part taken with extremes."""
    parts = list(summaries)
    for k, s in enumerate(parts):
        if not isinstance(s, Summary):
            raise InvalidArgumentError(f"merge_summaries: item #{k} is a {type(s).__name__}, not a momenta.Summary")
    return _momenta._merge_summaries(parts)


def summary_stat(summary, stat, *, skipna=False, ddof=0, order=None, about=None, degree=1):
    """One statistic of `summary` (a :class:`momenta.Summary`) as the single array answers it
    over the same range: `stat` is a name of momenta.STATISTICS; ddof for var/std, order for
    moment's k (default 1) and moments' K (default J), about the center (an absolute index;
    default the summary's start), degree for polyfit. The same values, types (exact ints for
    integer sums and counts) and errors as Array.sum(...), Array.var(...), ... "first" and
    "last" are refused: a summary holds no element (Array.stats and overview read them)."""
    if not isinstance(summary, Summary):
        raise InvalidArgumentError(f"summary_stat: expected a momenta.Summary, got {type(summary).__name__}")
    if stat not in _STAT_CODES:
        raise InvalidArgumentError(f"summary_stat: unknown statistic {stat!r} ({' '.join(_momenta.kStatNames)})")
    if not isinstance(skipna, bool):
        raise InvalidArgumentError(f"skipna: expected True or False, got {skipna!r}")
    return _momenta._summary_stat(summary, _STAT_CODES[stat], skipna, _count(ddof, "ddof"),
                                  _count(order, "order", none=-1), _center(about), _count(degree, "degree"))
