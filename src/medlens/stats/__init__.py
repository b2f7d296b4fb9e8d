"""medlens.stats."""
