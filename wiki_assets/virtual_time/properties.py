"""What must hold for every scenario, and the one line that reproduces a seed.

:func:`check` lists every property an :class:`~wiki_assets.virtual_time.runner.Outcome` broke (an
empty list is a pass). Among them: the run ends; every document is done once, failed with a
reason, or left only when every model is down; no model idles next to a document it would finish
first; each model races a document at most once; a hung request is not waited out when healthy
models could finish well before its timeout; a clean scenario's makespan stays within its bound;
a model none of whose requests failed is not reported out of service.
``python -m wiki_assets.virtual_time --seed N`` reproduces one scenario.
"""

from __future__ import annotations

from wiki_assets.engine.dispatch.run_end.hedge_thresholds import HEDGE_BLIND_S
from wiki_assets.virtual_time.runner import Outcome
from wiki_assets.virtual_time.scenarios import MAKESPAN_BOUND


def check(outcome: Outcome) -> list[str]:
    """Every property the scenario broke (empty: it passed)."""
    scenario, tally = outcome.scenario, outcome.report.tally
    problems: list[str] = []
    if outcome.stuck:
        problems.append(f"the run did not end: {outcome.stuck}")
    paths = [f"d{index:04}.md" for index in range(len(scenario.tokens))]
    every_model_down = (tally.stopped or "").startswith("every model is down")
    accounted = 0
    for path in paths:
        answers = outcome.answers.get(path, [])
        if len(answers) > 1:
            problems.append(f"{path} recorded {len(answers)} times ({', '.join(answers)})")
        if answers and path in outcome.failures:
            problems.append(f"{path} both done and failed")
        if path in outcome.failures and not outcome.failures[path]:
            problems.append(f"{path} failed without a reason")
        accounted += bool(answers) or path in outcome.failures
    left = len(paths) - accounted
    if left and not every_model_down and not outcome.stuck:
        problems.append(f"{left} documents neither done nor failed, yet not every model is down")
    if left != outcome.unfinished and not outcome.stuck:
        problems.append(f"{left} documents unaccounted, but {outcome.unfinished} reported left")
    if tally.stopped and not every_model_down:
        problems.append(f"stopped: {tally.stopped}")
    for path, models in outcome.second_opinions.items():
        first = outcome.answers.get(path, [])
        if len(models) > 1:
            problems.append(f"{path} got {len(models)} second opinions ({', '.join(models)})")
        if set(models) & set(first):
            problems.append(f"{path}: a second opinion from the model of its first answer")
    asked = tally.second_opinions
    if asked > scenario.dials.second_opinion_share * len(paths) + 1e-9:
        problems.append(f"{asked} second opinions asked, over the budget")
    judging = scenario.dials.judge_share > 0 and len(scenario.models) > 1
    optional = scenario.second_opinions or judging
    if optional and not outcome.fixed and not outcome.stuck and not tally.stopped:
        # Nothing was ever kept, so no second opinion was worth waiting for, and no judge ever
        # is: the run ended when its last first answer came in.
        late = outcome.makespan_s - outcome.first_answers_at
        if late > 1e-3:
            problems.append(
                f"the run ended {late:.3f} s after its last first answer, though no second "
                "opinion was ever kept (judges are never waited for)"
            )
    if outcome.judged > scenario.dials.judge_share * len(paths) + 1e-9:
        problems.append(f"{outcome.judged} pages judged, over the budget")
    problems.extend(outcome.idle_violations[:3])
    for path, raced in outcome.overlapping.items():
        if raced > 1:
            problems.append(f"{path} raced {raced} times by one model (each races it at most once)")
    if tally.hedged > outcome.jobs * len(scenario.models):
        problems.append(f"{tally.hedged} hedges for {outcome.jobs} jobs (documents and parts)")
    if outcome.hang_free_s is not None and not outcome.stuck:
        if outcome.makespan_s >= outcome.hang_free_s:
            problems.append(
                f"makespan {outcome.makespan_s:.2f} s reached a hanging model's timeout "
                f"({outcome.hang_free_s:.0f} s) although fault-free models alone would finish "
                f"well before it: a hung request was waited out"
            )
    # A model none of whose requests failed served the run, however few it answered (its second
    # opinions cut as the run ended, its requests beaten by faster models).
    healthy = [m for m in outcome.report.models if not m.tally.errors]
    out = [line for m in healthy if (line := m.out()) is not None]
    if out and not outcome.stuck:
        problems.append(f"a model with no failed request reported out of service: {out[0]}")
    if scenario.clean and not outcome.stuck:
        bound = MAKESPAN_BOUND * outcome.ideal_s + outcome.blind_s + HEDGE_BLIND_S
        if outcome.fixed:
            # Second opinions were kept, so the end of the run may wait for one more that is
            # likely to be (opinions.py): at most one request, on the slowest model at worst.
            bound += outcome.blind_s
        if outcome.makespan_s > bound + 1e-6:
            problems.append(
                f"makespan {outcome.makespan_s:.2f} s is over the bound {bound:.2f} s "
                f"(ideal {outcome.ideal_s:.2f} s, longest document on the slowest model "
                f"{outcome.blind_s:.2f} s)"
            )
    return problems


def reproduce(seed: int) -> str:
    """The one line that runs a seed again."""
    return f"python -m wiki_assets.virtual_time --seed {seed}"
