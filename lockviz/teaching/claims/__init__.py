"""What each checkpoint's answer claims about a run, as a check on the run's events.

A lesson's answer must hold for every live run of its script, not only for the one recorded.
So each checkpoint (a step with an ``ask``) has a claim here: a function of a run's
:class:`~lockviz.teaching.history.History` that says whether the run agrees with the answer,
and why. The claims check causes and order ("Bob is granted after the server expired Alice's
lease"), with margins where a time matters, never a millisecond. ``tests/lockviz/teaching/
test_claims.py`` runs them on every recorded run and requires one claim per checkpoint;
``bench/lessons.py`` runs them on fresh live runs (a run that could not keep its story is
inconclusive: counted and run again, never counted as agreeing).

One table (:data:`CLAIMS`, filled by :func:`~lockviz.teaching.claims.registry.claim`), written
one module per part of the course, in the course's order; :mod:`.shapes` holds the shapes of
claim several lessons share. Importing this package registers every claim.
"""

from __future__ import annotations

# Each part registers its claims as it is imported (the table is read by key: order is free).
from lockviz.teaching.claims import (  # noqa: F401
    beyond,
    etcd,
    every_service,
    failover,
    postgres,
    redis_single,
    redlock,
    storage,
    zookeeper,
)
from lockviz.teaching.claims.registry import CLAIMS, Claim, claim

__all__ = ["CLAIMS", "Claim", "claim"]
