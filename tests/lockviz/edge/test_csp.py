"""Every page carries a Content-Security-Policy that runs scripts only from the site itself, and
no template holds a script the policy would refuse (the one-file replay, made to be opened from
disk, has its own policy in a <meta>)."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.test import Client

from tests.conftest import ROOT
from tests.lockviz.views.test_query_fuzz import pages

EMBEDS = ("/embed/",)


@pytest.mark.django_db
def test_every_page_has_a_policy_with_scripts_from_the_site_only() -> None:
    client = Client(raise_request_exception=False)
    checked = 0
    for path in pages():
        response = client.get(path)
        if "text/html" not in response.get("Content-Type", ""):
            continue
        policy = response.get("Content-Security-Policy", "")
        assert "script-src 'self'" in policy and "object-src 'none'" in policy, path
        ancestors = re.search(r"frame-ancestors ([^;]+)", policy)
        assert ancestors is not None, path
        if path.startswith(EMBEDS) and response.status_code == 200:
            assert ancestors[1] == settings.LOCKVIZ_EMBED_ANCESTORS, path
        else:
            assert ancestors[1] == "'none'", path
        checked += 1
    assert checked >= 30


def test_no_template_holds_a_script_the_policy_refuses() -> None:
    inline = []
    for template in sorted((ROOT / "templates").rglob("*.html")):
        text = template.read_text()
        for tag in re.findall(r"<script\b[^>]*>", text):
            if "src=" not in tag and "application/json" not in tag:
                inline.append(f"{template.name}: {tag}")
        inline += [f"{template.name}: {m}" for m in re.findall(r"\son[a-z]+=\"", text)]
        inline += [f"{template.name}: javascript:" for _ in re.findall("javascript:", text)]
    assert inline == ['offline.html: <script type="module">']


def test_testserver_is_a_host_only_in_tests() -> None:
    """Django's test client's host: the settings themselves never allow it (the tests' own
    environment adds it, as Django's test set-up does)."""
    import subprocess
    import sys

    shown = subprocess.run(
        [sys.executable, "-c", "import django; from django.conf import settings; "
         "django.setup(); print(settings.ALLOWED_HOSTS)"],
        cwd=ROOT, capture_output=True, text=True, check=True,
        env={"DJANGO_SETTINGS_MODULE": "lockviz.settings", "PATH": "/usr/bin:/bin",
             "LOCKVIZ_SECRET_KEY": "a key for this test alone"},
    )  # fmt: skip
    assert "127.0.0.1" in shown.stdout and "testserver" not in shown.stdout


def test_a_page_a_library_writes_runs_its_own_inline_script_and_nothing_more() -> None:
    """LTI's deep linking answer (pylti1p3's) posts a form to the LMS from an inline script."""
    from django.http import HttpResponse

    from lockviz.edge import csp

    page = HttpResponse(
        '<form id="f" action="https://lms.example.edu/return?x=1&amp;y=2" method="POST">'
        "</form><script type=\"text/javascript\">document.getElementById('f').submit();</script>"
    )
    policy = csp.allow_inline(page)["Content-Security-Policy"]
    assert policy.startswith("script-src 'self' 'sha256-")
    assert policy.endswith("form-action 'self' https://lms.example.edu")
