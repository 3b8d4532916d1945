"""Lab hosts: processes that run labs and nothing else, on any number of machines.

A web process (``LOCKVIZ_LAB_HOSTS=remote``, or ``serve`` by default with a lab host of its own
as a child) records a run as queued and publishes a request (:mod:`.stream`); a lab host
(``manage.py labhost``, its loop: :mod:`lockviz.runs.host`) takes one only when it has a free
slot, marks the run started in the database (only one host can), and runs it as
lockviz.runs.recorder always has. Each host keeps a heartbeat (:mod:`.heartbeat`); clicks reach
it over lockviz.runs.relay, by the run's ``host``. docs/architecture.md draws the tiers and what
happens when each dies.

This package is the line between the tiers, the same for both ends: the requests
(:mod:`.stream`), the heartbeats (:mod:`.heartbeat`) and ``serve``'s own lab host process
(:mod:`.embedded`). Each end is beside what it serves: the web side's admission and line in
:mod:`lockviz.runs.labhosts`, the lab host's loop in :mod:`lockviz.runs.host`, next to the
recorder it drives. Nothing here imports either end.
"""
