"""The search teacher: KenLM fluency (`lm`), MiniLM similarity and the learned estimate (`similarity`),
the two-stage search (`search`) and its resumable, sharded output (`shards`)."""
