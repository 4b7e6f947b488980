"""The students: their vocabulary (`vocab`), networks (`model`), checkpoints (`checkpoint`), CTC training on
the search output (`train`) and the MiniLM initialisation (`pretrained`)."""
