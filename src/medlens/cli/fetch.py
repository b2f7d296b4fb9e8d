"""`medlens fetch`: download a Hugging Face dataset repo into the standard Hub cache, on request."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from medlens.cli.common import command


@command("fetch", short_help="Download a Hub dataset, its hashes checked, for hfds:REPO.")
def fetch(
    repo: Annotated[str, typer.Argument(help="Dataset repo id, e.g. flaviagiammarino/vqa-rad")],
    revision: Annotated[
        str | None, typer.Option("--revision", help="Branch, tag or commit (default: main)")
    ] = None,
) -> None:
    """Download REPO through huggingface_hub (progress on stderr), check each file's sha256
    against the Hub's ETag, and print the snapshot's provenance as JSON; hfds:REPO then reads
    it offline."""
    from medlens.sources.hfds_hub import REPO_ID, locate

    if not REPO_ID.match(repo) or "/" not in repo:
        from medlens.core.errors import SpecError

        raise SpecError(f"fetch: {repo!r} is not a dataset repo id (owner/name)")
    location = locate(repo, revision, download=True)
    print(json.dumps(location.provenance(), indent=2))
