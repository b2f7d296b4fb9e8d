"""medlens.runs."""
