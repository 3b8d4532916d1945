"""Distributed lock clients, the fenced storage and the history checker.

A plain Python library: it depends on the backends' client libraries only (redis-py, kazoo,
psycopg) and never on Django or the lab around it. Every lock reports each protocol step to an
event callback, so the lab can draw it; the lock works the same with no callback at all.
"""
