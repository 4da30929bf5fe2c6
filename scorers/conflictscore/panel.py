"""Judge panels and judge stability for every model-graded scorer
(``conflictscore``, the TruthfulQA regeneration that runs it, and
``overrationalization``).

**The panel.** The grader roles ``grader``, ``grader_2``, ``grader_3``, ...
(``--model-role grader=openai/gpt-4o --model-role grader_2=anthropic/...``),
in that order, or the members of a ``grader`` role bound to a list of models;
with no ``grader`` role the evaluated model grades alone (as before). Each
judge labels every unit (a ConflictScore claim x document cell, an
over-rationalization sample); the unit's label is the **strict majority** of
the judges' votes (:func:`strict_majority`: more than half of the *whole*
panel, as Inspect's ``majority_score`` reducer counts). A tie, or unreadable
votes that could still change the outcome, leave the unit undetermined
(``None``), which the scorers treat as for one grader's unreadable reply
(ConflictScore: the worst case over the cell). With two judges any
disagreement or any unreadable vote is undetermined; with three, two equal
readable votes decide.

**Stability** (neither changes the default run):

* ``judge_repeats=N`` asks every judge each question N times at
  ``judge_temperature`` (default 1.0; recorded in the score metadata and the
  metric); a judge's vote is the strict majority of its N labels.
  *Self-agreement* of a judge = share of units whose readable repeats (at
  least 2) all agree: the sampling noise.
* ``judge_swap=true`` asks every judge each question once more with the
  parts in the other order (ConflictScore pairwise: the document before the
  claim; ``labelling=all_docs``: the documents in reverse order, labels
  mapped back; over-rationalization: the evidence passages reversed). This
  swaps the order of the *claim and its evidence*, not the order of two
  candidate answers (the position swap of Zheng et al. 2023, "Judging
  LLM-as-a-judge", which a pairwise comparison needs and a single-claim
  label does not have). Like is compared with like: the swapped question is
  asked at temperature 0 and compared with the same order at temperature 0
  (the first question when the judge is asked once; one more same-order
  question when the repeats run at another temperature), so the flip rate
  is order effect alone and sampling noise stays in self-agreement. The
  *flip rate* of a judge = share of units, readable both ways, whose label
  changed; the panel's flip rate is **pooled** (all judges' flips over all
  their readable pairs), each judge's beside it. The swapped label is never
  used in the score.

**Per cell** (a leaderboard cell, the metric :func:`judge_panel` over the
samples' ``Score.metadata["judges"]``): label coverage (units with a
determined label, and each judge's readable share); each judge's label base
rates; for a panel, Krippendorff's alpha (nominal, Inspect's
``krippendorff_alpha``) and, per pair of judges, Cohen's kappa and the raw
agreement on the units both read (:func:`pair_agreement`); self-agreement and
flip rates when measured; and -- where a unit carries a ``reference`` label --
each judge's and the panel's accuracy with a 95% Wilson interval, the
pairwise correlation of the judges' errors (:func:`error_correlation`) and
the effective number of independent judges (:func:`effective_judges`).
"Agreement with the majority" is gone: with two judges it is 1 by
construction.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, metric

ROLE = "grader"
_EXTRA_ROLE = re.compile(r"^grader_(\d+)$")


@dataclass(frozen=True)
class Judging:
    """How each judge is asked (``-T judge_repeats= judge_swap= judge_temperature=``)."""

    repeats: int = 1
    swap: bool = False
    temperature: float = 1.0
    """The sampling temperature of repeated questions (``repeats`` > 1); a single question is asked at 0."""

    def __post_init__(self):
        if isinstance(self.repeats, bool) or not isinstance(self.repeats, int) or self.repeats < 1:
            raise ValueError(f"judge_repeats={self.repeats!r}: expected a positive integer")
        if not isinstance(self.swap, bool):
            raise ValueError(f"judge_swap={self.swap!r}: expected true or false")
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, (int, float)) \
                or not 0 <= self.temperature <= 2:
            raise ValueError(f"judge_temperature={self.temperature!r}: expected a number in [0, 2]")

    @property
    def default(self) -> bool:
        return self.repeats == 1 and not self.swap

    @property
    def used_temperature(self) -> float:
        return float(self.temperature) if self.repeats > 1 else 0.0


@dataclass
class Judge:
    role: str
    model: Any
    source: str

    @property
    def name(self) -> str:
        return f"{self.role}={self.model}"


def resolve_panel(role: str = ROLE) -> list[Judge]:
    """The judges (module docstring); one judge, the evaluated model, without a ``grader`` role."""
    from inspect_ai.model import get_model, model_roles

    roles = model_roles()
    extra = sorted((int(m.group(1)), r) for r in roles if (m := _EXTRA_ROLE.match(r)))
    if role not in roles:
        if extra:
            raise ValueError(f"model role {extra[0][1]!r} given without {role!r}: name the first judge "
                             f"--model-role {role}=MODEL")
        return [Judge(role, get_model(), f"no {role!r} model role given: the evaluated model grades")]
    bound = roles[role]
    if isinstance(bound, list):
        judges = [Judge(f"{role}[{i}]", m, f"model role {role!r} (panel member {i})") for i, m in enumerate(bound)]
    else:
        judges = [Judge(role, get_model(role=role), f"model role {role!r}")]
    for _, r in extra:
        judges.append(Judge(r, get_model(role=r), f"model role {r!r}"))
    return judges


def strict_majority(votes: list[Any]) -> Any:
    """The label more than half of ``votes`` carry (``None`` = unreadable counts in the total), else ``None``.

    >>> strict_majority(["SUPPORTS", "SUPPORTS", None]), strict_majority(["SUPPORTS", "CONTRADICTS"])
    ('SUPPORTS', None)
    >>> strict_majority(["SUPPORTS", None]), strict_majority(["YES"])
    (None, 'YES')
    """
    counts = Counter(v for v in votes if v is not None)
    if not counts:
        return None
    label, n = counts.most_common(1)[0]
    return label if 2 * n > len(votes) else None


@dataclass
class Asked:
    """One judge's answers to one unit: its labels over the repeats, the first parse, the swapped label."""

    labels: list[Any]
    first: Any  # the parse of the first reply (scorer-specific)
    first_reply: str
    swapped: Any = None
    swap_reply: str | None = None
    calls: int = 0
    reused: bool = False
    unswapped: Any = None
    """With swap and repeats > 1: the label of the same-order question asked at temperature 0,
    the like-for-like partner of the swapped one (with one question, ``labels[0]`` is that)."""

    @property
    def vote(self) -> Any:
        return strict_majority(self.labels)


