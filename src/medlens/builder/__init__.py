"""medlens.builder."""
