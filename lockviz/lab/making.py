"""The lab of the process that runs labs: shared servers, or its own with a pool of warm spares.

:mod:`lockviz.lab.labs` starts servers and :mod:`lockviz.lab.spares` keeps some started ahead
through it; this module, above both, puts them together (the lab names the pool only by the
:class:`~lockviz.lab.labs.Spares` protocol, so neither imports the other back).
"""

from __future__ import annotations

from lockviz.lab import spares
from lockviz.lab.labs import ExternalLab, Lab, LocalLab


def make_lab(servers_spec: str | None, base_dir: str | None = None) -> Lab:
    """The lab of the process that runs labs: shared servers, or its own with this process's
    pool of warm spares (started here, with the lab; ``LOCKVIZ_SPARES=0``: none)."""
    if servers_spec:
        return ExternalLab(servers_spec)
    return LocalLab(base_dir, spares.process_pool())
