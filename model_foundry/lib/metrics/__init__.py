"""The Prometheus exporter behind ``model-foundry metrics``: figures, readers, collector."""
