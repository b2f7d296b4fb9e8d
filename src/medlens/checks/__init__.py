"""Benchmark hygiene: the integrity checklist, protocol checks, readiness (DAIMS) and the
contamination audit. Imports ``execution`` and below."""
