"""ireeabi.abi."""
