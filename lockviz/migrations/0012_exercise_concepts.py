"""A saved exercise's ``concepts`` become the course's concept ids (lockviz.teaching.concepts).

Exercises named the concepts they practise as free words ("lease", "pgbouncer"); they now name
each by its id ("LEASE", "POOLING"), which the exercise format checks. A saved exercise written
before keeps what it said: each word the built-ins used becomes its id, an id stays, and a word
that names no concept is dropped (the exercise would otherwise no longer open).
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

# The free words exercises used, as the course names each concept now.
WORDS = {
    "advisory lock": "SESSION_LOCK",
    "clocks": "CLOCKS",
    "critical section": "MUTUAL_EXCLUSION",
    "etcd": "KEEPALIVE",
    "fencing": "TOKEN",
    "lease": "LEASE",
    "liveness": "LIVENESS",
    "lost update": "LOST_UPDATE",
    "majority": "QUORUM",
    "persistence": "PERSISTENCE",
    "pgbouncer": "POOLING",
    "process pause": "PAUSE",
    "read-modify-write": "LOST_UPDATE",
    "redlock": "QUORUM",
    "renewal": "WATCHDOG",
    "sequencer": "SEQUENCER",
    "session": "ZK_SESSION",
    "stale write": "STALE_WRITE",
    "zookeeper": "ZK_SESSION",
}


def to_ids(apps: Any, schema_editor: Any) -> None:
    from lockviz.teaching.concepts import Concept

    saved = apps.get_model("lockviz", "SavedExercise")
    for exercise in saved.objects.all():
        data = exercise.exercise if isinstance(exercise.exercise, dict) else {}
        said = data.get("concepts")
        if not isinstance(said, list):
            continue
        ids: list[str] = []
        for word in said:
            found = str(word) if str(word) in Concept.__members__ else WORDS.get(str(word).lower())
            if found and found not in ids:
                ids.append(found)
        if ids != said:
            exercise.exercise = {**data, "concepts": ids[:8]}
            exercise.save(update_fields=["exercise"])


class Migration(migrations.Migration):
    dependencies = [
        ("lockviz", "0011_security"),
    ]

    operations = [migrations.RunPython(to_ids, migrations.RunPython.noop)]
