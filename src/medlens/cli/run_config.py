"""`medlens run --config eval.toml`: a TOML file of the run's options; flags on the command line
win. Keys are the long option names (`max-error-rate` or `max_error_rate`), so every option a
command gains is configurable without a change here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from medlens.core.errors import InputError

NOT_CONFIGURABLE = frozenset({"config", "dry_run", "price"})


def read_config(path: Path) -> dict[str, Any]:
    from medlens.core.tomlfile import tomllib

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise InputError(path, None, f"cannot read the config file ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, None, f"not valid TOML ({exc})") from None


def merged_options(ctx: typer.Context, path: Path | None) -> dict[str, Any]:
    """The command's parameters, with values from the config file where no flag was given."""
    values = dict(ctx.params)
    if path is None:
        return values
    params = {p.name: p for p in ctx.command.params if p.name and p.name not in NOT_CONFIGURABLE}
    for key, raw in read_config(path).items():
        name = key.replace("-", "_")
        param = params.get(name)
        if param is None:
            known = ", ".join(sorted(n.replace("_", "-") for n in params))
            raise InputError(
                path, f"key {key!r}", f"not an option of this command (known: {known})"
            )
        source = ctx.get_parameter_source(name)
        if source is not None and source.name == "COMMANDLINE":
            continue  # a flag overrides the file
        if getattr(param, "multiple", False) and isinstance(raw, str):
            raw = [raw]  # `model = "random"` for an option that may be repeated on the command line
        try:
            values[name] = param.process_value(ctx, raw)
        except Exception as exc:  # the parameter type's own message (typer.BadParameter …)
            message = getattr(exc, "message", None) or str(exc)
            raise InputError(path, f"key {key!r}", message) from None
    return values
