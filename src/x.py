"""TODO docstring."""

from __future__ import annotations
