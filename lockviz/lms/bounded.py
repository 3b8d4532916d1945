"""What an LMS sends lockviz, read within bounds: a launch's id token and its services' answers.

pylti1p3 reads a platform's JSON as it comes: ``json.loads`` of a token's parts and ``.json()``
of a service's answer read anything (100,000 brackets deep, ``NaN``, a 5,000-digit integer), a
service's answer may be any size and take any time, and a class list may name any number of
further pages. lockviz reads each through its one bounded decoder (lockviz.jsontext) first:

* a launch's id token (:func:`check_token`): its header and its claims, each decoded within
  :data:`MAX_TOKEN_BYTES` before pylti1p3 validates the token; a refusal is the launch's
  :class:`~lockviz.errors.LaunchRefused` (403) with the sentence;
* a service's answer (:func:`session`, given to pylti1p3's ``ServiceConnector`` for an access
  token, a page of the class list, a score): at most :data:`MAX_REPLY_BYTES`, read within
  :data:`TIMEOUT_S`, and its ``.json()`` is jsontext's; a refusal is pylti1p3's own
  ``LtiException``, which the grade and roster code already keep as the reason it failed.

The key set pylti1p3 fetches from a platform's registered JWKS address while it validates a
launch is read by pylti1p3 itself (django-lti builds the launch without a session of ours).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import urlsplit

import requests
from django.http import HttpRequest
from pylti1p3.exception import LtiException

from lockviz import jsontext
from lockviz.errors import JsonRefused, LaunchRefused
from lockviz.jsontypes import JsonValue

MAX_TOKEN_BYTES = 64 * 1024  # a part of an id token, decoded (a launch is a few KB)
MAX_REPLY_BYTES = 2 * 1024 * 1024  # a service's answer: a page of a class list of hundreds
TIMEOUT_S = 10.0  # to connect, and between bytes of an answer


def check_token(request: HttpRequest) -> None:
    """:class:`LaunchRefused` if the launch's id token holds JSON lockviz does not read (what
    is not a token at all is left to pylti1p3, which says so)."""
    token = str(request.POST.get("id_token") or "")
    parts = token.split(".")
    if len(parts) != 3:
        return
    for name, part in (("header", parts[0]), ("claims", parts[1])):
        try:
            text = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        except (binascii.Error, ValueError):
            return
        try:
            jsontext.loads(text, max_bytes=MAX_TOKEN_BYTES, where=f"the id token's {name}")
        except JsonRefused as exc:
            raise LaunchRefused(f"This launch cannot be trusted: {exc.message}.") from None


class _Answer(requests.Response):
    """A service's answer, read whole already (within bounds): its JSON by jsontext."""

    def json(self, **_: object) -> JsonValue:
        where = f"the answer of {urlsplit(self.url).netloc or 'the LMS'}"
        try:
            return jsontext.loads(self.content, max_bytes=MAX_REPLY_BYTES, where=where)
        except JsonRefused as exc:
            raise LtiException(exc.message) from None


class _Bounded(requests.Session):
    def request(
        self, method: str, url: str | bytes, *args: Any, **kwargs: Any
    ) -> requests.Response:
        kwargs["timeout"] = kwargs.get("timeout") or TIMEOUT_S
        kwargs["stream"] = True
        response = super().request(method, url, *args, **kwargs)
        body = bytearray()
        with response:
            for chunk in response.iter_content(64 * 1024):
                body += chunk
                if len(body) > MAX_REPLY_BYTES:
                    where = urlsplit(str(response.url)).netloc or "the LMS"
                    raise LtiException(
                        f"the answer of {where} is more than {MAX_REPLY_BYTES // 1024} KB"
                    )
        response._content = bytes(body)
        response._content_consumed = True
        response.__class__ = _Answer
        return response


def session() -> requests.Session:
    """A session for pylti1p3's service calls whose every answer is read within bounds."""
    found = _Bounded()
    found.headers["User-Agent"] = "lockviz (LTI 1.3 tool)"
    return found
