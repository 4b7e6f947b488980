"""The GPU lease shuttle, a tool beside the library: a profile's students moved to a lent GPU node and back
(`gpu-node.sh`: `pack` here, `run` there, `finish` here), what a run reads and brings back (`archive`), the trimmed
MiniLM and the wheels the node lacks (`pack`). It imports naus; naus never imports it.

    python -m scripts.lease import-run --profile gigaword-sample gpu-run.tar.gz
    python -m scripts.lease run-paths outputs --profile gigaword-sample
"""
