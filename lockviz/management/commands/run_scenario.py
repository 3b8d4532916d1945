"""``manage.py run_scenario <slug-or-path> [--json]``: one run on the live lab, in the terminal.

Exit status: 0 the run completed as expected (or had no expectation), 1 the lab failed (a
server is missing, ...), 2 the scenario is invalid, 3 the verdict contradicts ``expect``, 4 the
run was inconclusive: the machine fell behind and the run could not keep its story, so its
``expect`` was not judged (run it again on a quieter machine).
"""

from __future__ import annotations

import json
import os
import sys

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from lockviz import narrator
from lockviz.errors import ScenarioError
from lockviz.lab.errors import LabError
from lockviz.runs import launcher, recorder
from lockviz.scenarios.library import load


class Command(BaseCommand):
    help = "Run a scenario (a built-in slug or a JSON file) on the live lab and print the verdict."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("scenario", help="a built-in scenario's slug, or a path to a JSON file")
        parser.add_argument("--json", action="store_true", help="print the run as JSON")

    def handle(self, *args: object, **options: object) -> None:
        try:
            slug, scenario = load(str(options["scenario"]))
        except ScenarioError as exc:
            self.stderr.write("Invalid scenario:\n" + "\n".join(f"  {p}" for p in exc.problems))
            sys.exit(2)
        call_command("migrate", verbosity=0, interactive=False)
        # One run and out: spares started ahead would only compete with it (lockviz.lab.spares).
        os.environ["LOCKVIZ_SPARES"] = "0"
        try:
            recorder.lab().check([*scenario.nodes, "storage"])
        except LabError as exc:
            self.stderr.write(f"The lab cannot run this: {exc}")
            sys.exit(1)
        run = launcher.create_run(scenario, slug)
        result = recorder.execute(run, scenario)
        if options["json"]:
            out = {
                "run_id": run.pk,
                "scenario": scenario.to_json(),
                "verdict": result.verdict,
                "expect_met": result.expect_met
                if scenario.expect and scenario.expect.as_dict()
                else None,
                "mismatches": result.mismatches,
                "inconclusive": result.inconclusive,
                "error": result.error,
                "events": result.events,
            }
            self.stdout.write(json.dumps(out, indent=1))
        else:
            self.stdout.write(f"Run {run.pk}: {scenario.title}")
            self.stdout.write(narrator.render(result.events))
            self.stdout.write("")
            self.stdout.write(
                narrator.verdict_text(result.verdict, result.mismatches, scenario.storage_kind)
            )
        if result.error:
            self.stderr.write(f"The lab failed: {result.error}")
            sys.exit(1)
        if result.mismatches:
            sys.exit(3)
        if result.inconclusive:
            self.stderr.write(
                f"Inconclusive: {result.inconclusive}; the scenario's expect was not judged."
            )
            sys.exit(4)
