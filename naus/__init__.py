"""naus: Non-Autoregressive Unsupervised Summarization (Liu, Huang & Mou, ACL 2022).

The data flows one way through a package per stage: `teacher` (the search), `student` (its CTC students),
`decoding`, `evaluation`, `report`; the modules at the top are what every stage uses (settings and
their schema, the registries, file names and file handling, the command line)."""

__version__ = "0.1.0"


class NausError(Exception):
    """A user-facing error: the command line prints its message on one line and exits 2."""


class SettingError(NausError, ValueError):
    """A setting out of its range: a ValueError to the library's callers, one line on the command line."""


def __getattr__(name: str):
    """`naus.Summarizer` without importing torch for every `naus` subcommand."""
    if name == "Summarizer":
        from naus.decoding.summarizer import Summarizer

        return Summarizer
    raise AttributeError(f"module 'naus' has no attribute {name!r}")
