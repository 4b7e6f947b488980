"""What a decoding costs: seconds a sentence at a batch size and one sentence at a time, the model's forward
pass apart, and, for a student on frozen MiniLM states, what computing those states costs."""

from __future__ import annotations

import torch

from naus.device import device_label
from naus.student.frozen import seconds_per_sentence


def time_decoding(summarizer, sentences: list[str], options: dict, batch_size: int, timing_passes: int,
                  batch1_samples: int) -> dict:
    """The median of `timing_passes` passes at the batch size, and at batch 1 on one thread over the first
    `batch1_samples` sentences, each after an untimed warm-up (compiled decoders and device caches load once per
    process, not per sentence)."""
    given = options.get("states")
    top = summarizer.encoder  # the states of new text are computed by the encoder the student learned on

    def first(count: int) -> dict:
        return options if given is None else {**options, "states": given.take(range(min(count, len(given))))}

    def passes(items: list[str], batch_size: int, count: int) -> dict:
        summarizer.summarize(items[: 2 * batch_size], batch_size=batch_size, **first(2 * batch_size))
        runs = []
        for _ in range(count):
            summarizer.summarize(items, batch_size=batch_size, **first(len(items)))
            runs.append(summarizer.last_timing)
        return sorted(runs, key=lambda run: run["seconds"])[(len(runs) - 1) // 2]

    timing = passes(sentences, batch_size, timing_passes)
    # states read from a file: what computing them costs is timed too, and counted
    states = {} if given is None else {"states_seconds_per_sample": seconds_per_sentence(tuple(sentences), top=top)}
    samples = max(timing["samples"], 1)
    report = {
        "method": timing["method"], "beam_size": options["beam_size"], "batch_size": batch_size,
        "device": device_label(summarizer.device), "threads": torch.get_num_threads(), "samples": timing["samples"],
        "passes": timing_passes, "seconds_per_sample": timing["seconds"] / samples + sum(states.values()),
        "forward_seconds_per_sample": timing["forward_seconds"] / samples + sum(states.values()), **states,
    }
    if batch1_samples:  # one sentence at a time on one thread: as the teacher searches, so that the two compare
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            once = passes(sentences[: batch1_samples], 1, timing_passes)
            alone = 0.0 if given is None else seconds_per_sentence(tuple(sentences[: batch1_samples]), True, top)
        finally:
            torch.set_num_threads(threads)
        report.update(batch1_samples=once["samples"], batch1_threads=1,
                      batch1_seconds_per_sample=once["seconds"] / max(once["samples"], 1) + alone)
    return report
