"""What several verb groups share: the subparsers type and the NATS client from the env."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from model_foundry.lib.nats.connection import NatsClient

# What ``add_subparsers`` returns; argparse names the class only privately.
Subparsers = argparse._SubParsersAction


def nats_client() -> NatsClient:
    """The NATS connection the environment names, imported only by the verbs that use it."""
    from model_foundry.lib.nats.connection import nats_client_from_env

    return nats_client_from_env()
