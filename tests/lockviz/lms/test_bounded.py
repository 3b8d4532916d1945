"""What an LMS sends is read within bounds (lockviz.lms.bounded): a service's answer through the
one bounded decoder (lockviz.jsontext), the class list page by page and member by member, a
launch's id token before pylti1p3 reads it. A platform answering hostile JSON gets a sentence in
the log (and a refused launch), never a traceback. The platform here is a plain HTTP server on
loopback that answers what each test asks of it; the whole flow against a real platform
implementation is tests/lockviz/lms/test_lti.py."""

from __future__ import annotations

import base64
import html
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from lti_tool.models import LtiContext, LtiDeployment, LtiMembership
from pylti1p3.exception import LtiException

from lockviz.lms import bounded, register, roster

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000


class Answers(http.server.ThreadingHTTPServer):
    """Each path's answer: (headers, body); every path asked, in order."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.bodies: dict[str, tuple[dict[str, str], bytes]] = {}
        self.asked: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: Answers

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        self.server.asked.append(self.path)
        headers, body = self.server.bodies.get(self.path, ({}, b"{}"))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer()


@pytest.fixture
def platform() -> Iterator[Answers]:
    server = Answers()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (DEEP, "nested 100,000 deep; the most is 32"),
        ('{"score": NaN}', "NaN is not a finite number"),
        ('{"n": ' + "9" * 5000 + "}", "an integer of 5,000 digits; the most is 20"),
        ('{"members": [', "not valid JSON"),
    ],
)
def test_a_services_answer_is_read_by_the_bounded_decoder(
    platform: Answers, body: str, said: str
) -> None:
    platform.bodies["/answer"] = ({}, body.encode())
    with pytest.raises(LtiException) as refused:
        bounded.session().get(platform.url + "/answer").json()
    assert said in str(refused.value) and "127.0.0.1" in str(refused.value)


def test_a_services_answer_is_read_no_further_than_its_bound(platform: Answers) -> None:
    platform.bodies["/big"] = ({}, b'{"pad": "' + b"x" * (3 * 1024 * 1024) + b'"}')
    with pytest.raises(LtiException, match="is more than 2048 KB"):
        bounded.session().get(platform.url + "/big")
    platform.bodies["/fine"] = ({}, b'{"members": []}')
    assert bounded.session().get(platform.url + "/fine").json() == {"members": []}


def _course(platform: Answers) -> LtiContext:
    registration = register.register(
        register.Platform("a test LMS", platform.url, "client-1", platform.url + "/auth",
                          platform.url + "/token", platform.url + "/jwks", ("dep-1",))
    )  # fmt: skip
    deployment = LtiDeployment.objects.get(registration=registration)
    platform.bodies["/token"] = ({}, b'{"access_token": "t", "expires_in": 3600}')
    return LtiContext.objects.create(
        deployment=deployment, id_on_platform="course-1", memberships_url=platform.url + "/m"
    )


def test_a_class_list_keeps_only_members_and_follows_a_bounded_number_of_pages(
    platform: Answers,
) -> None:
    """A page that names itself as the next page for ever was followed for ever; a member
    without a ``user_id`` (or with a name that is not text) ended the launch in a 500."""
    course = _course(platform)
    page = {"members": [{"user_id": "u-1", "roles": ["Learner"], "name": "Ann"},
                        {"roles": ["Learner"], "name": "no id"},
                        {"user_id": "u-2", "roles": "Learner", "name": {"x": 1}},
                        "not a member"]}  # fmt: skip
    loop = {"Link": f'<{platform.url}/m>; rel="next"'}
    platform.bodies["/m"] = (loop, json.dumps(page).encode())
    assert roster.refresh(course) is True
    assert platform.asked.count("/m") == roster.MAX_PAGES
    kept = LtiMembership.objects.filter(context=course).select_related("user")
    assert sorted((m.user.sub, m.user.name, m.is_learner) for m in kept) == [
        ("u-1", "Ann", True), ("u-2", "", False)
    ]  # fmt: skip


def test_a_class_list_the_decoder_refuses_is_not_read_and_nothing_breaks(
    platform: Answers, caplog: pytest.LogCaptureFixture
) -> None:
    course = _course(platform)
    platform.bodies["/m"] = ({}, ('{"members": ' + DEEP + "}").encode())
    assert roster.refresh(course) is False
    assert "nested 100,001 deep" in caplog.text
    assert not LtiMembership.objects.filter(context=course).exists()


def _part(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def test_a_launch_whose_token_holds_json_lockviz_does_not_read_is_refused_with_a_sentence(
    client: Client,
) -> None:
    header = _part('{"alg": "RS256"}')
    deep = "[" * 1000 + "]" * 1000
    for claims, said in ((deep, "nested 1,000 deep"), ('{"exp": 1e999}', "not a finite")):
        token = f"{header}.{_part(claims)}.c2ln"
        response = client.post("/lti/launch/", {"id_token": token, "state": "s"})
        text = html.unescape(response.content.decode())
        assert response.status_code == 403 and "the id token's claims" in text and said in text
