"""The students: their vocabulary (`vocab`), networks (`model`), checkpoints (`checkpoint`), CTC training on
the search output (`train`; from files in one call, `build.train_student`) and the MiniLM initialisation
(`pretrained`)."""


def __getattr__(name: str):
    """`naus.student.train_student` without importing torch for every submodule."""
    if name == "train_student":
        from naus.student.build import train_student

        return train_student
    raise AttributeError(f"module 'naus.student' has no attribute {name!r}")
