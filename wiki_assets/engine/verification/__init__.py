"""The verification pass: after a run, judges from the fleet settle the sentences of the pages'
prose that the rules left unchecked (:mod:`.verify`; its figures: :mod:`.report`). No Dagster
here: ``wiki_verification`` (``wiki_assets/defs/verification/``) runs it.
"""

from wiki_assets.engine.verification.report import JudgeFigures, VerificationReport
from wiki_assets.engine.verification.verify import verify

__all__ = ["JudgeFigures", "VerificationReport", "verify"]
