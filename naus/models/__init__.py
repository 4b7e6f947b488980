"""Where the student that ships with naus lies: its checkpoint and model card (`naus.pipeline.bundle` makes them,
`naus.Summarizer.from_pretrained()` reads them)."""

from pathlib import Path

BUNDLED_DIR = Path(__file__).resolve().parent
BUNDLED, CARD = BUNDLED_DIR / "gigaword.pt", BUNDLED_DIR / "MODEL_CARD.md"
BUNDLED_ENCODER = BUNDLED_DIR / "gigaword-encoder.safetensors"  # where the student learned on a distilled encoder
