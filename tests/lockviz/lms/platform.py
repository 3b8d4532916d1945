"""An LTI 1.3 platform (the LMS's side) for the end-to-end tests, on ``lti1p3platform`` (PyPI),
which this project did not write: it makes and signs the OIDC preflight and the launch's id
token (resource links, deep linking requests, the AGS and NRPS claims), validates the tool's
deep linking answer and its client assertions against the tool's own JWKS, issues and checks
access tokens, and serves Assignment and Grade Services (line items, scores, results) and Names
and Role Provisioning. What it leaves to a platform is written here: an HTTP front
(``http.server`` on a free port), a course with its people, and the gradebook's storage (dicts).

    GET  /start?user=<name>&link=<id>  (or &deep=1)   an LMS user opens the tool: OIDC begins
    GET  /auth                                         the tool's authorization request: the
                                                       launch, posted back by a form
    POST /deep-link-return                             the tool's content items: placed
    POST /token                                        an access token for a client assertion
    GET  /jwks                                         the platform's key
    …/lineitems[/<id>[/scores|/results]]               AGS;  GET /memberships: NRPS

One module past the usual ~300 lines, on purpose: it is the whole other side of the protocol
(its course, its pages, its gradebook), read as one LMS by whoever debugs a launch.
"""

from __future__ import annotations

import html
import itertools
import json
import threading
import typing as t
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lti1p3platform.exceptions import LtiException
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request, TRequest
from lti1p3platform.response import Response
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import (
    AssignmentsGradesService,
    NamesRoleProvisioningService,
    TPage,
)

ROLES = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
COURSE = {"id": "course-7", "title": "Distributed systems", "label": "DS"}


class Asked(Request):
    """One HTTP request, as lti1p3platform reads one."""

    def build_metadata(self, request: t.Any) -> TRequest:
        handler: Handler = request
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length).decode() if length else ""
        kind = handler.headers.get("Content-Type") or ""
        return {
            "method": handler.command,
            "form_data": dict(parse_qsl(body)) if "form" in kind else {},
            "get_data": dict(parse_qsl(parts.query)),
            "headers": dict(handler.headers.items()),
            "content_type": kind,
            "path": parts.path,
            "json": json.loads(body) if body and "json" in kind else None,
        }


class Conf(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs: t.Any) -> None:
        self._registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs: t.Any) -> Registration:
        return self._registration  # type: ignore[return-value]


class Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs: t.Any) -> None:
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url: str) -> str:
        return url


class Launch(LTIAdvantageMessageLaunchAbstract):
    def render_launch_form(self, launch_data: dict[str, t.Any], **kwargs: t.Any) -> str:
        fields = "".join(
            f'<input type="hidden" name="{k}" value="{html.escape(str(launch_data[k]))}">'
            for k in ("id_token", "state")
        )
        action = html.escape(str(launch_data["launch_url"]))
        return (
            f'<!doctype html><title>Launching</title><form method="post" action="{action}" '
            f'id="launch">{fields}</form><script>document.getElementById("launch").submit()'
            "</script>"
        )


class Gradebook(AssignmentsGradesService):
    """AGS over the platform's dicts (what lti1p3platform leaves to its platform)."""

    def __init__(self, platform: Platform, request: Request, lineitem: str | None = None) -> None:
        self.platform = platform
        super().__init__(request, platform.conf(), platform.url + "/lineitems", lineitem)

    def find_lineitems(self, page: int = 1, limit: int | None = None, **given: t.Any) -> TPage:
        return {"content": list(self.platform.lineitems.values()), "has_next": False}

    def find_lineitem(self, line_item_id: str) -> t.Any:
        return self.platform.lineitems[line_item_id]

    def create_lineitem(self, creation_data: t.Any) -> t.Any:
        return self.platform.new_lineitem(dict(creation_data))

    def update_lineitem(self, update_data: t.Any) -> t.Any:
        self.platform.lineitems[update_data["id"]].update(update_data)
        return self.platform.lineitems[update_data["id"]]

    def delete_lineitem(self, line_item_id: str) -> None:
        self.platform.lineitems.pop(line_item_id, None)

    def update_score(self, line_item_id: str, score: t.Any) -> UpdateScoreStatus:
        if line_item_id not in self.platform.lineitems:
            return UpdateScoreStatus.NOTAPPLIED
        self.platform.scores.setdefault(line_item_id, {})[str(score["userId"])] = dict(score)
        return UpdateScoreStatus.SUCCESS

    def get_results(self, line_item_id: str, page: int = 1, limit: t.Any = None,
                    user_id: t.Any = None) -> TPage:  # fmt: skip
        given = self.platform.scores.get(line_item_id, {})
        results = [
            {"id": f"{line_item_id}/results/{user}", "userId": user, "scoreOf": line_item_id,
             "resultScore": s["scoreGiven"], "resultMaximum": s["scoreMaximum"]}
            for user, s in given.items() if user_id in (None, user)
        ]  # fmt: skip
        return {"content": results, "has_next": False}


