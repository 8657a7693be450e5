"""Deterministic simulation of the dispatcher: the real queue, workers, limits, end-of-run rule,
hedges, breaker and retries, driven by simulated models on a virtual clock (no sockets, no
sleeps), over thousands of seeded scenarios: :mod:`~wiki_assets.virtual_time.scenarios` makes them,
:mod:`~wiki_assets.virtual_time.runner` runs one, :mod:`~wiki_assets.virtual_time.properties` checks
what must hold."""

from wiki_assets.virtual_time.clock import Stuck, VirtualClockLoop, run_virtual
from wiki_assets.virtual_time.models import Outage, VirtualModel
from wiki_assets.virtual_time.properties import check, reproduce
from wiki_assets.virtual_time.runner import Outcome, run
from wiki_assets.virtual_time.scenarios import Scenario, generate

__all__ = [
    "Outage",
    "Outcome",
    "Scenario",
    "Stuck",
    "VirtualClockLoop",
    "VirtualModel",
    "check",
    "generate",
    "reproduce",
    "run",
    "run_virtual",
]
