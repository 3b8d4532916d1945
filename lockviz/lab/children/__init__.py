"""The lab's child processes: each module here is the whole of an OS process of its own.

The app starts them (forked warm from the fork server, or cold as ``python -m <module>``) and
talks to each over its stdin and stdout, one JSON line at a time; each dies with its parent
(``PR_SET_PDEATHSIG``). They import no Django, and nothing of the app but the lab's plain parts
(tests/lockviz/lab/test_no_django.py): a child starts fast and runs only what it is for.

* :mod:`~lockviz.lab.children.worker`: a scenario client (alice, bob...) with its lock client;
  the app's handle on it is :mod:`lockviz.lab.clients`.
* :mod:`~lockviz.lab.children.proxy`: the lab's network, one TCP proxy per client↔server link;
  its handle is :mod:`lockviz.lab.links`.
* :mod:`~lockviz.lab.children.storage_service`: a sequencer run's storage service; driven by
  :mod:`lockviz.lab.clients` too.
* :mod:`~lockviz.lab.children.forkserver`: the fork server, which forks the worker and the
  proxy warm; its handle is :mod:`lockviz.lab.forkserver`.

The names below are what the app runs (``python -m``) and what it asks the fork server for.
"""

from __future__ import annotations

WORKER = f"{__name__}.worker"
PROXY = f"{__name__}.proxy"
STORAGE_SERVICE = f"{__name__}.storage_service"
FORK_SERVER = f"{__name__}.forkserver"