class Roster(NamesRoleProvisioningService):
    def __init__(self, platform: Platform, request: Request) -> None:
        self.platform = platform
        super().__init__(request, platform.conf(), platform.url + "/memberships")

    def get_member_data_page(self, page: int = 1, limit: t.Any = None, **_: t.Any) -> TPage:
        members = [
            {"user_id": name, "roles": [ROLES + role], "name": person, "status": "Active"}
            for name, (role, person) in self.platform.people.items()
        ]
        return {"content": members, "has_next": False}

    def get_context_by_id(self) -> Context:
        return Context(id=COURSE["id"], label=COURSE["label"], title=COURSE["title"])


class Platform:
    """The LMS: a course with an instructor and learners, its links and its gradebook."""

    def __init__(self, tool: str) -> None:
        self.tool = tool  # the tool's address, http://127.0.0.1:<port>
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.private = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()  # fmt: skip
        self.public = (
            key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )
        self.client_id, self.deployment = "lockviz-in-the-lms", "deployment-1"
        self.people = {"prof": ("Instructor", "Prof Ada"), "ann": ("Learner", "Ann Lee"),
                       "bob": ("Learner", "Bob Ray")}  # fmt: skip
        self.links: dict[str, dict[str, t.Any]] = {}  # placed content: resource link id → item
        self.lineitems: dict[str, dict[str, t.Any]] = {}
        self.scores: dict[str, dict[str, dict[str, t.Any]]] = {}  # line item → user → score
        self.ids = itertools.count(1)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.platform = self  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def registration(self) -> Registration:
        return (
            Registration()
            .set_iss(self.url)
            .set_client_id(self.client_id)
            .set_deployment_id(self.deployment)
            .set_oidc_login_url(self.tool + "/lti/login/")
            .set_launch_url(self.tool + "/lti/launch/")
            .set_deeplink_launch_url(self.tool + "/lti/launch/")
            .set_platform_public_key(self.public)
            .set_platform_private_key(self.private)
            .set_tool_key_set_url(self.tool + "/lti/jwks/")
        )

    def conf(self) -> Conf:
        conf = Conf(registration=self.registration())
        conf.get_registration()
        return conf

    def start(self, user: str, link: str = "", deep: bool = False) -> str:
        """The address an LMS user's click on the tool opens: the OIDC login's first step."""
        return f"{self.url}/start?" + urlencode({"user": user, "link": link, "deep": int(deep)})

    def new_lineitem(self, data: dict[str, t.Any]) -> dict[str, t.Any]:
        found = {**data, "id": f"{self.url}/lineitems/{next(self.ids)}"}
        self.lineitems[found["id"]] = found
        return found

    def place(self, items: list[dict[str, t.Any]]) -> list[str]:
        """The tool's content items, placed in the course: a resource link each (and the line
        item a graded one asked for); their link ids."""
        placed = []
        for item in items:
            link = f"link-{next(self.ids)}"
            line = None
            if item.get("lineItem"):
                line = self.new_lineitem({**item["lineItem"], "resourceLinkId": link})["id"]
            self.links[link] = {"title": item.get("title"), "custom": item.get("custom") or {},
                                "url": item.get("url"), "lineitem": line}  # fmt: skip
            placed.append(link)
        return placed

    def launch_page(self, asked: Request) -> str:
        """The launch the tool's authorization request asks for: id token in a form."""
        hint = json.loads(asked.get_data.get("lti_message_hint") or "{}")
        user = asked.get_data.get("login_hint", "")
        role, name = self.people[user]
        launch = Launch(asked, self.conf())
        launch.set_user_data(user, [ROLES + role], full_name=name)
        launch.set_launch_context_claim(
            COURSE["id"], ["http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"],
            COURSE["title"], COURSE["label"],
        )  # fmt: skip
        launch.set_nrps(self.url + "/memberships")
        if hint.get("deep"):
            launch.set_dl(self.url + "/deep-link-return", title="Place lockviz")
        else:
            link = self.links[hint["link"]]
            launch.set_resource_link_claim(hint["link"], title=link["title"])
            launch.set_custom_parameters_claim(link["custom"])
            launch.set_ags(self.url + "/lineitems", link["lineitem"])
        return str(launch.lti_launch())


