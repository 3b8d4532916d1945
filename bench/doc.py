"""Where a benchmark writes its table: its own section of a file in docs/, every other
section kept as it was (several benchmarks share docs/performance.md)."""

from __future__ import annotations

import os


def write_section(path: str, section: str, *, begin: str, end: str | None = None) -> None:
    """Put ``section`` in the place of the old one in ``path``, or at its end.

    The old section runs from ``begin`` through ``end`` (HTML-comment markers the section
    carries itself) or, with no ``end``, from the heading ``begin`` to the next ``## `` heading
    or the next section's marker, whichever comes first.
    """
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    start = text.find(begin)
    if start < 0:
        text = f"{text.rstrip()}\n\n{section.strip()}\n" if text.strip() else section
    else:
        if end is not None:
            stop = text.find(end, start)
            stop = len(text) if stop < 0 else stop + len(end)
        else:
            after = start + len(begin)
            stops = [i + 1 for i in (text.find("\n## ", after), text.find("\n<!-- ", after))]
            stop = min([i for i in stops if i > 0], default=len(text))
        text = f"{text[:start]}{section.strip()}\n\n{text[stop:].lstrip()}"
    with open(path, "w") as f:
        f.write(text.rstrip() + "\n")
