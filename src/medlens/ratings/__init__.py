"""Human ratings: blinded sheets out, filled sheets in, pairwise studies, error attribution, and
agreement of judges with people. Imports ``judges`` and below."""