async def generate(model, prompt: str, max_tokens: int | None, *, temperature: float = 0.0, repeat: int = 0,
                   dedupe: bool = True, what: str = "a judge"):
    """``(ModelOutput, reused)``: one judge call (``what`` names it in a
    :class:`~conflict_eval.answers.failures.ModelOutputError`).

    With ``dedupe``, a byte-identical prompt with the same budget sent to the
    same model object is sent once and its reply reused (``reused=True``; no
    call, no tokens); a concurrent identical call waits for the first one
    instead of racing it. The memory is per model object and event loop (one
    ``eval()`` run); a failed call is never remembered
    (:mod:`conflict_eval.answers.reuse`). The first question at temperature 0
    is the scorer's ordinary grader call (ConflictScore's grader without a
    panel shares its replies); a repeat or a sampled question has its own
    reuse key (the repeat number and temperature are part of it), so the N
    repeats of one prompt are N calls, and the same prompt in another sample
    reuses them."""
    from inspect_ai.model import GenerateConfig

    from conflict_eval.answers.failures import generate_checked
    from conflict_eval.answers.reuse import reuse_for

    config = GenerateConfig(temperature=temperature, max_tokens=max_tokens)
    reuse = reuse_for(model) if dedupe else None
    if reuse is None:
        return await generate_checked(model, prompt, what, config=config), False
    first = repeat == 0 and temperature == 0.0
    key = f"{max_tokens}\0{prompt}" if first else f"judge\0{max_tokens}\0{temperature}\0{repeat}\0{prompt}"
    return await reuse.call(hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest(),
                            lambda: generate_checked(model, prompt, what, config=config))


async def ask(judge: Judge, prompt: str, parse: Callable[[str], Any], label_of: Callable[[Any], Any],
              judging: Judging, max_tokens: int | None, dedupe: bool = True,
              swapped_prompt: str | None = None, what: str = "a judge") -> Asked:
    """Ask one judge one unit: ``judging.repeats`` times, plus the swapped prompt with ``judging.swap``.

    The swapped prompt is asked at temperature 0, and compared with the same-order prompt at
    temperature 0: the first question when there is one, else one more same-order question at
    temperature 0 (``Asked.unswapped``), so that the flip rate measures order alone and the
    repeats' sampling noise is reported apart (self-agreement)."""
    labels, first, first_reply, calls, reused0 = [], None, "", 0, False
    temperature = judging.used_temperature
    for r in range(judging.repeats):
        out, reused = await generate(judge.model, prompt, max_tokens, temperature=temperature, repeat=r, dedupe=dedupe,
                                     what=what)
        parsed = parse(out.completion)
        labels.append(label_of(parsed))
        calls += int(not reused)
        if r == 0:
            first, first_reply, reused0 = parsed, out.completion, reused
    asked = Asked(labels, first, first_reply, calls=calls, reused=reused0)
    if judging.swap and swapped_prompt is not None:
        if temperature != 0.0:
            out, reused = await generate(judge.model, prompt, max_tokens, temperature=0.0, dedupe=dedupe, what=what)
            asked.unswapped = label_of(parse(out.completion))
            asked.calls += int(not reused)
        out, reused = await generate(judge.model, swapped_prompt, max_tokens, temperature=0.0, dedupe=dedupe, what=what)
        asked.swapped, asked.swap_reply = label_of(parse(out.completion)), out.completion
        asked.calls += int(not reused)
    return asked