class Handler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer

    def log_message(self, *args: t.Any) -> None:  # quiet: the test says what failed
        pass

    @property
    def platform(self) -> Platform:
        return self.server.platform  # type: ignore[attr-defined, no-any-return]

    def answer(self, code: int, body: str, kind: str = "text/html", where: str = "") -> None:
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", kind)
        if where:
            self.send_header("Location", where)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def served(self, response: Response) -> None:
        result = response.result
        if isinstance(result, dict) and "content" in result:
            result = result["content"]
        body = json.dumps(result if 200 <= response.code < 300 else {"error": response.message})
        self.answer(response.code, body, response.media_type)

    def do_GET(self) -> None:
        self.route()

    def do_POST(self) -> None:
        self.route()

    def route(self) -> None:
        path = urlsplit(self.path).path
        asked = Asked(self)
        pages = {
            "/start": self.start, "/auth": self.auth, "/deep-link-return": self.placed,
            "/token": self.token, "/jwks": self.jwks, "/memberships": self.members,
            "/lineitems": self.lineitems,
        }  # fmt: skip
        try:
            if path.startswith("/lineitems/"):
                self.lineitem(asked, path)
            elif path in pages:
                pages[path](asked)
            else:
                self.answer(404, "no such page")
        except (LtiException, KeyError, AssertionError) as exc:
            self.answer(400, f"refused: {type(exc).__name__} {exc}")

    def start(self, asked: Request) -> None:
        q = asked.get_data
        hint = {"deep": True} if q.get("deep") == "1" else {"link": q.get("link")}
        login = Login(asked, self.platform.conf())
        login.set_lti_message_hint(hint=json.dumps(hint))
        self.answer(302, "", where=login.initiate_login(q["user"]))

    def auth(self, asked: Request) -> None:
        self.answer(200, self.platform.launch_page(asked))

    def placed(self, asked: Request) -> None:
        p = self.platform
        placed = p.place(p.conf().validate_deeplinking_resp(asked.form_data))
        names = html.escape(", ".join(p.links[link]["title"] for link in placed))
        self.answer(200, f"<!doctype html><title>Placed</title><p id=placed>Placed: {names}</p>")

    def token(self, asked: Request) -> None:
        token = self.platform.conf().get_access_token(asked.form_data)
        self.answer(200, json.dumps(token), "application/json")

    def jwks(self, asked: Request) -> None:
        self.answer(200, json.dumps(self.platform.conf().get_jwks()), "application/json")

    def members(self, asked: Request) -> None:
        self.served(Roster(self.platform, asked).handle_get_members())

    def lineitems(self, asked: Request) -> None:
        book = Gradebook(self.platform, asked)
        get = self.command == "GET"
        self.served(book.handle_get_lineitems() if get else book.handle_create_lineitem())

    def lineitem(self, asked: Request, path: str) -> None:
        line = self.platform.url + "/lineitems/" + path.split("/")[2]
        book = Gradebook(self.platform, asked, line)
        if path.endswith("/scores"):
            self.served(book.handle_update_score(line))
        elif path.endswith("/results"):
            self.served(book.handle_get_results(line))
        else:
            self.served(book.handle_get_lineitem(line))
