"""Ordinary words and hard negatives around the planted values."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from model_foundry.devtools.secrets_corpus.model import HEX
from model_foundry.devtools.secrets_corpus.values import random_part

PHRASES: tuple[str, ...] = (
    "nightly export to the warehouse",
    "staging cluster in the Frankfurt region",
    "rotate this after the quarterly demo",
    "owned by the platform team",
    "see the runbook before touching this",
    "used by the billing worker",
    "retry three times before paging anyone",
    "moved from the old host last spring",
    "only the deploy job reads this file",
    "keep this file out of version control",
    "ask Dana before changing the quota",
    "the integration tests need this",
    "the reporting dashboard refreshes every hour",
    "local development only",
    "copied from the shared team notes",
    "the webhook fires on every merge",
    "backups run at two in the morning",
    "timeouts are in milliseconds",
    "the cache warms up right after a deploy",
    "this replaced the legacy cron job",
    "customer invoices are generated on Mondays",
    "the mobile app talks to this service",
    "search indexing happens in the background",
    "we moved this from the wiki last week",
    "the support team uses this sandbox",
    "log retention is thirty days",
    "the import script reads from this bucket",
    "feature flags are evaluated at startup",
    "the old endpoint is deprecated",
    "load tests run against a copy of production",
    "the analytics pipeline starts at midnight",
    "translations are synced from the vendor",
    "the release train leaves on Thursday",
    "image thumbnails are cached for a day",
    "the queue drains within a few minutes",
    "error budgets are reviewed every sprint",
    "the marketing site is deployed separately",
    "payroll exports must stay in the EU",
    "the staging data is refreshed weekly",
    "password resets go through the help desk",
)

USERS = ("deploy", "ci-bot", "app", "svc_reports", "dana", "etl_writer", "grafana", "builder")
HOSTS = (
    "db-primary.internal",
    "pg.staging.acme.test",
    "mysql-01.prod.acme.test",
    "cache.acme.test",
    "mq.acme.test",
    "10.20.3.14",
    "warehouse.acme.test",
    "reports.acme.test",
)
DBS = ("orders", "billing", "analytics", "inventory", "app_production", "crm")
PLACEHOLDERS = (
    "<your-token>",
    "YOUR_API_KEY",
    "changeme",
    "xxxxxxxxxxxx",
    "${DB_PASSWORD}",
    "********",
    "REPLACE_ME",
    "<password>",
    "{{ api_token }}",
    "$(cat /run/secrets/api_token)",
)
# Placeholders that look like a scrubber's own mask: recorded with their key, not alone.
_MASK_LIKE = {"xxxxxxxxxxxx", "********", "<password>", "<your-token>"}
PLAIN_TEXTS = (
    "hello from the build bot",
    "release notes for version two",
    "this is not a secret at all",
    "weekly report is ready",
)


def _uuid(rng: random.Random) -> str:
    h = random_part(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def _timestamp(rng: random.Random) -> str:
    t = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.randint(0, 40_000_000))
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")
