"""ASGI entry point: HTTP through Django (static files: WhiteNoise), WebSockets through Channels."""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lockviz.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from lockviz.consumers.lazyauth import LazyAuthMiddlewareStack  # noqa: E402
from lockviz.edge.bodylimit import BodyLimit  # noqa: E402
from lockviz.edge.proxies import ForwardedBy  # noqa: E402
from lockviz.live.broadcast import prompt_threads  # noqa: E402
from lockviz.routing import websocket_urlpatterns  # noqa: E402

router = ProtocolTypeRouter(
    {
        "http": BodyLimit(django_asgi_app),
        # The session says which browser is on the other end, and the teacher logged in there
        # (lockviz.accounts): a room's presenter, a run's owner, or not. Read when the consumer
        # asks, on its own trip to the database (lockviz.consumers.lazyauth).
        "websocket": AllowedHostsOriginValidator(
            LazyAuthMiddlewareStack(
                URLRouter(websocket_urlpatterns)  # type: ignore[arg-type]  # see lockviz.routing
            )
        ),
    }
)
# The proxy's word on the client's address and scheme, only from the proxies we were told of.
application = ForwardedBy(router, settings.TRUSTED_PROXIES)
prompt_threads()  # the loop fans out as soon as a message arrives (lockviz.live.broadcast)

# Everything loaded so far lives as long as the process: keep it out of the collector's way, or
# each full collection walks it and pauses every live stream for tens of milliseconds.
gc.collect()
gc.freeze()
