"""The inbox's durable pull consumers: a layout every supported nats-server keeps.

Each partition of the inbox (a contract subject) takes its own subject and its legacy name.
From nats-server 2.10 on, one consumer can filter both (``filter_subjects``). Older servers
accept that field and drop it: nats-server 2.9.10 (Debian 12) creates the consumer without
any filter, so it delivers every subject of the stream. So the layout is chosen by what the
server keeps, read back from the created consumer:

- ``filter_subjects`` kept: one consumer per partition, ``inbox_<subject>``;
- dropped: one consumer per subject name, ``inbox_<subject>`` and ``inbox_<legacy name>``,
  each with a single ``filter_subject`` (which every JetStream server keeps); the partition
  drains both.

Either way each stream message matches exactly one consumer. A consumer found without the
filter it needs (made by a 2.9 server from a plural filter) is replaced: what it acknowledged
is stored, so its replacements start after its acknowledgement floor.

JetStream never stops redelivering (``max_deliver`` -1): a message that cannot be stored
stays in the stream until the drain stores it or dead-letters it with the reason
(``lib/inbox/drain/commit.py``); a finite ``max_deliver`` would drop it without a trace.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, ConsumerInfo, DeliverPolicy
from nats.js.errors import NotFoundError

from model_foundry.lib.events import subjects_for
from model_foundry.lib.nats.errors import NatsLayoutError

log = logging.getLogger(__name__)

UNLIMITED_DELIVERIES = -1


def consumer_name(subject: str) -> str:
    """Durable name for a subject's consumer; NATS names may not contain dots."""
    return "inbox_" + subject.replace(".", "_")


@dataclass(frozen=True)
class ConsumerSettings:
    """What this resource asks of every consumer it creates."""

    ack_wait_s: float
    max_ack_pending: int


@dataclass(frozen=True)
class PartitionConsumers:
    """One partition's consumers as the server has them now."""

    subject: str
    # Durable names, the partition's own subject first.
    names: tuple[str, ...]
    # One consumer with filter_subjects (new servers), or one per subject name.
    plural: bool
    infos: dict[str, ConsumerInfo] = field(repr=False)
    changes: list[str] = field(default_factory=list)


def _filters(info: ConsumerInfo) -> frozenset[str]:
    config = info.config
    if config.filter_subjects:
        return frozenset(config.filter_subjects)
    if config.filter_subject:
        return frozenset([config.filter_subject])
    return frozenset()


def _config(
    name: str, filters: list[str], settings: ConsumerSettings, start_seq: int | None
) -> ConsumerConfig:
    return ConsumerConfig(
        durable_name=name,
        filter_subject=filters[0] if len(filters) == 1 else None,
        filter_subjects=filters if len(filters) > 1 else None,
        ack_policy=AckPolicy.EXPLICIT,
        deliver_policy=DeliverPolicy.BY_START_SEQUENCE if start_seq else DeliverPolicy.ALL,
        opt_start_seq=start_seq,
        ack_wait=settings.ack_wait_s,
        max_deliver=UNLIMITED_DELIVERIES,
        max_ack_pending=settings.max_ack_pending,
    )


async def _info(js: JetStreamContext, stream: str, name: str) -> ConsumerInfo | None:
    try:
        return await js.consumer_info(stream, name)
    except NotFoundError:
        return None


async def _retire(
    js: JetStreamContext, stream: str, info: ConsumerInfo, why: str, changes: list[str]
) -> int:
    """Delete a consumer; returns the first stream sequence it did not acknowledge."""
    floor = int(info.ack_floor.stream_seq or 0) if info.ack_floor else 0
    await js.delete_consumer(stream, info.name)
    changes.append(f"deleted consumer {info.name} ({why}); acknowledged up to seq {floor}")
    return floor + 1


async def _create(
    js: JetStreamContext,
    stream: str,
    name: str,
    filters: list[str],
    settings: ConsumerSettings,
    start_seq: int | None,
    changes: list[str],
) -> ConsumerInfo:
    info = await js.add_consumer(stream, _config(name, filters, settings, start_seq))
    start = f" from seq {start_seq}" if start_seq else ""
    changes.append(f"created consumer {name} ({', '.join(filters)}){start}")
    return info


async def _create_singles(
    js: JetStreamContext,
    stream: str,
    subjects: list[str],
    infos: dict[str, ConsumerInfo | None],
    settings: ConsumerSettings,
    start_seq: int | None,
    changes: list[str],
) -> dict[str, ConsumerInfo]:
    """One consumer per subject name, each filtering only that name; existing ones kept."""
    made: dict[str, ConsumerInfo] = {}
    for subject in subjects:
        name = consumer_name(subject)
        info = infos.get(name)
        if info is not None and _filters(info) == {subject}:
            made[name] = info
            continue
        start = start_seq
        if info is not None:
            start = max(start or 0, await _retire(js, stream, info, "wrong filter", changes))
        info = await _create(js, stream, name, [subject], settings, start, changes)
        if _filters(info) != {subject}:
            await js.delete_consumer(stream, name)
            raise NatsLayoutError(
                f"the server created consumer {name} without its subject filter {subject!r}, "
                "so it would deliver every subject; model-foundry needs nats-server 2.9 or newer"
            )
        made[name] = info
    return made


