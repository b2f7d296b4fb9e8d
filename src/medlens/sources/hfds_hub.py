"""Where an ``hfds:`` argument lives: a local folder, or a dataset repo in the Hugging Face cache.

A repo id (``flaviagiammarino/vqa-rad``) is resolved by ``huggingface_hub.snapshot_download``
with ``local_files_only=True`` unless the user asked for a download (``?download=1`` or
``medlens fetch``): the cache location (``HF_HUB_CACHE`` / ``HF_HOME``), ``refs/<branch>`` →
``snapshots/<commit>``, a commit hash, and ``HF_HUB_OFFLINE=1`` are all huggingface_hub's own
rules. A repo or revision that is not cached is one line naming the cache folder searched and
what it does hold.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, SpecError

REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class Location:
    """A resolved ``hfds:`` argument."""

    root: Path
    """The folder read: a snapshot in the Hub cache, or the user's folder."""
    repo: str | None = None
    """The repo id, when the argument was one."""
    revision: str | None = None
    """The revision asked for (a branch, tag or commit); None = the default branch."""
    commit: str | None = None
    """The commit the snapshot belongs to (the snapshot folder's name)."""
    downloaded: bool = False
    verified: int | None = None
    """Files whose sha256 was checked against the Hub's ETag after a download."""

    def provenance(self) -> dict[str, Any]:
        out: dict[str, Any] = {"root": str(self.root)}
        if self.repo is not None:
            out.update(repo=self.repo, revision=self.revision or "main", commit=self.commit)
        elif self.commit is not None:
            out["commit"] = self.commit
        if self.downloaded:
            out.update(downloaded=True, verified_files=self.verified)
        return out


def locate(argument: str, revision: str | None, download: bool) -> Location:
    """A folder as given, else a repo id from the Hub cache (downloaded only when asked)."""
    if not argument:
        raise SpecError("hfds: give a repo id or a folder, e.g. hfds:flaviagiammarino/vqa-rad")
    path = Path(argument).expanduser()
    if path.exists():
        if not path.is_dir():
            raise InputError(path, None, "hfds expects a folder (a cloned dataset or save_to_disk)")
        if revision and not _snapshot_commit(path.resolve()):
            raise SpecError(
                f"hfds:{argument}: revision={revision} applies to a repo id, not a folder"
            )
        root = path.resolve()
        return Location(root=root, commit=_snapshot_commit(root))
    if not REPO_ID.match(argument) or argument.startswith((".", "/", "~")):
        raise InputError(path, None, "no such folder, and not a Hugging Face repo id (owner/name)")
    return _from_cache(argument, revision, download)


def _snapshot_commit(root: Path) -> str | None:
    """The commit of a Hub-cache snapshot folder (``…/snapshots/<40 hex>``), else None."""
    if root.parent.name == "snapshots" and COMMIT.match(root.name):
        return root.name
    return None


def _from_cache(repo: str, revision: str | None, download: bool) -> Location:
    from medlens.core.extras import require_feature

    require_feature(f"hfds:{repo} (a repo of the Hugging Face Hub)", "hub")
    import huggingface_hub
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        folder = huggingface_hub.snapshot_download(
            repo, repo_type="dataset", revision=revision, local_files_only=not download
        )
    except LocalEntryNotFoundError:
        raise InputError(cache_folder(repo), None, not_cached(repo, revision, download)) from None
    except (HfHubHTTPError, OSError, ValueError) as exc:
        raise InputError(repo, None, f"download failed ({_first_line(exc)})") from None
    except Exception as exc:  # a malformed Hub answer fails inside huggingface_hub
        raise InputError(
            repo, None, f"download failed ({type(exc).__name__}: {_first_line(exc)})"
        ) from None
    root = Path(folder)
    verified = verify_snapshot(root, repo) if download else None
    return Location(root=root, repo=repo, revision=revision, commit=_snapshot_commit(root) or root.name,
                    downloaded=download, verified=verified)  # fmt: skip


def verify_snapshot(root: Path, repo: str) -> int:
    """Check every file of a downloaded snapshot against what the Hub reported: huggingface_hub
    names each blob by the ETag the Hub sent, which is the file's sha256 for LFS files; a blob
    named by a sha256 must hash to it. Returns the number of files checked."""
    import hashlib

    checked = 0
    for link in sorted(p for p in root.rglob("*") if p.is_file()):
        blob = Path(os.path.realpath(link))
        if not re.fullmatch(r"[0-9a-f]{64}", blob.name):
            continue
        digest = hashlib.sha256()
        with open(blob, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        if digest.hexdigest() != blob.name:
            raise InputError(link, None, f"downloaded from {repo} but its sha256 is not the "
                             f"{blob.name[:12]}… the Hub reported; delete it and fetch again")  # fmt: skip
        checked += 1
    return checked


def cache_folder(repo: str) -> Path:
    """The Hub cache folder of a dataset repo (whether or not it exists)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE) / ("datasets--" + repo.replace("/", "--"))


def cached_revisions(repo: str) -> list[str]:
    """Branch names under ``refs/`` and commits under ``snapshots/`` of a cached repo."""
    folder = cache_folder(repo)
    refs = folder / "refs"
    names = (
        sorted(p.relative_to(refs).as_posix() for p in refs.rglob("*") if p.is_file())
        if refs.is_dir()
        else []
    )
    snapshots = folder / "snapshots"
    commits = sorted(p.name for p in snapshots.iterdir()) if snapshots.is_dir() else []
    return names + [c[:12] for c in commits]


def cached_repos() -> list[str]:
    """Dataset repo ids in the Hub cache."""
    from huggingface_hub import constants

    cache = Path(constants.HF_HUB_CACHE)
    if not cache.is_dir():
        return []
    return sorted(
        p.name[len("datasets--") :].replace("--", "/")
        for p in cache.iterdir()
        if p.name.startswith("datasets--")
    )


def not_cached(repo: str, revision: str | None, download: bool) -> str:
    """Why a repo id did not resolve, and what the cache holds instead."""
    wanted = f"revision {revision!r}" if revision else "its default branch (main)"
    if cache_folder(repo).is_dir():
        held = ", ".join(cached_revisions(repo)) or "nothing"
        found = f"{repo} is cached but not at {wanted} (cached: {held})"
    else:
        others = ", ".join(cached_repos()) or "none"
        found = (
            f"dataset repo {repo} is not in the Hugging Face cache (cached dataset repos: {others})"
        )
    if download:
        return f"{found}; the Hub cannot be reached (HF_HUB_OFFLINE is set or no network)"
    return f"{found}; download it with `medlens fetch {repo}` or add ?download=1"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
