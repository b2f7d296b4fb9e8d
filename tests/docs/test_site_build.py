"""The site's strict build refuses a dead link and a page left out of the navigation: a tiny
docs tree built with the validation settings of the project's own mkdocs.yml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from data_paths import REPO_ROOT

yaml = pytest.importorskip("yaml")
pytest.importorskip("mkdocs")


def _site(
    tmp_path: Path, pages: dict[str, str], nav: list[str]
) -> subprocess.CompletedProcess[str]:
    """Build `pages` with the project's validation rules, strict; the completed process."""
    ours = yaml.safe_load((REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config = {"site_name": "tiny", "strict": ours["strict"], "validation": ours["validation"],
              "nav": nav, "theme": {"name": "mkdocs"}}  # fmt: skip
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    for name, text in pages.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-f", str(tmp_path / "mkdocs.yml"),
         "-d", str(tmp_path / "site")],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip


def test_the_tiny_site_builds_when_every_link_resolves(tmp_path: Path) -> None:
    pages = {"index.md": "# Home\n\n[Runs](runs.md)\n", "runs.md": "# Runs\n"}
    done = _site(tmp_path, pages, ["index.md", "runs.md"])
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "runs" / "index.html").is_file()


def test_a_dead_link_fails_the_strict_build(tmp_path: Path) -> None:
    pages = {"index.md": "# Home\n\n[Runs](runs.md) and [gone](reference/cli/gone.md)\n",
             "runs.md": "# Runs\n"}  # fmt: skip
    done = _site(tmp_path, pages, ["index.md", "runs.md"])
    assert done.returncode != 0
    assert "reference/cli/gone.md" in done.stderr


def test_a_page_missing_from_the_navigation_fails_the_strict_build(tmp_path: Path) -> None:
    pages = {"index.md": "# Home\n", "runs.md": "# Runs\n", "orphan.md": "# Orphan\n"}
    done = _site(tmp_path, pages, ["index.md", "runs.md"])
    assert done.returncode != 0
    assert "orphan.md" in done.stderr


def test_a_dead_anchor_fails_the_strict_build(tmp_path: Path) -> None:
    pages = {"index.md": "# Home\n\n[Runs](runs.md#no-such-section)\n", "runs.md": "# Runs\n"}
    done = _site(tmp_path, pages, ["index.md", "runs.md"])
    assert done.returncode != 0
    assert "no-such-section" in done.stderr
