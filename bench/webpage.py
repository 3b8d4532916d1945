"""How big is "Download as a web page"? The one-file replay (/runs/<id>/export.html) of every
built-in's recorded run (tests/browser/data/runs), and of a 20,000-event run
(bench.abuse.big_import), made by the app in this process on a database of its own. Prints the
table and writes it into docs/performance.md (its own section).

    .venv/bin/python -m bench.webpage
    .venv/bin/python -m bench.webpage --no-doc      # print only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import ROOT
from bench.doc import write_section

DOC = os.path.join(ROOT, "docs", "performance.md")
RUNS = Path(ROOT) / "tests" / "browser" / "data" / "runs"
BEGIN, END = "<!-- webpage: begin -->", "<!-- webpage: end -->"
LIMIT = 400_000  # bytes: issue 22's bound for a typical built-in's file


def app(work: str) -> Any:
    """A Django test client on a fresh database in ``work``."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lockviz.settings")
    os.environ["LOCKVIZ_DB"] = os.path.join(work, "bench.sqlite3")
    os.environ["LOCKVIZ_IMPORTS_PER_HOUR"] = "100000"
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    call_command("migrate", verbosity=0, interactive=False)
    return Client()


def file_size(client: Any, run: dict[str, Any]) -> tuple[int, int, str]:
    """(bytes of the one-file replay, events, how the events are carried) of ``run``, imported."""
    answer = client.post("/import/", {"text": json.dumps(run)})
    assert answer.status_code == 302, answer.content[:300]
    run_id = answer["Location"].strip("/").split("/")[-2]
    page = client.get(f"/runs/{run_id}/export.html")
    assert page.status_code == 200
    body = page.content
    encoding = "gzip+base64" if b'data-encoding="gzip+base64"' in body else "json"
    return len(body), len(run["events"]), encoding


def kb(size: float) -> str:
    return f"{size / 1000:.0f} KB"


def measure() -> tuple[dict[str, tuple[int, int, str]], tuple[int, int, str]]:
    from bench.abuse import big_import

    with tempfile.TemporaryDirectory(prefix="lockviz-bench-webpage-") as work:
        client = app(work)
        sizes = {
            p.stem: file_size(client, json.loads(p.read_text()))
            for p in sorted(RUNS.glob("*.json"))
        }
        big = file_size(client, big_import(20_000))
    return sizes, big


def table(sizes: dict[str, tuple[int, int, str]], big: tuple[int, int, str]) -> str:
    bytes_ = sorted(size for size, _, _ in sizes.values())
    smallest = min(sizes, key=lambda slug: sizes[slug][0])
    largest = max(sizes, key=lambda slug: sizes[slug][0])
    over = [slug for slug, (size, _, _) in sizes.items() if size > LIMIT]
    compressed = sum(1 for _, _, encoding in sizes.values() if encoding != "json")
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    bound = "met by every built-in" if not over else "NOT met by " + ", ".join(over)
    return f"""{BEGIN}
## A replay in one file: "Download as a web page"

Measured with `bench/webpage.py` ({when}, Python {platform.python_version()}): the one-file
replay (`/runs/<id>/export.html`) of each of the {len(sizes)} built-ins' recorded runs
(tests/browser/data/runs), and of a 20,000-event run (`bench.abuse.big_import`). Each file
carries the replay's styles, its script (static/lockviz/pages/offline.js and its imports, bundled
by lockviz/edge/bundle.py) and the run's events with their words; events over 32 KB of JSON go as
gzip in base64 ({compressed} of the {len(sizes)} built-ins' runs).

| file | bytes | events |
|---|---|---|
| smallest built-in ({smallest}) | {kb(bytes_[0])} | {sizes[smallest][1]} |
| median of the built-ins | {kb(statistics.median(bytes_))} | |
| largest built-in ({largest}) | {kb(bytes_[-1])} | {sizes[largest][1]} |
| 20,000 events ({big[2]}) | {kb(big[0])} | {big[1]:,} |

Bound (issue 22): a typical built-in's file ≤ {kb(LIMIT)}: {bound}. Most of a
built-in's file is the same for every run (the script and the styles);
tests/browser/test_sharing.py opens each of them in Chromium with every request refused and plays
it to the end.
{END}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-doc", action="store_true", help="print only")
    args = parser.parse_args()
    sizes, big = measure()
    text = table(sizes, big)
    print(text)
    if not args.no_doc:
        write_section(DOC, text, begin=BEGIN, end=END)


if __name__ == "__main__":
    main()
