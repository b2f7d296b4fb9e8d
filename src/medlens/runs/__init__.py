"""The run directory and nothing else: run.json, items.jsonl, the append-only JSON-lines primitive,
the writer's lock, health, provenance and the specs a run recorded. Imports ``scoring`` and below."""
