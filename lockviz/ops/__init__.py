"""Operating lockviz: what a proxy, a container healthcheck and Prometheus ask a running app.

* :mod:`~lockviz.ops.readiness` — is this process fit to take requests: its database, its
  channel layer, its lab (``/readyz``; ``/healthz`` only says the process answers);
* :mod:`~lockviz.ops.metrics` — every metric the app exports, and what it reads at each scrape;
* :mod:`~lockviz.ops.counters` — the registry, and the one-line hooks the rest of the app calls
  (``counters.refused("not_owner")``): it imports nothing of lockviz, so anything may count;
* :mod:`~lockviz.ops.access` — who may read ``/metrics``.

The views that serve them are in :mod:`lockviz.views.health`.
"""
