"""Scoring: ROUGE as the field reports it (`evaluate`), outputs released in another order put back in ours
(`released`), readability, and the paired significance tests (`significance`)."""
