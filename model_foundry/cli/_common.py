"""What several verb groups share: the subparsers type, the NATS client from the env, the log
of a command that runs an asset's steps and a materialization's metadata as JSON."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from model_foundry.lib.nats.connection import NatsClient

# What ``add_subparsers`` returns; argparse names the class only privately.
Subparsers = argparse._SubParsersAction


def nats_client() -> NatsClient:
    """The NATS connection the environment names, imported only by the verbs that use it."""
    from model_foundry.lib.nats.connection import nats_client_from_env

    return nats_client_from_env()


def command_log(name: str) -> logging.Logger:
    """The logger a command that runs an asset's steps without Dagster logs its progress to:
    stderr, a line each, as Dagster's console logger would show them."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s - %(levelname)s - %(message)s", stream=sys.stderr
    )
    return logging.getLogger(name)


def plain_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A materialization's metadata as the JSON line the CLI prints: the plain values, without
    the tables the UI draws (``dagster/column_schema``, a ``preview``), which are no JSON."""
    import dagster as dg

    found = {k: getattr(v, "value", v) for k, v in metadata.items()}
    return {
        k: v
        for k, v in found.items()
        if not isinstance(v, dg.TableSchema | dg.TableMetadataValue)
        and not (isinstance(v, list) and v and isinstance(v[0], dg.TableRecord))
    }
