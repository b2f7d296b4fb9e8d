"""Serve the viewer with uvicorn on the loopback address only, until Ctrl-C."""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence

from medlens.core.errors import MedlensError
from medlens.report.viewer.catalog import Group
from medlens.report.viewer.links import HOST


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0: any free port); a busy port is a user error."""
    if not 0 <= port <= 65535:
        raise MedlensError(f"--port {port}: expected 0 (any free port) to 65535")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise MedlensError(
            f"--port {port}: cannot listen on {HOST}:{port} ({exc.strerror or exc}); "
            "give another --port, or 0 for any free one"
        ) from None
    sock.listen(128)
    return sock


def serve(groups: Sequence[Group], port: int, on_ready: Callable[[str], None]) -> None:
    """Serve `groups` on 127.0.0.1:`port`; `on_ready` gets the address once it listens."""
    import uvicorn

    from medlens.report.viewer.app import viewer_app

    sock = bind(port)
    url = f"http://{HOST}:{sock.getsockname()[1]}/"
    config = uvicorn.Config(
        viewer_app(groups), log_level="warning", access_log=False, lifespan="off",
        server_header=False,
    )  # fmt: skip
    server = uvicorn.Server(config)
    on_ready(url)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
