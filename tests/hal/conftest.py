"""The HAL tests' fixtures (tests/support/hal_session.py)."""
from support.hal_session import legacy_loader_session, session  # noqa: F401  (pytest fixtures)
