"""The lab's one error: it cannot provide what a run needs (a branch of lockviz.errors).

Raised when a server is missing or would not start, a port cannot be had, a client process
exits at start, or a fault cannot be done here. The run engine records it as the run's
``run_failed`` event; the pages and the CLI show its message as it is, so it says what to do.
"""

from __future__ import annotations

from lockviz.errors import LabError

__all__ = ["LabError"]
