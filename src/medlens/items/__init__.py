"""Item science over many runs on one benchmark: the item bank (an item response model fitted
from the runs' scores), design-based samples of a benchmark drawn with the bank, full-benchmark
estimates of a run made on such a sample (AIPW with a design-based interval), and the item audit
(wrong keys, ambiguous, image-free, saturated, at-chance and misfitting items).

Sits above ``analysis`` and below ``board``: it reads runs (``runs``), writes subsets
(``builder``), and uses ``stats`` and ``scoring``; boards and reports show its estimates.
"""
