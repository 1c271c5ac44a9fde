"""ireeabi.cli."""
