"""Foundations every layer stands on: items and benchmarks, specs and their parser, the lazy
registry, errors, the record type, optional extras, TOML, the --where language, safe spreadsheets.
Imports nothing of medlens."""
