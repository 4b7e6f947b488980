"""Scoring: ROUGE as the field reports it (`evaluate`), the paired significance tests (`significance`),
and the peers' released outputs rescored beside ours (`peers`)."""
