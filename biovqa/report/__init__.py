"""Reports from scored runs: scorecards, per-component leaderboards, plots, cross-model analysis."""
