"""naus: Non-Autoregressive Unsupervised Summarization (Liu, Huang & Mou, ACL 2022)."""

__version__ = "0.1.0"


class NausError(Exception):
    """A user-facing error: the command line prints its message on one line and exits 2."""
