"""medlens.scoring.item_scores."""
