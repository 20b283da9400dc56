"""The documents' sections, for the tests that run their examples as written: README.md and
docs/*.md are searched alike, so an example keeps being run wherever its section moves."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def documents():
    """README.md, then docs/*.md by name."""
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def _headings(lines):
    """(line number, level, title) of each heading outside code fences."""
    fenced = False
    for k, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
            continue
        m = re.match(r"(#+) (.+)$", line)
        if m and not fenced:
            yield k, len(m.group(1)), m.group(2).strip()


def section(title):
    """(file name, text) of the one section headed exactly `title` (any level) in README.md or
    docs/*.md, up to the next heading of its level or above. Fails, naming the files searched,
    when no section or more than one has that title."""
    found = []
    for path in documents():
        lines = path.read_text().split("\n")
        heads = list(_headings(lines))
        for i, (k, level, name) in enumerate(heads):
            if name != title:
                continue
            end = next((j for j, lv, _ in heads[i + 1:] if lv <= level), len(lines))
            found.append((path.relative_to(ROOT).as_posix(), "\n".join(lines[k:end])))
    names = ", ".join(p.relative_to(ROOT).as_posix() for p in documents())
    assert len(found) == 1, f"{len(found)} sections titled {title!r} in {names}"
    return found[0]


def blocks(text, language):
    """The fenced code blocks of `language` in `text`, in order."""
    return re.findall(r"```" + re.escape(language) + r"\n(.*?)```", text, re.S)
