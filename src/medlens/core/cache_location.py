"""Where medlens keeps what it can always recompute: the response cache, image digests."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """$MEDLENS_CACHE, else the user cache directory."""
    configured = os.environ.get("MEDLENS_CACHE")
    if configured:
        return Path(configured)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("medlens"))
