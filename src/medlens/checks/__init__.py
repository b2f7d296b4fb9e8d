"""medlens.checks."""
