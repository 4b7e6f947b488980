"""A student's folder: the files `naus train` writes there (the pipeline's paths, naus.pipeline.layout, name them
from here)."""

BEST, LAST, HISTORY, VOCAB = "best.pt", "last.pt", "history.json", "vocab.txt"
STUDENT_NAMES = (BEST, LAST, HISTORY, VOCAB)
STALE_LAST = "last.stale.pt"  # a last.pt of other data or settings, set aside by `naus train --restart`
