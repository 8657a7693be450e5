"""Deterministic simulation of the dispatcher: the real queue, workers, limits, end-of-run rule,
hedges, breaker and retries, driven by simulated models on a virtual clock (no sockets, no
sleeps), over thousands of seeded scenarios: :mod:`~wiki_assets.simulation.scenarios` makes them,
:mod:`~wiki_assets.simulation.runner` runs one, :mod:`~wiki_assets.simulation.properties` checks
what must hold."""

from wiki_assets.simulation.clock import Stuck, VirtualClockLoop, run_virtual
from wiki_assets.simulation.models import Outage, VirtualModel
from wiki_assets.simulation.properties import check, reproduce
from wiki_assets.simulation.runner import Outcome, run
from wiki_assets.simulation.scenarios import Scenario, generate

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
