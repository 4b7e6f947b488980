"""The students: their vocabulary (`vocab`), networks (`model`), checkpoints (`checkpoint`), CTC training on
the search output (`train`; from files in one call, `build.train_student`) and the MiniLM initialisation
(`pretrained`)."""
