"""Second opinions: which flagged answers another model is asked about, and how urgently.

A page the checks flag goes back to the queue for another model's answer (``flagged_pages:
retry``); the better of the two answers is kept. A second opinion costs a request, so the fleet
learns, during the run, whether they pay:

* per answering model: how many of its second opinions were kept (ranked above the first answer);
* per flag reason: how many of the pages flagged for it a second opinion fixed (the answer kept
  no longer has that reason).

Each estimate is Laplace's rule of succession over the answers seen, with the second opinions
still out counted as not kept: ``(kept + 1) / (answered + out + 2)``. It starts at one half, so
the first second opinion of a model is tried at once, and it cannot be tried many times over
before its first answer says whether it helps.

It also learns, per model, how often its own first answers are flagged and then replaced by
another model's second opinion. A model whose answers are more likely than not to be replaced
(after :data:`EVIDENCE` second opinions on its pages) is *superseded*: while a model that is not
superseded is in service, and while the run's budget of second opinions lasts, it takes no new
documents (each would cost a second request, and its answer would be thrown away), only second
opinions. Once the budget is spent its answers would stand, so it takes documents again.

What becomes of a flagged answer:

* **skipped** when the run's budget (``second_opinion_share`` of its documents) is spent, when
  every model that could answer has had :data:`EVIDENCE` second opinions and none was kept, or
  when every one of the page's reasons has had :data:`EVIDENCE` second opinions and none was
  fixed, or when every other model is out of service. Skips are counted by why
  (:attr:`SecondOpinions.skipped`).
* **likely** when it is one of the model's first :data:`EVIDENCE` (a trial: the run learns early
  whether they help), or when both estimates (the model's, and the best of the page's reasons')
  are at least one half: the page is more likely than not to be replaced. Such a second opinion
  is work like a document: a free worker takes it before claiming new documents. Once the model
  has had one answered, the end of the run waits for those more likely than not to be kept (a
  hung one is still given up; a trial is not waited for). A page that another model reliably
  fixes is not done until it is fixed.
* **optional** otherwise: it uses only capacity that would otherwise be idle. A worker takes it
  only when it has no document, part or page to start and no late request to race; when the
  last first answer is in, the run ends at once, cancelling the optional second opinions still
  out (their first answers stand) and dropping those still waiting. So a second opinion that is
  not known to help never delays the end of the run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

EVIDENCE = 3  # second opinions answered before "none was kept" says a model (or reason) never helps

# Why a flagged answer got no second opinion, as the report counts them.
BUDGET = "budget"  # second_opinion_share of the run's documents was asked already
UNHELPFUL_MODEL = "model_not_kept"  # no model that could answer has had one kept
UNFIXED_REASON = "reason_not_fixed"  # no second opinion fixed any of the page's reasons
RUN_DONE = "run_done"  # optional, and every first answer was in: given up
HUNG = "hung"  # ran far past its time where nobody could race it: given up
FAILED = "failed"  # its request failed (the first answer stands)
OUT_OF_SERVICE = "out_of_service"  # every other model of the fleet was out of service


@dataclass
class Tally:
    """Second opinions answered, still out, and kept (a model's), or fixed (a reason's)."""

    answered: int = 0
    out: int = 0
    good: int = 0

    def chance(self, sent: bool = False) -> float:
        """Laplace's estimate that the next one is good, the ones out counted as not (``sent``:
        of one of those out, the others counted as not)."""
        return (self.good + 1) / (self.answered + self.out - sent + 2)

    def hopeless(self) -> bool:
        return self.answered >= EVIDENCE and self.good == 0


@dataclass
class SecondOpinions:
    """The run's learning about second opinions, and its budget (see the module docstring).
    Models are known by their place in the fleet."""

    budget: int  # second opinions the run may ask for
    asked: int = 0
    models: dict[int, Tally] = field(default_factory=dict)
    reasons: dict[str, Tally] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    # Per model of a first answer: its first answers (good: flagged), and the second opinions
    # given on its pages (good: kept, its answer replaced).
    flagged: dict[int, Tally] = field(default_factory=dict)
    replaced: dict[int, Tally] = field(default_factory=dict)

    def first_answer(self, order: int, *, flagged: bool) -> None:
        tally = self.flagged.setdefault(order, Tally())
        tally.answered += 1
        tally.good += flagged

    def superseded(self, order: int) -> bool:
        """Whether model ``order``'s first answers are more likely than not to be replaced."""
        replaced = self.replaced.get(order)
        if replaced is None or replaced.answered < EVIDENCE:
            return False
        flagged = self.flagged.get(order, Tally())
        return flagged.chance() * replaced.chance() >= 0.5

    def _model(self, order: int) -> Tally:
        return self.models.setdefault(order, Tally())

    def _reason(self, reason: str) -> Tally:
        return self.reasons.setdefault(reason, Tally())

    def refusal(self, reasons: Sequence[str], models: Iterable[int]) -> str | None:
        """Why a page flagged for ``reasons`` gets no second opinion from any of ``models``
        (those that could give it), or None: it may be asked."""
        if self.spent():
            return BUDGET
        if all(self._model(order).hopeless() for order in models):
            return UNHELPFUL_MODEL
        if reasons and all(self._reason(reason).hopeless() for reason in reasons):
            return UNFIXED_REASON
        return None

    def spent(self) -> bool:
        """Whether the run's budget of second opinions is used up."""
        return self.asked >= self.budget

    def ask(self) -> None:
        self.asked += 1

    def skip(self, why: str) -> None:
        self.skipped[why] += 1

    def likely(self, reasons: Sequence[str], order: int, *, sent: bool = False) -> bool:
        """Whether model ``order``'s second opinion on a page flagged for ``reasons`` is taken
        before new documents: one of the model's first :data:`EVIDENCE` (a trial, so that the
        run learns early whether they help), or one more likely than not to replace the page
        (``sent``: of one already out)."""
        model = self._model(order)
        if model.answered + model.out - sent < EVIDENCE:
            return True
        return self._promising(reasons, order, sent)

    def _promising(self, reasons: Sequence[str], order: int, sent: bool) -> bool:
        if self._model(order).chance(sent) < 0.5:
            return False
        return not reasons or max(self._reason(r).chance(sent) for r in reasons) >= 0.5

    def worth_waiting(self, reasons: Sequence[str], order: int, *, sent: bool = False) -> bool:
        """Whether the end of the run waits for this second opinion: its model has had one
        answered, and it is more likely than not to be kept (a trial is not waited for)."""
        return self._model(order).answered > 0 and self._promising(reasons, order, sent)

    def may_give(self, reasons: Sequence[str], order: int) -> bool:
        """Whether model ``order`` may give this second opinion at all (not learned useless)."""
        if self._model(order).hopeless():
            return False
        return not reasons or not all(self._reason(reason).hopeless() for reason in reasons)

    def sent(self, reasons: Sequence[str], order: int) -> None:
        self._model(order).out += 1
        for reason in reasons:
            self._reason(reason).out += 1

    def settled(
        self,
        reasons: Sequence[str],
        order: int,
        *,
        kept: bool | None,
        fixed: Sequence[str] = (),
        writer: int | None = None,
    ) -> None:
        """A second opinion ended: answered (``kept`` or not, ``fixed``: the reasons the kept
        answer no longer has; ``writer``: the model of the first answer) or not (``kept`` None:
        failed or given up)."""
        model = self._model(order)
        model.out -= 1
        for reason in reasons:
            self._reason(reason).out -= 1
        if kept is None:
            return
        model.answered += 1
        model.good += kept
        if writer is not None:
            on_pages = self.replaced.setdefault(writer, Tally())
            on_pages.answered += 1
            on_pages.good += kept
        for reason in reasons:
            tally = self._reason(reason)
            tally.answered += 1
            tally.good += reason in fixed
