"""The lab host ``serve`` starts of its own by default: ``make run`` needs nothing else.

``serve`` (``LOCKVIZ_LAB_HOSTS=embedded``, the default) runs no lab in its own process: it
starts ``manage.py labhost`` as a child (lockviz.lab.procs: it dies with ``serve``, even a
killed one, and its servers die with it) on the Redis ``serve`` already uses, and publishes run
requests for it as a remote web process would. Provisioning then never competes with page
serving and live fan-out for one interpreter. When ``serve`` stops, the child is told to stop
(SIGINT: its runs say they were stopped) and killed if it has not ended in time.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import time

from django.conf import settings

from lockviz.lab import procs
from lockviz.lab.errors import LabError
from lockviz.labhost import heartbeat

STOP_TIMEOUT_S = 10.0
READY_TIMEOUT_S = 180.0  # its self-test starts servers on a loaded machine


def start(redis_url: str) -> subprocess.Popen[bytes]:
    """``manage.py labhost`` on ``redis_url``, its output beside ``serve``'s."""
    env = {**os.environ, "LOCKVIZ_CHANNEL_REDIS": redis_url, "LOCKVIZ_LAB_HOSTS": "inprocess"}
    env.pop("LOCKVIZ_CHANNEL_REDIS_PASSWORD_FILE", None)  # the password is in the URL
    env.pop("DJANGO_SETTINGS_MODULE", None)
    manage = os.path.join(settings.BASE_DIR, "manage.py")
    child: subprocess.Popen[bytes] = procs.spawn(
        [sys.executable, manage, "labhost"], env=env, stdin=subprocess.DEVNULL
    )
    atexit.register(stop, child)
    return child


def wait_ready(child: subprocess.Popen[bytes]) -> None:
    """Until ``child`` beats (its lab works); :class:`LabError` if it exits first."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not any(s.host.split(":")[1:2] == [str(child.pid)] for s in heartbeat.hosts()):
        if child.poll() is not None:
            raise LabError(f"the lab host exited ({child.returncode}): its output says why")
        if time.monotonic() > deadline:
            raise LabError(f"the lab host did not answer within {READY_TIMEOUT_S:g} s")
        time.sleep(0.2)


def stop(child: subprocess.Popen[bytes]) -> None:
    """Ctrl-C to the lab host; SIGKILL if it has not ended in time."""
    procs.stop(child, grace_s=STOP_TIMEOUT_S, signals=(signal.SIGINT,))
