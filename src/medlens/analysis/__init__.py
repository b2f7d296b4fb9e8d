"""Aggregates of one or two runs: results.json, slices (the lexical tree), compare, references
and calibrate, cost, run listings. Imports ``ratings`` and below."""
