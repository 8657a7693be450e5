"""``python -m wiki_assets.virtual_time``: one seed in detail, or a sweep of many with figures."""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from wiki_assets.virtual_time import check, generate, reproduce, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wiki_assets.virtual_time", description=__doc__)
    parser.add_argument("--seed", type=int, help="run this one scenario and print what it did")
    parser.add_argument("--seeds", default="0:1000", help="a sweep: START:STOP (default 0:1000)")
    parser.add_argument("--docs", type=int, default=80, help="most documents per scenario")
    args = parser.parse_args(argv)
    if args.seed is not None:
        return _one(args.seed, args.docs)
    start, stop = (int(part) for part in args.seeds.split(":"))
    return _sweep(range(start, stop), args.docs)


def _one(seed: int, docs: int) -> int:
    scenario = generate(seed, docs)
    outcome = run(scenario)
    report = outcome.report
    tally = report.tally
    print(scenario.describe())
    print(
        f"makespan {outcome.makespan_s:.2f} s (ideal {outcome.ideal_s:.2f} s) · "
        f"{report.count} done · {len(report.failed)} failed · {outcome.unfinished} left · "
        f"hedged {tally.hedged} · requeued {tally.requeued} · stopped: {tally.stopped}"
    )
    for stats in report.models:
        print(
            f"  {stats.name}: {stats.tally.docs} docs · {stats.tally.errors} errors · "
            f"{stats.tally.hedges} hedges ({stats.tally.hedges_won} won) · "
            f"breaker trips {stats.breaker_trips}"
        )
    problems = check(outcome)
    for problem in problems:
        print(f"FAIL {problem}")
    return 1 if problems else 0


def _sweep(seeds: range, docs: int) -> int:
    began = time.perf_counter()
    failures: list[str] = []
    ratios: list[float] = []
    hedged = documents = faulty = 0
    for seed in seeds:
        scenario = generate(seed, docs)
        outcome = run(scenario)
        documents += len(scenario.tokens)
        hedged += outcome.report.tally.hedged
        faulty += scenario.faulty
        if scenario.clean and outcome.ideal_s > 0:
            ratios.append(outcome.makespan_s / outcome.ideal_s)
        problems = check(outcome)
        if problems:
            failures.append(f"{problems[0]} · reproduce: {reproduce(seed)}")
    elapsed = time.perf_counter() - began
    ratios.sort()
    print(
        f"{len(seeds)} scenarios ({faulty} with faults) · {documents} documents · "
        f"{elapsed:.1f} s ({len(seeds) / elapsed:.0f} scenarios/s) · {len(failures)} failed"
    )
    if ratios:
        p95 = ratios[min(len(ratios) - 1, int(0.95 * len(ratios)))]
        print(
            f"clean makespan / ideal: median {statistics.median(ratios):.2f} · "
            f"p95 {p95:.2f} · max {ratios[-1]:.2f} · hedged {hedged} of {documents} documents"
        )
    for line in failures[:20]:
        print(f"FAIL {line}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
