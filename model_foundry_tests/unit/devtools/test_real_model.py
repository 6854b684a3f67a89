"""The real-model cache's stamp: a GGUF is used only when it is whole, without rehashing it
every session, and a native build's crash is named in one sentence."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from model_foundry.devtools import real_model


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MODEL_FOUNDRY_CACHE", str(tmp_path))
    return tmp_path


def _cache_a_file(data: bytes, *, stamped_digest: str = real_model.MODEL_SHA256) -> Path:
    model = real_model.cached_model()
    model.parent.mkdir(parents=True, exist_ok=True)
    model.write_bytes(data)
    stamp = model.with_name(model.name + ".sha256")
    stamp.write_text(f"{stamped_digest} {len(data)}\n")
    return model


def test_a_stamped_file_of_the_stamped_size_is_found(cache: Path) -> None:
    model = _cache_a_file(b"GGUF" * 100)
    assert real_model.find_model() == model


def test_a_truncated_file_is_not_found(cache: Path) -> None:
    model = _cache_a_file(b"GGUF" * 100)
    with model.open("r+b") as file:
        file.truncate(200)
    assert real_model.find_model() is None


def test_a_file_without_its_stamp_or_with_another_digest_is_not_found(cache: Path) -> None:
    model = _cache_a_file(b"GGUF" * 100, stamped_digest="0" * 64)
    assert real_model.find_model() is None
    model.with_name(model.name + ".sha256").unlink()
    assert real_model.find_model() is None


def test_a_killed_server_is_one_sentence_naming_the_binary_and_the_signal() -> None:
    binary = Path("/opt/native/llama-server")
    sentence = real_model._death(binary, -signal.SIGSEGV)
    assert sentence.startswith(f"{binary} was killed by SIGSEGV")
    assert "GGML_NATIVE" in sentence
    assert "\n" not in sentence
