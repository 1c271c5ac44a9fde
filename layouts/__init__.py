"""ireeabi.layouts."""
