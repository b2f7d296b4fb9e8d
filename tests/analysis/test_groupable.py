"""`--by` lists and accepts the fields worth a table: no ids, paths, JSON columns, nor a native
name that only repeats a canonical axis (GMAI's two granularity columns)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from medlens.analysis.groupable import check_by_axes, listed_axes
from medlens.cli import app
from medlens.core.errors import SpecError


def column(values: list[str]) -> np.ndarray:
    return np.array(values, dtype=object)


N = 40
META = {
    "granularity": column(["box", "image"] * (N // 2)),
    "perceptual granularity": column(["Box Level", "Image Level"] * (N // 2)),
    "modality": column(["CT", "MR", "US", "CT"] * (N // 4)),
    "qid": column([str(i % 20) for i in range(N)]),
    "img_id": column([str(i % 10) for i in range(N)]),
    "source_row": column([str(i % 5) for i in range(N)]),
    "organ_boxes": column(['{"liver": [1, 2, 3, 4]}'] * N),
    "image_path": column([f"imgs/{i}.png" for i in range(N)]),
    "image_id": column([str(i) for i in range(N)]),
    "organ": column(["liver", "lung", "heart", "kidney", "lung"] * (N // 5)),
}


def test_the_message_lists_one_name_per_grouping_and_no_ids() -> None:
    assert listed_axes(META) == ["modality", "granularity", "organ"]


@pytest.mark.parametrize(
    "axis", ["qid", "img_id", "source_row", "organ_boxes", "image_path", "image_id"]
)
def test_per_item_fields_are_refused_with_a_reason(axis: str) -> None:
    with pytest.raises(SpecError, match=f"'{axis}' holds an id, a path or JSON per item"):
        check_by_axes([axis], META)


def test_useful_axes_pass_and_a_typo_lists_them() -> None:
    check_by_axes(["organ", "perceptual granularity"], META)  # a repeat still groups
    with pytest.raises(
        SpecError, match=r"unknown axis 'organs' \(known axes: modality, granularity, organ\)"
    ):
        check_by_axes(["organs"], META)


def test_slice_on_slake_neither_lists_nor_groups_by_ids(tmp_path: Path) -> None:
    from data_paths import realdata_dir

    run = named_run(f"slake:{realdata_dir('slake')}", "random", tmp_path, "s", "--limit", "60")
    typo = CliRunner().invoke(app, ["slice", str(run), "--by", "nope"])
    assert typo.exit_code == 2
    known = typo.output.split("known axes: ")[1]
    for field in ("img_id", "qid", "organ_boxes", "img_name"):
        assert field not in known, known
    refused = CliRunner().invoke(app, ["slice", str(run), "--by", "qid"])
    assert refused.exit_code == 2 and "'qid' holds an id" in refused.output
