"""``manage.py lab check|up|status|down``: the local lab's servers, by hand.

* ``check``  what the embedded lab needs from this machine, and how to install what is missing.
* ``up``     start a standing set of servers (redis-1..N and storage) that outlives the command,
             and print their addresses and how to connect (each has a password, in a file
             only you can read). Runs in the app do not need it: each run starts its own servers.
* ``status`` every server set the lab has started for this user (standing ones and those of
             runs in progress): pids, ports, alive or not.
* ``down``   stop every server set the lab has started for this user, standing or left over
             from a killed app.

All three look only in this user's lab base (see lockviz.lab.registry).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lockviz.catalogue import REDIS
from lockviz.lab import procs, registry
from lockviz.lab.errors import LabError
from lockviz.lab.servers import install_hint, missing, requirements
from lockviz.lab.servers.redis import RedisServer

Options = Mapping[str, object]  # the command line, as argparse parsed it


class Command(BaseCommand):
    help = "Check, start, inspect or stop the local lab's servers."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["check", "up", "status", "down"])
        parser.add_argument("--nodes", type=int, default=5, help="Redis lock nodes for `up` (1-7)")

    def handle(self, *args: object, **options: object) -> None:
        actions = {"check": self.do_check, "up": self.do_up, "status": self.do_status,
                   "down": self.do_down}  # fmt: skip
        actions[str(options["action"])](options)

    def do_check(self, options: Options) -> None:
        for req in requirements():
            mark = self.style.SUCCESS("ok     ") if req.found else self.style.ERROR("MISSING")
            self.stdout.write(
                f"{mark} {req.what:<28} {req.found or 'apt-get install ' + req.debian_package}"
            )
        others = [r for r in missing() if r not in missing(REDIS)]
        if others:
            self.stdout.write(
                f"  (scenarios on the other backends will say so: {install_hint(others)})"
            )
        if missing(REDIS):  # the spine: without Redis no scenario can run at all
            raise CommandError(f"the lab cannot start servers; {install_hint(missing(REDIS))}")

    def do_up(self, options: Options) -> None:
        nodes = options["nodes"]
        if not isinstance(nodes, int) or not 1 <= nodes <= 7:
            raise CommandError("--nodes must be between 1 and 7")
        self.do_check(options)
        try:
            workdir = registry.new_run_dir("lockviz-lab-")
        except LabError as exc:
            raise CommandError(str(exc)) from None
        names = [f"redis-{i}" for i in range(1, nodes + 1)] + ["storage"]
        servers = [RedisServer(name, os.path.join(workdir, name)) for name in names]
        started = time.monotonic()
        try:
            for server in servers:
                server.launch(spawn=procs.spawn_detached)
            for server in servers:
                server.wait_ready()
                self.stdout.write(f"  {server.name:<8} ready on {server.address}")
        except LabError as exc:
            procs.run_each(server.stop for server in servers)
            shutil.rmtree(workdir, ignore_errors=True)
            raise CommandError(str(exc)) from None
        pids = {s.name: s.proc.pid for s in servers if s.proc}
        registry.record(workdir, pids, ports={s.name: s.port for s in servers}, standing=True)
        elapsed = (time.monotonic() - started) * 1000
        self.stdout.write(self.style.SUCCESS(f"{len(servers)} servers up in {elapsed:.0f} ms"))
        first = servers[0]
        self.stdout.write(
            "Each server asks for a password of its own, kept only in its redis.conf (mode"
            f" 0600). To connect to {first.name}:\n"
            f"  REDISCLI_AUTH=\"$(sed -n 's/^requirepass //p' {first.config_file})\""
            f" redis-cli -p {first.port}\n"
            "(LOCKVIZ_SERVERS cannot carry passwords yet: the app cannot use these servers.)"
        )
        self.stdout.write("Stop them with: python manage.py lab down")

    def do_status(self, options: Options) -> None:
        entries = self._entries()
        if not entries:
            self.stdout.write("No lab servers are running.")
            return
        for entry in entries:
            kind = (
                "standing"
                if entry.get("standing")
                else f"{_what(entry)} of app pid {entry['owner_pid']}"
            )
            self.stdout.write(f"{entry['workdir']} ({kind})")
            ports = entry.get("ports", {})
            for name, pid in entry["pids"].items():
                same = procs.same_process(pid, entry["start_ticks"].get(name))
                state = "alive" if same else "gone"
                server = name.split("#")[0]  # "pg-1#2": the third process of pg-1
                port = f" port {ports[server]}" if server in ports else ""
                self.stdout.write(f"  {name:<8} pid {pid:<7}{port} {state}")

    def do_down(self, options: Options) -> None:
        stopped = sum(registry.remove(entry) for entry in self._entries())
        self.stdout.write(f"Stopped {stopped} server{'s' * (stopped != 1)}.")

    def _entries(self) -> list[registry.Entry]:
        try:
            return registry.entries()
        except LabError as exc:
            raise CommandError(str(exc)) from None


def _what(entry: registry.Entry) -> str:
    """What a set left by an app is, by its dir's name (lockviz.lab.spares, servers.pgtemplate)."""
    name = os.path.basename(entry["workdir"])
    if name.startswith("lockviz-spare-"):
        return "warm spare"
    if name.startswith("lockviz-pgtemplate-"):
        return "PostgreSQL template"
    return "run"
