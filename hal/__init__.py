"""ireeabi.hal."""