async def ask_panel(judges: list[Judge], make: Callable[[Judge], Awaitable[Asked]]) -> list[Asked]:
    return await collect_calls(*(make(j) for j in judges))


async def collect_calls(*calls: Awaitable[Any]) -> list[Any]:
    """Inspect's ``collect``, except that when several calls fail (two judges,
    two cells) the first failure itself is raised, not an ``ExceptionGroup``
    whose message, "unhandled errors in a TaskGroup", would become the
    sample's error; the count of the others is added as a note."""
    from inspect_ai.util import collect

    try:
        return list(await collect(*calls))
    except ExceptionGroup as group:
        leaves = []

        def flatten(exc: BaseException) -> None:
            if isinstance(exc, BaseExceptionGroup):
                for e in exc.exceptions:
                    flatten(e)
            else:
                leaves.append(exc)

        flatten(group)
        if len(leaves) > 1:
            leaves[0].add_note(f"({len(leaves) - 1} other concurrent grader call(s) failed too)")
        raise leaves[0] from leaves[0].__cause__


def unit_record(votes: list[list[Any]], swapped: list[Any] | None = None, reference: Any = None,
                unswapped: list[Any] | None = None, **where) -> dict:
    """What a unit keeps in ``Score.metadata["judges"]["units"]``: each judge's labels over the
    repeats, the majority, the swapped labels and their same-order partners at temperature 0
    (``unswapped``, only when the repeats ran at another temperature), a reference label."""
    rec: dict[str, Any] = {**where, "votes": votes, "majority": strict_majority([strict_majority(v) for v in votes])}
    if swapped is not None:
        rec["swapped"] = swapped
        if unswapped is not None and any(u is not None for u in unswapped):
            rec["unswapped"] = unswapped
    if reference is not None:
        rec["reference"] = reference
    return rec


def panel_metadata(judges: list[Judge], judging: Judging, units: list[dict]) -> dict:
    return {"judges": [j.name for j in judges], "sources": [j.source for j in judges],
            "repeats": judging.repeats, "temperature": judging.used_temperature, "swap": judging.swap,
            **({"swap_temperature": 0.0} if judging.swap else {}), "units": units}


# ---- statistics (pure functions of the unit records; tested on hand-computed tables)


def _vote(labels: list[Any]) -> Any:
    return strict_majority(labels)


def alpha(units: list[list[Any]]) -> float:
    """Krippendorff's alpha (nominal) over units of judge votes (``None`` =
    no vote, dropped), with Inspect's ``krippendorff_alpha`` metric; units
    with fewer than 2 votes do not count. NaN with no such unit."""
    from inspect_ai.scorer import Score, krippendorff_alpha

    rated = [[v for v in u if v is not None] for u in units]
    scores = [SampleScore(score=Score(value=r)) for r in rated if len(r) >= 2]
    if not scores:
        return float("nan")
    return float(krippendorff_alpha()(scores))


def wilson(k: int, n: int) -> dict:
    """``{"k", "n", "rate", "low", "high"}``: ``k`` of ``n`` with its 95% Wilson interval
    (``scipy.stats.binomtest(...).proportion_ci(method="wilson")``); rate and bounds NaN with ``n`` = 0."""
    if n == 0:
        return {"k": 0, "n": 0, "rate": float("nan"), "low": float("nan"), "high": float("nan")}
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
    return {"k": k, "n": n, "rate": k / n, "low": float(ci.low), "high": float(ci.high)}


def base_rates(labels: list[Any]) -> dict[Any, float]:
    """Share of each label among the readable ones (``None`` left out); {} with none."""
    rated = [x for x in labels if x is not None]
    return {lab: n / len(rated) for lab, n in sorted(Counter(rated).items(), key=lambda kv: str(kv[0]))}


