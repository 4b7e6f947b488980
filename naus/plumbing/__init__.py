"""Plumbing: files read and checked, outputs written whole, signals, progress lines, markup escaping, the provenance
kept beside outputs. Neither the method nor the pipeline; both import it."""
