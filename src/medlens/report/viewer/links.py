"""Addresses of the viewer's pages, for the HTML report and board that link to them."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote, urlencode

DEFAULT_PORT = 8765
HOST = "127.0.0.1"
VIEWER_URL = f"http://{HOST}:{DEFAULT_PORT}"
"""Where `medlens view` listens unless given --port (the report's links assume it)."""
AXIS_PREFIX = "a."
"""Query keys of axis filters (``a.modality=CT``), apart from the viewer's own keys."""


def item_path(item_id: str) -> str:
    return "/item/" + quote(item_id, safe="")


def item_url(item_id: str, base: str = VIEWER_URL) -> str:
    """The viewer page of one item (every run's answer to it side by side)."""
    return base + item_path(item_id)


def list_url(axes: Mapping[str, str], base: str = VIEWER_URL, **query: str) -> str:
    """The viewer's item list filtered by axis values (and kind, outcome, of, q …)."""
    pairs = [(AXIS_PREFIX + axis, value) for axis, value in axes.items()]
    pairs += [(key, value) for key, value in query.items() if value]
    return base + "/" + (("?" + urlencode(pairs)) if pairs else "")
