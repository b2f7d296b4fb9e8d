"""Headless Chromium for the HTML tests: skip when it is absent; browse a page and dump its DOM."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("headless Chromium is not installed (Debian packages chromium, chromium-driver)")


def browse(page: Path, profile: Path, *mode: str) -> subprocess.CompletedProcess[str]:
    command = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", f"--user-data-dir={profile}",
        "--virtual-time-budget=5000", *mode, page.as_uri(),
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
