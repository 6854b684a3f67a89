"""Pure routing: each task's queue and tiers of slots, which slot may take what, and when.

A role is served by the first tier of its slots (``SlotFile.role_tiers``) that has a slot not
cooling down; a task narrowed to some slots waits in a queue of its own with tiers of only
those slots. Tested on its own, without servers.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from model_foundry.lib.slots.config import NoSlotForRoleError, SlotFile
from model_foundry.lib.slots.dispatcher.tasks import Task


def route_tiers(
    tasks: list[Task], slot_file: SlotFile, profile: str, roles: Iterable[str] = ()
) -> dict[str, list[list[str]]]:
    """Each route's slot names by tier (``roles``: more roles, whose tasks a growing batch
    gets later); raises ``NoSlotForRoleError`` for a route no live slot serves, before
    anything is sent."""
    tiers: dict[str, list[list[str]]] = {}
    for role in sorted({t.role for t in tasks} | set(roles)):
        role_tiers = slot_file.role_tiers(role, profile)
        if not role_tiers:
            raise NoSlotForRoleError(
                f"no live slot can serve role {role!r} in profile {profile!r} of "
                f"{slot_file.source}; add a fallback under roles.{role}.fallbacks or choose "
                "another profile"
            )
        tiers[role] = [[s.name for s in tier] for tier in role_tiers]
    # A task narrowed to some slots (context windows) waits in a queue of its own whose
    # tiers keep only those slots, so routing, cooldown and failover work unchanged.
    for t in tasks:
        if t.only_slots is not None and t.route not in tiers:
            allowed = set(t.only_slots)
            narrowed = [[s for s in tier if s in allowed] for tier in tiers[t.role]]
            narrowed = [tier for tier in narrowed if tier]
            if not narrowed:
                raise NoSlotForRoleError(
                    f"task {t.key!r}: none of the slots {sorted(allowed)} serves role "
                    f"{t.role!r} in profile {profile!r} of {slot_file.source}"
                )
            tiers[t.route] = narrowed
    return tiers


class Router:
    """Which slot may take work of which role right now, given cooldowns.

    ``tiers`` maps a role to its slots by preference (see ``SlotFile.role_tiers``). A role is
    served by the first tier that has a slot not cooling down; if every tier is cooling, its
    work waits for the earliest cooldown to end.
    """

    def __init__(self, tiers: dict[str, list[list[str]]]) -> None:
        self.tiers = tiers
        self.cooling_until: dict[str, float] = {}
        self.roles_of_slot: dict[str, list[str]] = {}
        for role, role_tiers in tiers.items():
            for tier in role_tiers:
                for slot in tier:
                    self.roles_of_slot.setdefault(slot, []).append(role)

    def slots(self) -> list[str]:
        return list(self.roles_of_slot)

    def add_routes(self, tiers: dict[str, list[list[str]]]) -> None:
        """Routes a growing batch meets later: a task narrowed to some of its role's slots.
        Only slots the batch already has workers on may serve them."""
        for route, route_tiers_ in tiers.items():
            if route in self.tiers:
                continue
            unknown = {s for tier in route_tiers_ for s in tier} - set(self.roles_of_slot)
            if unknown:
                raise ValueError(
                    f"route {route!r} needs slots {sorted(unknown)} this batch has no workers "
                    "on: name its role when the batch starts"
                )
            self.tiers[route] = route_tiers_
            for tier in route_tiers_:
                for slot in tier:
                    self.roles_of_slot[slot].append(route)

    def cooling(self, slot: str, now: float) -> bool:
        return self.cooling_until.get(slot, 0.0) > now

    def cool_down(self, slot: str, until: float) -> None:
        self.cooling_until[slot] = until

    def active_tier(self, role: str, now: float) -> list[str]:
        for tier in self.tiers[role]:
            if any(not self.cooling(s, now) for s in tier):
                return tier
        return []

    def roles_for(self, slot: str, now: float) -> list[str]:
        """Roles whose work ``slot`` may take now."""
        if self.cooling(slot, now):
            return []
        return [r for r in self.roles_of_slot.get(slot, []) if slot in self.active_tier(r, now)]

    def next_change(self, now: float) -> float | None:
        ends = [t for t in self.cooling_until.values() if t > now]
        return min(ends) if ends else None


@dataclass(order=True)
class Pending:
    """A task in the queue: when it may run (retries), its place in line, its attempt."""

    ready_at: float
    seq: int
    task: Task = field(compare=False)
    attempt: int = field(default=1, compare=False)


# A place of a slot: (slot name, place index). On llama.cpp a place's index is the server
# slot (``id_slot``) its requests run in, so the place says whose prompt cache they meet.
PlaceId = tuple[str, int]


@dataclass
class Family:
    """The waiting members of a family (tasks sharing a long prompt prefix, ``Task.family``)
    and the places whose caches hold its prefix: those that ran one of its members."""

    route: str
    members: deque[Pending] = field(default_factory=deque)
    homes: set[PlaceId] = field(default_factory=set)


class WorkQueue:
    """Pending tasks per route: fresh ones in order, retries by the time they may run again.

    With ``families`` on, only the first member of a family waits in line with the other
    fresh tasks (its lead); the rest wait beside it. A place that ran a member of a family
    takes that family's next member before anything else, so the family runs one member after
    another where its prefix is cached, while the other places take other work. A place with
    nothing else to take takes a member of another family (its cache does not hold the prefix,
    but an idle place would be worse); that place is the family's home from then on too.
    Off, family is ignored: one line in order, as before families existed.
    """

    def __init__(self, *, families: bool = False) -> None:
        self.families_on = families
        self.fresh: dict[str, deque[Pending]] = {}
        self.retry: dict[str, list[Pending]] = {}
        self.families: dict[tuple[str, str], Family] = {}
        self._seq = itertools.count()

    def add(self, task: Task) -> None:
        item = Pending(0.0, next(self._seq), task)
        if self.families_on and task.family is not None:
            key = (task.route, task.family)
            family = self.families.get(key)
            if family is not None:
                family.members.append(item)
                return
            self.families[key] = Family(task.route)
        self.fresh.setdefault(task.route, deque()).append(item)

    def requeue(self, item: Pending, ready_at: float) -> None:
        item.ready_at = ready_at
        heapq.heappush(self.retry.setdefault(item.task.route, []), item)

    def __len__(self) -> int:
        return (
            sum(len(q) for q in self.fresh.values())
            + sum(len(h) for h in self.retry.values())
            + sum(len(f.members) for f in self.families.values())
        )

    def _head(self, role: str, now: float) -> Pending | None:
        best = None
        heap = self.retry.get(role)
        if heap and heap[0].ready_at <= now:
            best = heap[0]
        q = self.fresh.get(role)
        if q and (best is None or q[0].seq < best.seq):
            best = q[0]
        return best

    def _waiting(self, roles: Iterable[str]) -> list[Family]:
        wanted = set(roles)
        return [f for f in self.families.values() if f.members and f.route in wanted]

    def peek(self, roles: Iterable[str], now: float) -> Pending | None:
        """The oldest task a place serving ``roles`` could take now, if any."""
        roles = list(roles)
        heads = [h for r in roles if (h := self._head(r, now)) is not None]
        heads += [f.members[0] for f in self._waiting(roles)]
        return min(heads, key=lambda p: p.seq) if heads else None

    def take(
        self, roles: Iterable[str], now: float, place: PlaceId | None = None
    ) -> Pending | None:
        """What ``place`` runs next: the next member of a family whose prefix it holds; else
        the oldest task in line; else a member of the family with the most still waiting."""
        roles = list(roles)
        waiting = self._waiting(roles)
        home = [f for f in waiting if place in f.homes]
        if home:
            return self._member(min(home, key=lambda f: f.members[0].seq), place)
        heads = [h for r in roles if (h := self._head(r, now)) is not None]
        if heads:
            item = min(heads, key=lambda p: p.seq)
            self._pop_head(item)
            family = self._family_of(item)
            if family is not None and place is not None:
                family.homes.add(place)
            return item
        if waiting:
            most = max(waiting, key=lambda f: (len(f.members), -f.members[0].seq))
            return self._member(most, place)
        return None

    def siblings(self, item: Pending, most: int, *, take: bool = False) -> list[Pending]:
        """Up to ``most`` first tries waiting right behind ``item`` in its line (its family's
        members, or its route's fresh tasks) that are the next samples of its sample group,
        seeds counting up from ``item``'s; taken out of the queue when ``take``."""
        # ``most`` first: a task's sample group is a hash, not worked out where none may join.
        if most <= 0 or item.attempt > 1 or item.task.sample is None:
            return []
        group, seed = item.task.sample
        family = self._family_of(item)
        line = family.members if family is not None else self.fresh.get(item.task.route)
        found: list[Pending] = []
        for waiting in itertools.islice(line or (), most):
            if waiting.task.sample != (group, seed + len(found) + 1) or waiting.attempt > 1:
                break
            found.append(waiting)
        if take and line:
            for _ in found:
                line.popleft()
        return found

    def _family_of(self, item: Pending) -> Family | None:
        if not self.families_on or item.task.family is None:
            return None
        return self.families.get((item.task.route, item.task.family))

    def _member(self, family: Family, place: PlaceId | None) -> Pending:
        if place is not None:
            family.homes.add(place)
        return family.members.popleft()

    def _pop_head(self, item: Pending) -> None:
        route = item.task.route
        q = self.fresh.get(route)
        if q and q[0] is item:
            q.popleft()
        else:
            heapq.heappop(self.retry[route])

    def next_ready(self, roles: Iterable[str]) -> float | None:
        times = [h[0].ready_at for r in roles if (h := self.retry.get(r))]
        return min(times) if times else None

    def drain_keys(self) -> list[str]:
        keys = [p.task.key for q in self.fresh.values() for p in q]
        keys += [p.task.key for h in self.retry.values() for p in h]
        keys += [p.task.key for f in self.families.values() for p in f.members]
        self.fresh.clear()
        self.retry.clear()
        self.families.clear()
        return keys


__all__ = ["Family", "Pending", "PlaceId", "Router", "WorkQueue", "route_tiers"]
