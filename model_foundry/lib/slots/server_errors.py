"""What a slot's error message says about the slot: pure parsing of server error texts.

The context window a slot really has is stated in the error it returns when a prompt does
not fit. Each runtime knows its own wording (``runtimes/vllm.py``, ``runtimes/llamacpp.py``);
an error is read with every registered runtime's patterns, since a proxy or a fallback may
pass on another server's message.
"""

from __future__ import annotations

from model_foundry.lib.slots.runtimes import context_limit_from_error

__all__ = ["context_limit_from_error"]
