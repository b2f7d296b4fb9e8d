"""One run: select items → build requests (prompt styles, strategies, exemplars, probes) → ask the
model (cache, local or Ray executor) → record; the dry run. Imports ``models`` and below; the
results.json builder is handed in by the caller."""
