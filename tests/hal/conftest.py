"""The HAL tests' fixtures (tests/hal_session.py)."""
from hal_session import legacy_loader_session, session  # noqa: F401  (pytest fixtures)
