"""model-foundry: NATS JetStream events into DuckDB, prompts to GPU model slots, datasets out."""

__version__ = "0.1.0"
