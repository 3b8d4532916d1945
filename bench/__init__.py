"""The benchmarks: each a module run from the checkout's root, e.g. ``.venv/bin/python -m
bench.fanout``; each prints its table and writes it into its section of a file in docs/.

Shared by them (and by the tests that start the app): :mod:`bench.app` (``manage.py serve`` on a
free port), :mod:`bench.browser` (a browser session: cookies, CSRF, pressing Run),
:mod:`bench.viewer` (a run page's WebSocket), :mod:`bench.machine` (CPU ticks from /proc) and
:mod:`bench.doc` (a section of a doc, rewritten).
"""

from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the checkout
