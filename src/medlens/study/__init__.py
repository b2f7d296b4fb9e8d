"""Studies: N models × M benchmarks as one resumable command (``medlens study STUDY.toml``).

Owns the study file (reading, checking and parsing it: an input edge like ``api.py``), the plan
(one ordinary run per model × benchmark under ``studies/<study>/runs/<model>--<benchmark>/``,
judge stages, boards), ``study.json`` (the plan, the file's hash, each run's and judge's
state), the scheduler (one lane per endpoint; runs on different endpoints at once; judges as
soon as their run finished), the budget (projected and measured cost) and the study's outputs
(boards, the models × benchmarks matrix, the index page). Models with ``sample = N`` run on a
design subset shared by all of them, drawn from an item bank fitted on the full runs
(``study.sampling``, through ``items``). Every run and judge is made through
``execution.evaluate`` and ``judges.stage`` exactly as ``run`` and ``judge`` make them, so every
other command works on a study's runs.

May import every package below it (``report`` and down); only ``cli`` imports it.
"""