async def _create_layout(
    js: JetStreamContext,
    stream: str,
    subjects: list[str],
    infos: dict[str, ConsumerInfo | None],
    settings: ConsumerSettings,
    changes: list[str],
) -> tuple[bool, dict[str, ConsumerInfo]]:
    """A partition without a working consumer: replace broken ones, then plural if kept."""
    start: int | None = None
    for subject in subjects:
        info = infos[consumer_name(subject)]
        if info is not None and _filters(info) != {subject}:
            # Made from a plural filter by a server that dropped it (or by hand): it
            # delivered every subject, and everything it acknowledged is stored.
            floor = await _retire(js, stream, info, "it filtered no subject of its own", changes)
            start = max(start or 0, floor)
            infos[consumer_name(subject)] = None
    if any(infos.values()):
        # Surviving per-name consumers from a server without plural filters: completing that
        # layout keeps each message on one consumer, whatever this server supports.
        return False, await _create_singles(js, stream, subjects, infos, settings, start, changes)
    name = consumer_name(subjects[0])
    # A trial: reported only if the server keeps its filters, so a 2.9 server's setup names
    # each consumer it ends up with once, not the plural one it made and deleted.
    trial: list[str] = []
    info = await _create(js, stream, name, subjects, settings, start, trial)
    if _filters(info) == frozenset(subjects):
        changes += trial
        return True, {name: info}
    await js.delete_consumer(stream, name)
    log.info("consumer %s: the server dropped filter_subjects; one per subject name", name)
    return False, await _create_singles(js, stream, subjects, {}, settings, start, changes)


async def _unlimited_deliveries(
    js: JetStreamContext, stream: str, info: ConsumerInfo, changes: list[str]
) -> ConsumerInfo:
    """Consumers made before (``max_deliver`` 50) would drop a message after 50 failures."""
    if info.config.max_deliver in (None, 0, UNLIMITED_DELIVERIES):
        return info
    config = info.config
    was = config.max_deliver
    config.max_deliver = UNLIMITED_DELIVERIES
    updated = await js.add_consumer(stream, config)
    changes.append(f"updated consumer {info.name}: max_deliver {was} -> unlimited")
    return updated


async def ensure_partition(
    js: JetStreamContext, stream: str, subject: str, settings: ConsumerSettings
) -> PartitionConsumers:
    """The partition's consumers, created or repaired so each message matches exactly one."""
    subjects = subjects_for(subject)
    names = [consumer_name(s) for s in subjects]
    infos: dict[str, ConsumerInfo | None] = {n: await _info(js, stream, n) for n in names}
    changes: list[str] = []
    primary = infos[names[0]]
    if primary is not None and _filters(primary) == frozenset(subjects):
        plural, kept = True, {names[0]: primary}
        for name in names[1:]:
            stray = infos[name]
            if stray is not None:
                # The plural consumer delivers this name's messages too.
                await js.delete_consumer(stream, name)
                changes.append(f"deleted consumer {name} ({names[0]} filters its subject)")
    elif primary is not None and _filters(primary) == {subject}:
        plural = False
        kept = await _create_singles(js, stream, subjects, infos, settings, None, changes)
    else:
        plural, kept = await _create_layout(js, stream, subjects, infos, settings, changes)
    for name, info in list(kept.items()):
        kept[name] = await _unlimited_deliveries(js, stream, info, changes)
    for change in changes:
        log.info("%s", change)
    return PartitionConsumers(
        subject=subject, names=tuple(kept), plural=plural, infos=kept, changes=changes
    )


@dataclass(frozen=True)
class ConsumerPending:
    """A partition's counts, summed over its consumers."""

    subject: str
    consumer: str
    num_pending: int
    num_ack_pending: int
    num_redelivered: int
    # The consumers' own setting, which may differ from this resource's if they were created
    # by another configuration: redelivery follows the consumer, so the sensor does too.
    ack_wait_s: float
    consumers: tuple[str, ...] = ()

    @property
    def outstanding(self) -> int:
        """Messages not yet stored: never delivered, or delivered and not acknowledged."""
        return self.num_pending + self.num_ack_pending


def partition_pending(partition: PartitionConsumers, default_ack_wait_s: float) -> ConsumerPending:
    infos = [partition.infos[n] for n in partition.names]
    return ConsumerPending(
        subject=partition.subject,
        consumer=" + ".join(partition.names),
        num_pending=sum(int(i.num_pending or 0) for i in infos),
        num_ack_pending=sum(int(i.num_ack_pending or 0) for i in infos),
        num_redelivered=sum(int(i.num_redelivered or 0) for i in infos),
        ack_wait_s=max(float(i.config.ack_wait or default_ack_wait_s) for i in infos),
        consumers=partition.names,
    )


__all__ = [
    "UNLIMITED_DELIVERIES",
    "ConsumerPending",
    "ConsumerSettings",
    "NatsLayoutError",
    "PartitionConsumers",
    "consumer_name",
    "ensure_partition",
    "partition_pending",
]
