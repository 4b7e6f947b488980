"""The search teacher: KenLM fluency (`lm`), MiniLM similarity and the learned estimate (`similarity`),
the two-stage search (`search`), its resumable, sharded output (`shards`), and all of it wired in one call
(`build.build_teacher`)."""


def __getattr__(name: str):
    """`naus.teacher.build_teacher` and `search_file` without importing numba and KenLM for every submodule."""
    if name in ("build_teacher", "search_file"):
        from naus.teacher import build

        return getattr(build, name)
    raise AttributeError(f"module 'naus.teacher' has no attribute {name!r}")
