"""medlens.execution."""
