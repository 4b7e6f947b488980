"""Data acquisition: every raw input from its public origin (the manifest), checked, and derived into the files a
profile reads."""
