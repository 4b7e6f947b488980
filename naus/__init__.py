"""naus: Non-Autoregressive Unsupervised Summarization (Liu, Huang & Mou, ACL 2022)."""

__version__ = "0.1.0"


class NausError(Exception):
    """A user-facing error: the command line prints its message on one line and exits 2."""


class SettingError(NausError, ValueError):
    """A setting out of its range: a ValueError to the library's callers, one line on the command line."""


def __getattr__(name: str):
    """`naus.Summarizer` without importing torch for every `naus` subcommand."""
    if name == "Summarizer":
        from naus.summarizer import Summarizer

        return Summarizer
    raise AttributeError(f"module 'naus' has no attribute {name!r}")
