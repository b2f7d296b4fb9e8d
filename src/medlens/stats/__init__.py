"""Statistics, numbers in and numbers out: intervals, cluster units and bootstraps, paired tests,
significance, multiplicity, agreement, the small-cell rule. Imports only ``core``; knows no run,
item or record."""
