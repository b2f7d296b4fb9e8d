"""medlens.core."""
