"""Documents that do not depend on how fast the machine that records them is.

The fixture generators (js/dev/*_fixtures.py) call `steady()` before recording: no time budget
cuts the recorded values or the search for a NaN's origin short, and no finding whose presence
depends on timing (compile time against run time) is made. Everything else is JAX's answer, the
same on every run, so tools/make_fixtures.py --check can compare fixtures byte for byte.
"""

from __future__ import annotations

UNBOUNDED_S = 3600.0


def steady() -> None:
    from jaxmagic.capture.values import forward, nan_check
    from jaxmagic.model import findings

    forward.TIME_BUDGET_S = forward.GRAD_TIME_BUDGET_S = UNBOUNDED_S
    nan_check.LOCATE_BUDGET_S = UNBOUNDED_S
    findings.COMPILE_DOMINATES_S = float("inf")
