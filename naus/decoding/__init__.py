"""Decoding a student's outputs, a module per decoder: for CTC, greedy (+ truncation), prefix beam search,
length control in words and in characters, and for copy heads the same in the source's order (`source_order`);
for the encoder-decoders, `encoder_decoder`; what they share is in `common`, each slot's best words in `topk`.
The decoding methods a user picks are declared in `naus.methods`. The names below are the package's API."""

from naus.decoding.align import forced_alignment
from naus.decoding.beam import ctc_beam_search, ctc_beam_search_batch
from naus.decoding.char_control import char_control_batch
from naus.decoding.common import BEAM, NEG_INF, Batch, Hypothesis, reduce_path, slot_log_norm, word_slots
from naus.decoding.greedy import greedy, greedy_batch, truncate
from naus.decoding.length_control import length_control, length_control_batch
from naus.decoding.source_order import source_order_batch
from naus.decoding.topk import top_k_slots
