"""The search teacher: KenLM fluency (`lm`), MiniLM similarity and the learned estimate (`similarity`),
the two-stage search (`search`), its resumable, sharded output (`shards`), and all of it wired in one call
(`build.build_teacher`)."""
