"""Channels' WebsocketCommunicator for the tests, patient: a read waits up to :data:`PATIENT_S`
unless told otherwise, not Channels' 1 s.

A stream's first message comes after its consumer joined the run's group on the channel layer's
Redis and read the database; ``make test`` runs four test processes beside browsers and live
labs on two cores, and that once took longer than a second (CI: a socket-share test timed out
on its first status). A test that waits for a message waits for what it asserts, not for a
machine's speed; one that asserts *nothing* comes still says how long with ``receive_nothing``.
"""

from __future__ import annotations

from typing import Any

from channels.testing import WebsocketCommunicator as ChannelsCommunicator

PATIENT_S = 10.0


class WebsocketCommunicator(ChannelsCommunicator):
    async def disconnect(self, code: int = 1000, timeout: float = PATIENT_S) -> None:
        """Closed, and the consumer's ``disconnect`` let finish (Channels cancels it after 1 s:
        on a loaded machine what it gives back was then never given back)."""
        await super().disconnect(code, timeout)

    async def receive_output(self, timeout: float = PATIENT_S) -> Any:
        return await super().receive_output(timeout)

    async def receive_from(self, timeout: float = PATIENT_S) -> Any:
        return await super().receive_from(timeout)

    async def receive_json_from(self, timeout: float = PATIENT_S) -> Any:
        return await super().receive_json_from(timeout)
