"""Lab hosts: processes that run labs and nothing else, on any number of machines.

A web process (``LOCKVIZ_LAB_HOSTS=remote``, or ``serve`` by default with a lab host of its own
as a child) records a run as queued and publishes a request (:mod:`.stream`); a lab host
(``manage.py labhost``, :mod:`.host`) takes one only when it has a free slot, marks the run
started in the database (only one host can), and runs it as lockviz.runs.recorder always has.
Each host keeps a heartbeat (:mod:`.heartbeat`); clicks reach it over lockviz.runs.relay, by
the run's ``host``. docs/architecture.md draws the tiers and what happens when each dies.
"""
