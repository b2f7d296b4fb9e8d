"""medlens.analysis."""
