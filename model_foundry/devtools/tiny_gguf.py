"""A tiny random-weight llama-architecture GGUF, written locally, for a real llama-server.

Model weights cannot be downloaded here, and the tests need none that make sense: they need
a file llama.cpp loads and serves like any chat model, with a tokenizer that handles any
text (Japanese included) and a long training context, so the server's own context limits,
tokenizer and slots are what the tests exercise.

The tokenizer is SentencePiece-style (``tokenizer.ggml.model = "llama"``) with all 256 byte
tokens as the fallback, every printable ASCII character and some common English pieces.
The output rows of the byte, control and end-of-sequence tokens are zero while the rest
are large: after the final norm the byte tokens' logits sit far below the best word piece,
so answers are readable ASCII and generation runs to ``max_tokens`` (the end token is
practically never sampled), which keeps the tests' answer lengths predictable.
"""

from __future__ import annotations

from pathlib import Path

# Written with the `gguf` package (PyPI, the llama.cpp project's own writer).
import gguf
import numpy as np

WORDS = [
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "that",
    "was",
    "for",
    "on",
    "are",
    "with",
    "as",
    "be",
    "at",
    "by",
    "this",
    "have",
    "from",
    "or",
    "one",
    "had",
    "not",
    "but",
    "what",
    "all",
    "were",
    "when",
    "we",
    "there",
    "can",
    "an",
    "your",
    "which",
    "their",
    "said",
    "if",
    "do",
    "will",
    "each",
    "about",
    "how",
    "up",
    "out",
    "them",
    "then",
    "she",
    "many",
    "some",
    "so",
    "these",
    "would",
    "other",
    "into",
    "has",
    "more",
    "her",
    "two",
    "like",
    "him",
    "see",
    "time",
    "could",
    "no",
    "make",
    "than",
    "first",
    "been",
    "its",
    "who",
    "now",
    "people",
    "my",
    "made",
    "over",
    "did",
    "down",
    "only",
    "way",
    "find",
    "use",
    "may",
    "water",
    "long",
    "little",
    "very",
    "after",
    "words",
    "called",
    "just",
    "where",
    "most",
    "know",
    "summary",
    "session",
    "agent",
    "user",
    "tool",
    "file",
    "code",
    "test",
    "data",
    "model",
    "slot",
    "event",
]

# ChatML, the format llama.cpp recognises by its markers in both template engines.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def vocabulary() -> tuple[list[str], list[float], list[int]]:
    """(tokens, scores, types): control tokens, 256 byte tokens, characters, word pieces."""
    tokens = ["<unk>", "<s>", "</s>"]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [gguf.TokenType.BYTE] * 256
    pieces = ["\u2581"] + [chr(c) for c in range(33, 127)]
    pieces += [f"\u2581{w}" for w in WORDS]
    tokens += pieces
    types += [gguf.TokenType.NORMAL] * len(pieces)
    # SentencePiece merges prefer higher scores: longer pieces win over their characters.
    scores = [0.0] * (3 + 256) + [float(len(p)) - 100.0 for p in pieces]
    return tokens, scores, [int(t) for t in types]


def write_tiny_gguf(
    path: str | Path,
    *,
    context_length: int = 16384,
    n_embd: int = 64,
    n_layer: int = 2,
    n_head: int = 4,
    n_ff: int = 128,
    seed: int = 0,
) -> Path:
    """Write the model to ``path`` (a small file) and return it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    tokens, scores, types = vocabulary()
    n_vocab = len(tokens)
    head_dim = n_embd // n_head

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("model-foundry tiny test model")
    w.add_context_length(context_length)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_rope_dimension_count(head_dim)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_vocab_size(n_vocab)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    w.add_chat_template(CHAT_TEMPLATE)

    def rand(*shape: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    # numpy shapes are (rows, cols) = ggml's dimensions reversed.
    w.add_tensor("token_embd.weight", rand(n_vocab, n_embd, scale=1.0))
    w.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    out = rand(n_vocab, n_embd, scale=1.0)
    out[: 3 + 256] = 0.0  # control and byte tokens: never the likeliest
    w.add_tensor("output.weight", out)
    for i in range(n_layer):
        p = f"blk.{i}"
        w.add_tensor(f"{p}.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        w.add_tensor(f"{p}.attn_q.weight", rand(n_embd, n_embd))
        w.add_tensor(f"{p}.attn_k.weight", rand(n_embd, n_embd))
        w.add_tensor(f"{p}.attn_v.weight", rand(n_embd, n_embd))
        w.add_tensor(f"{p}.attn_output.weight", rand(n_embd, n_embd))
        w.add_tensor(f"{p}.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        w.add_tensor(f"{p}.ffn_gate.weight", rand(n_ff, n_embd))
        w.add_tensor(f"{p}.ffn_up.weight", rand(n_ff, n_embd))
        w.add_tensor(f"{p}.ffn_down.weight", rand(n_embd, n_ff))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


__all__ = ["CHAT_TEMPLATE", "vocabulary", "write_tiny_gguf"]
