"""The client against recorded server responses (vLLM shapes, odd error bodies, empty answers).

A real ``SlotClient`` (and where it matters the real dispatcher and completions store) talks
real HTTP to :class:`~model_foundry_tests.replay_server.ReplayServer` on a loopback port.

What the unit, integration and system tests of ``lib/slots/test_client_replay.py`` share."""

from __future__ import annotations

CHAT = "/v1/chat/completions"


MSG = [{"role": "user", "content": "what is two plus two?"}]


BLANK_BODIES = [
    {"error": {"message": " "}},
    {"error": {"message": ""}},
    {"error": {"message": "\n\t\n"}},
    {"object": "error", "message": None, "type": "BadRequestError", "code": 400},
    {"error": {"message": 42}},
    {"error": {"message": {"nested": [1, 2]}}},
    {"error": []},
    {},
    [],
    " ",
    "",
    None,
]


TRANSLATE = {"source_lang": "English", "target_lang": "Japanese"}


INSTRUCTION = (
    "Translate the user's English text into Japanese. Reply with the translation only, no notes."
)


LLAMA_CPP_TOO_LONG = (
    "request (2719 tokens) exceeds the available context size (1024 tokens), try increasing it"
)
