"""Headless Chromium for the HTML tests: skip when it is absent; browse a page and dump its DOM,
or drive it through Selenium (the viewer's pages: filters, paging, timings)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


@contextmanager
def chrome_driver(profile: Path) -> Iterator[Any]:
    """A Selenium session in headless Chromium (skipped without Chromium or its driver)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, driver = chromium(), shutil.which("chromedriver")
    if driver is None:
        pytest.skip("chromedriver is not installed (Debian package chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update",
                     "--window-size=1400,1000", f"--user-data-dir={profile}"):  # fmt: skip
        options.add_argument(argument)
    session = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    try:
        yield session
    finally:
        session.quit()
