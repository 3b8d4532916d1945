"""The live fan-out: a run's (and a room's) messages from where they happen to every viewer.

* :mod:`~lockviz.live.broadcast` — publishing: a run's events and a room's messages to its
  Channels group, from any thread, in order;
* :mod:`~lockviz.live.channel_layer` — the channel layer they travel on (Redis pub/sub, the
  app's own redis-server unless one is shared);
* :mod:`~lockviz.live.audience` — this process's viewers: one subscription per group, fanned
  out to each;
* :mod:`~lockviz.live.frames` — a message encoded and framed once for all of them;
* :mod:`~lockviz.live.unsent` — how far behind a viewer is (what its server holds unsent).

The web side (the consumers) listens here and the lab side (the recorder's sink) publishes
here; neither imports the other. Below it: the models, the lab's process tools and the
counters (:mod:`lockviz.ops.counters`).
"""
