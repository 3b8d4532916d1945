"""The HTTP/ASGI edge: what stands between a request and a view, and what a page is served as.

* :mod:`~lockviz.edge.bodylimit` — request bodies bounded before they are read;
* :mod:`~lockviz.edge.proxies` — who is on the other end, from trusted proxies only;
* :mod:`~lockviz.edge.csp` — every page's Content-Security-Policy;
* :mod:`~lockviz.edge.staticfiles` — the collected, hashed static files and their middleware;
* :mod:`~lockviz.edge.bundle` — a page's ES modules as one inline module (the offline replay);
* :mod:`~lockviz.edge.once` — a costly answer made once while other requests wait for it;
* :mod:`~lockviz.edge.workers` — a request's CPU-bound work (an import's parse and words, a
  first export's drawing) in a few niced worker processes, bounded, out of the web process;
* :mod:`~lockviz.edge.squashed` — a database half-way through squashed migrations, refused.

It imports the shared vocabulary (:mod:`lockviz.errors`) and nothing else of lockviz.
"""