def pair_agreement(a: list[Any], b: list[Any]) -> dict:
    """Two judges on the units where both are readable: ``units``, raw ``agreement`` (share of
    equal labels) and Cohen's ``kappa`` = (p_o - p_e) / (1 - p_e), p_e = sum over labels of the
    product of the two judges' base rates there (Cohen 1960). NaN when no unit, or p_e = 1 (one
    label only: kappa is undefined, not 0 or 1). Written here, not taken from scikit-learn
    (``cohen_kappa_score`` gives the same value), so that the metric needs no new dependency;
    ``tests/conflictscore/test_judge_panel.py`` checks it against hand-computed tables."""
    both = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    if not both:
        return {"units": 0, "agreement": float("nan"), "kappa": float("nan")}
    n = len(both)
    p_o = sum(x == y for x, y in both) / n
    ra, rb = base_rates([x for x, _ in both]), base_rates([y for _, y in both])
    p_e = sum(ra.get(lab, 0.0) * rb.get(lab, 0.0) for lab in set(ra) | set(rb))
    kappa = float("nan") if p_e >= 1 - 1e-12 else (p_o - p_e) / (1 - p_e)
    return {"units": n, "agreement": p_o, "kappa": kappa}


def effective_judges(k: int, correlations: list[float]) -> float:
    """The effective number of independent judges, ``k / (1 + (k - 1) * rho)``, with ``rho`` the
    mean pairwise correlation of the judges' 0/1 errors (:func:`error_correlation`): Kish's
    design effect 1 + (m - 1) rho for m equally correlated observations (Kish, *Survey
    Sampling*, 1965, sect. 5.4), applied to the k votes on a unit. ``k`` with one judge; NaN
    when no pair's correlation is defined (errors need reference labels)."""
    if k == 1:
        return 1.0
    rhos = [r for r in correlations if not math.isnan(r)]
    if not rhos:
        return float("nan")
    return k / (1 + (k - 1) * (sum(rhos) / len(rhos)))


def self_agreement(repeats: list[list[Any]]) -> float:
    """Share of units whose readable repeats (>= 2) all agree; NaN with none."""
    rated = [[v for v in r if v is not None] for r in repeats]
    rated = [r for r in rated if len(r) >= 2]
    return sum(len(set(r)) == 1 for r in rated) / len(rated) if rated else float("nan")


def flip_rate(pairs: list[tuple[Any, Any]]) -> float:
    """Share of (first label, swapped label) pairs, both readable, that differ; NaN with none."""
    both = [(a, b) for a, b in pairs if a is not None and b is not None]
    return sum(a != b for a, b in both) / len(both) if both else float("nan")


def accuracy(labels: list[Any], reference: list[Any]) -> float:
    """Share of readable labels equal to the reference (unreadable ones left out); NaN with none."""
    both = [(a, r) for a, r in zip(labels, reference) if a is not None and r is not None]
    return sum(a == r for a, r in both) / len(both) if both else float("nan")


def error_correlation(a: list[Any], b: list[Any], reference: list[Any]) -> float:
    """Pearson's r of two judges' 0/1 errors against ``reference`` on units
    where both are readable; NaN when either never (or always) errs there."""
    import numpy as np

    rows = [(x != r, y != r) for x, y, r in zip(a, b, reference) if x is not None and y is not None and r is not None]
    if len(rows) < 2:
        return float("nan")
    ea, eb = np.array(rows, dtype=float).T
    if ea.std() == 0 or eb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ea, eb)[0, 1])


