"""The project's scripts that are not the naus package: the GPU lease shuttle (`scripts.lease`)."""
