"""Benchmarks made by medlens: labelled images → items, subsets of a benchmark (reading runs for
--drop-solved-by), unpacked TSVs, and the embedded demo (a source by its registry string).
Imports ``execution`` and below."""
