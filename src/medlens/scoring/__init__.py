"""Scores of answers: per-item scores and metrics, chance levels, and the corpus metrics and
protocol sections (MMBU, variant calling) of a run's results. Pure functions of items and
records; imports ``extract``, ``sources``, ``stats`` and ``core``."""
