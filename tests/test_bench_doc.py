"""The benchmarks share docs/performance.md: each rewrites its own section and no other."""

from __future__ import annotations

from pathlib import Path

from bench.doc import write_section

DOC = """# Performance

<!-- a: begin -->
## A
old a
<!-- a: end -->

## B
old b

<!-- c: begin -->
## C
old c
<!-- c: end -->
"""


def marked(name: str) -> str:
    return f"<!-- {name}: begin -->\n## {name.upper()}\nnew {name}\n<!-- {name}: end -->"


def test_a_marked_section_is_replaced_and_every_other_kept(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text(DOC)
    write_section(str(doc), marked("a"), begin="<!-- a: begin -->", end="<!-- a: end -->")
    assert doc.read_text() == DOC.replace("old a", "new a")


def test_a_heading_section_ends_at_the_next_sections_marker(tmp_path: Path) -> None:
    """B runs to C's begin marker, not to C's heading: the marker must survive B's rewrite."""
    doc = tmp_path / "performance.md"
    doc.write_text(DOC)
    write_section(str(doc), "## B\nnew b\n", begin="## B")
    assert doc.read_text() == DOC.replace("old b", "new b")
    write_section(str(doc), marked("c"), begin="<!-- c: begin -->", end="<!-- c: end -->")
    assert doc.read_text() == DOC.replace("old b", "new b").replace("old c", "new c")


def test_a_new_section_goes_at_the_end_and_a_missing_file_is_made(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text(DOC)
    write_section(str(doc), "## D\nd\n", begin="## D")
    assert doc.read_text() == DOC + "\n## D\nd\n"
    fresh = tmp_path / "fresh.md"
    write_section(str(fresh), "## D\nd\n", begin="## D")
    assert fresh.read_text() == "## D\nd\n"
