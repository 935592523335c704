"""``python -m builder`` entry point."""

from builder.cli import app

app()
