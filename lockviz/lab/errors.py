"""The lab's one error: it cannot provide what a run needs.

Raised when a server is missing or would not start, a port cannot be had, a client process
exits at start, or a fault cannot be done here. The run engine records it as the run's
``run_failed`` event; the pages and the CLI show its message as it is, so it says what to do.
"""

from __future__ import annotations


class LabError(Exception):
    """The lab cannot provide what a run needs (a server is missing or would not start)."""
