"""Running code in a fresh interpreter with no Django settings, as the lab's processes do."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def run_without_django(code: str) -> str:
    """Run ``code`` with only the repository on the path and no ``DJANGO_SETTINGS_MODULE``;
    returns what it printed, after asserting that it exited cleanly."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout
