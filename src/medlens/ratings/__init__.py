"""medlens.ratings."""
