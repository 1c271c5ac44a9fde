"""ireeabi.vm."""