@dataclass
class PanelSummary:
    """A cell's judge statistics (:func:`summarise`); :meth:`flat` is the metric's value."""

    judges: list[str]
    units: int
    alpha: float
    coverage: list[float]
    """Per judge: share of units with a readable vote (its label coverage)."""
    panel_coverage: float
    """Share of units with a determined strict-majority label (the score's label coverage)."""
    base_rates: list[dict[Any, float]]
    pairs: dict[str, dict] = field(default_factory=dict)
    """``"i_j"`` -> :func:`pair_agreement` of judges i and j (1-based)."""
    self_agreement: list[float] | None = None
    flip_rate: list[float] | None = None
    flips: tuple[int, int] | None = None
    """Pooled over the judges: (flipped, readable both ways)."""
    repeats: int = 1
    temperature: float = 0.0
    accuracy: list[dict] | None = None
    """Per judge and then the panel's majority: :func:`wilson` of correct / readable."""
    error_correlation: dict[str, float] = field(default_factory=dict)
    effective_judges: float = float("nan")

    def flat(self) -> dict[str, float]:
        """The metric's value: floats under stable keys (judges by position; names are in the metadata)."""
        n = len(self.judges)
        out = {"judges": float(n), "units": float(self.units), "repeats": float(self.repeats),
               "temperature": self.temperature, "coverage": self.panel_coverage}
        for i in range(n):
            out[f"coverage_{i + 1}"] = self.coverage[i]
            out.update({f"base_rate_{i + 1}_{lab}": v for lab, v in self.base_rates[i].items()})
        if n > 1:  # a panel: agreement between its judges
            out["alpha"] = self.alpha
            for key, p in self.pairs.items():
                out[f"kappa_{key}"], out[f"raw_agreement_{key}"] = p["kappa"], p["agreement"]
                out[f"pair_units_{key}"] = float(p["units"])
        for i, v in enumerate(self.self_agreement or []):
            out[f"self_agreement_{i + 1}"] = v
        if self.flip_rate is not None:
            for i, v in enumerate(self.flip_rate):
                out[f"flip_rate_{i + 1}"] = v
            flipped, both = self.flips or (0, 0)
            out["flip_rate"] = flipped / both if both else float("nan")  # pooled, not a mean of rates
            out["flip_units"], out["swap_temperature"] = float(both), 0.0
        for i, a in enumerate(self.accuracy or []):
            key = f"accuracy_{i + 1}" if i < n else "accuracy_panel"
            out[key], out[f"{key}_low"], out[f"{key}_high"] = a["rate"], a["low"], a["high"]
            out[f"{key}_n"] = float(a["n"])
        out.update({f"error_corr_{k}": v for k, v in self.error_correlation.items()})
        if self.accuracy is not None:
            out["effective_judges"] = self.effective_judges
        return out


def summarise(blocks: list[dict]) -> PanelSummary | None:
    """Pool the ``judges`` metadata blocks of a cell's samples (same panel)."""
    blocks = [b for b in blocks if b and b.get("judges")]
    if not blocks:
        return None
    names = blocks[0]["judges"]
    units = [u for b in blocks for u in b.get("units", [])]
    n = len(names)
    votes = [[_vote(u["votes"][j]) for j in range(n)] for u in units]
    per_judge = [[v[j] for v in votes] for j in range(n)]
    majority = [strict_majority(v) for v in votes]
    share = (lambda xs: sum(x is not None for x in xs) / len(xs) if xs else float("nan"))
    summary = PanelSummary(
        judges=names, units=len(units), alpha=alpha(votes), coverage=[share(p) for p in per_judge],
        panel_coverage=share(majority), base_rates=[base_rates(p) for p in per_judge],
        pairs={f"{i + 1}_{j + 1}": pair_agreement(per_judge[i], per_judge[j])
               for i in range(n) for j in range(i + 1, n)},
        repeats=int(blocks[0].get("repeats", 1)), temperature=float(blocks[0].get("temperature", 0)))
    if summary.repeats > 1:
        summary.self_agreement = [self_agreement([u["votes"][j] for u in units]) for j in range(n)]
    swapped = [u for u in units if "swapped" in u]
    if swapped:
        def pairs_of(j: int) -> list[tuple[Any, Any]]:
            # like with like: the swapped question (temperature 0) against the same order at temperature 0
            return [((u.get("unswapped") or [None] * n)[j] if summary.temperature != 0 else u["votes"][j][0],
                     u["swapped"][j]) for u in swapped]

        summary.flip_rate = [flip_rate(pairs_of(j)) for j in range(n)]
        both = [(a, b) for j in range(n) for a, b in pairs_of(j) if a is not None and b is not None]
        summary.flips = (sum(a != b for a, b in both), len(both))
    refs = [u.get("reference") for u in units]
    if any(r is not None for r in refs):
        def correct(labels: list[Any]) -> dict:
            rated = [(x, r) for x, r in zip(labels, refs) if x is not None and r is not None]
            return wilson(sum(x == r for x, r in rated), len(rated))

        summary.accuracy = [correct(p) for p in per_judge] + ([correct(majority)] if n > 1 else [])
        for i in range(n):
            for j in range(i + 1, n):
                summary.error_correlation[f"{i + 1}_{j + 1}"] = error_correlation(per_judge[i], per_judge[j], refs)
        summary.effective_judges = effective_judges(n, list(summary.error_correlation.values()))
    return summary


@metric(name="judge_panel")
def judge_panel() -> Metric:
    """:func:`summarise` over the samples' ``Score.metadata["judges"]`` ({} with no panel data)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        s = summarise([(x.score.metadata or {}).get("judges") for x in scores])
        return s.flat() if s else {}

    return compute
