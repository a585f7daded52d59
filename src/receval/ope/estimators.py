r"""The off-policy estimators: each an exactly defined spec with declared options.

Notation: round :math:`i = 1..n` of the log shows item :math:`a_i` in context :math:`x_i` (at
position :math:`k_i` when the log has positions) with reward :math:`r_i`; the logging policy
chose it with probability :math:`\mu_i = \mu(a_i \mid x_i, k_i)` (the log's propensity), the
target policy with :math:`\pi_i = \pi(a_i \mid x_i, k_i)` (0 for an item the target does not
list). The importance weight is :math:`w_i = \pi_i / \mu_i`; with ``floor=f`` the propensity
is first raised to :math:`\max(\mu_i, f)`, with ``cap=c`` the weight is then lowered to
:math:`\min(w_i, c)` (obp's ``lambda_``). No round is ever dropped. A reward model gives
:math:`\hat q(x, a, k)`; :math:`\hat q_i = \hat q(x_i, a_i, k_i)` and
:math:`\hat V_i = \sum_a \pi(a \mid x_i, k_i)\, \hat q(x_i, a, k_i)` (the reward model's value of
the target in that round).

Every estimator is written as :math:`\hat V = \frac1n \sum_i A_i + \sum_i B_i / \sum_i C_i`
(the parts :class:`Parts`; :math:`B = 0` for the estimators that are plain means), so that
its per-round terms, its normal (delta-method) interval and its bootstrap share one code path.

The slate estimators (``iips``, ``rips``, ``sips``) read a log with positions whose rounds are
slates: the rows of one context. The value is the mean over slates of the sum over positions.

The shared worked example (the doctests): four rounds, items ``a``/``b``::

    context  item  reward  propensity   target pi(a), pi(b)   w
    1        a     1       0.5          0.8, 0.2              1.6
    2        b     0       0.5          0.8, 0.2              0.4
    3        a     0       0.25         1.0, 0               4.0
    4        b     1       0.75         0.5, 0.5              2/3
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import SpecError, did_you_mean
from ..plaintext import Documented

#: the example log and target of every doctest (see the module docstring)
EXAMPLE_LOG = {"context_id": [1, 2, 3, 4], "item_id": ["a", "b", "a", "b"], "reward": [1.0, 0.0, 0.0, 1.0],
               "propensity": [0.5, 0.5, 0.25, 0.75]}
EXAMPLE_TARGET = {"context_id": [1, 1, 2, 2, 3, 4, 4], "item_id": ["a", "b", "a", "b", "a", "a", "b"],
                  "propensity": [0.8, 0.2, 0.8, 0.2, 1.0, 0.5, 0.5]}
#: a reward model for the example: q(x, a) = 0.6 for a, 0.3 for b, in every context
EXAMPLE_REWARDS = {"context_id": [1, 1, 2, 2, 3, 3, 4, 4], "item_id": ["a", "b"] * 4, "estimate": [0.6, 0.3] * 4}
#: the slate example of the slate estimators' doctests (:func:`receval.examples.slated`): one
#: context whose logged slate a, b (both rewarded) has per-position propensities 0.5, 0.5,
#: cascade 0.5, 0.25 and joint 0.25; the target ranks a, b
EXAMPLE_SLATES = {"context_id": [1, 1], "item_id": ["a", "b"], "position": [1, 2], "reward": [1.0, 1.0],
                  "propensity": [0.5, 0.5], "cascade_propensity": [0.5, 0.25], "joint_propensity": [0.25, 0.25]}
EXAMPLE_SLATE_TARGET = {"context_id": [1, 1], "item_id": ["a", "b"], "rank": [1, 2]}


@dataclass(frozen=True)
class Option:
    """One option of an estimator: its default and its meaning (numbers; None is written 'none')."""

    name: str
    default: float | None
    doc: str
    low: float = 0.0
    low_open: bool = True
    high: float | None = None

    def parse(self, raw: Any) -> float | None:
        if raw is None or isinstance(raw, str) and raw.strip().lower() in ("none", "inf"):
            return None
        try:
            if isinstance(raw, bool):
                raise ValueError
            value = float(raw.strip() if isinstance(raw, str) else raw)
        except (TypeError, ValueError):
            raise SpecError(f"write {self.name}= as a number or none, got {raw!r}") from None
        below = value <= self.low if self.low_open else value < self.low
        if not math.isfinite(value) or below or self.high is not None and value > self.high:
            rng = f"{'>' if self.low_open else '>='} {render(self.low)}" + (f" and <= {render(self.high)}" if self.high else "")
            raise SpecError(f"write {self.name}= as a number {rng} (or none), got {raw!r}")
        return value


def render(value: float | None) -> str:
    """A number as a spec or a signature writes it: ``10``, ``0.05``, ``none``.

    >>> render(10.0), render(0.05), render(None)
    ('10', '0.05', 'none')
    """
    if value is None:
        return "none"
    return repr(float(value)).removesuffix(".0") if float(value).is_integer() else repr(float(value))


CAP = Option("cap", None, "clip every weight at this value: w = min(pi/mu, cap) (obp's lambda_); none: no clipping")
FLOOR = Option("floor", None, "raise every logging propensity below this value to it: mu = max(mu, floor); none: as logged",
               high=1.0)
TAU = Option("tau", 1.0, "switch threshold: the correction term of a round is kept only when w <= tau (obp 0.4's default 1)",
             low_open=False)


@dataclass
class Parts:
    """An estimate as :math:`\\frac1n\\sum A + \\sum B / \\sum C` over rounds (``b``/``c`` None:
    no self-normalised part), with the weights it used (for the diagnostics; None for the
    estimators without weights), the weights before ``cap``/``floor`` and which rounds they changed."""

    a: np.ndarray
    b: np.ndarray | None = None
    c: np.ndarray | None = None
    w: np.ndarray | None = None
    raw_w: np.ndarray | None = None
    changed: np.ndarray | None = None


@dataclass(frozen=True)
class Estimator(Documented):
    """A registered estimator: name, options, what it reads, its function."""

    name: str
    fn: Callable[..., Parts]
    options: tuple[Option, ...] = ()
    #: "item": a term per log row; "slate": a term per slate (the rows of a context)
    level: str = "item"
    rewards: bool = False
    normalised: bool = False
    #: the weight it applies, as the signature's `w` field writes it (None: no weight)
    weight: str | None = "pi/mu"
    references: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    def documented(self) -> object:
        return self.fn

    def option(self, key: str) -> Option:
        for o in self.options:
            if o.name == key:
                return o
        names = [o.name for o in self.options]
        if not names:
            raise SpecError(f"write '{self.name}' without options: estimator '{self.name}' takes none, got `{key}`")
        raise SpecError(f"estimator '{self.name}' has no option `{key}`{did_you_mean(key, names)}")


ESTIMATORS: dict[str, Estimator] = {}


def _register(name: str, **kw: Any) -> Callable[[Callable[..., Parts]], Callable[..., Parts]]:
    def deco(fn: Callable[..., Parts]) -> Callable[..., Parts]:
        ESTIMATORS[name] = Estimator(name, fn, **kw)
        return fn

    return deco


# ---- the item-level estimators ----------------------------------------------------------------------


def weights(d: Any, o: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(w, raw w, changed)``: the weights after ``floor`` then ``cap``, before them, and the rounds they changed."""
    raw = d.pi / d.mu
    mu = d.mu if o.get("floor") is None else np.maximum(d.mu, o["floor"])
    w = d.pi / mu
    if o.get("cap") is not None:
        w = np.minimum(w, o["cap"])
    return w, raw, w != raw


@_register("naive", weight=None)
def naive(d: Any, o: dict[str, Any]) -> Parts:
    r"""The logging policy's own mean reward (on-policy): what the logs say without any weight.

    Formula
    -------
    .. math::

        \hat V_{\mathrm{naive}} = \frac1n \sum_i r_i

    It estimates the *logging* policy's value, not the target's: shown beside the others for
    comparison. Example: the rewards 1, 0, 0, 1 give 0.5.

    >>> from receval.ope import evaluate
    >>> from receval.ope.estimators import EXAMPLE_LOG, EXAMPLE_TARGET
    >>> evaluate(EXAMPLE_LOG, EXAMPLE_TARGET, ["naive"]).value("naive")
    0.5
    """
    return Parts(a=d.reward.astype(np.float64))


@_register("ips", options=(CAP, FLOOR), references="Horvitz & Thompson 1952; Strehl et al. 2010 (clipping: obp's lambda_)")
def ips(d: Any, o: dict[str, Any]) -> Parts:
    r"""Inverse propensity scoring: the mean of the weighted rewards.

    Formula
    -------
    .. math::

        \hat V_{\mathrm{IPS}} = \frac1n \sum_i w_i\, r_i, \qquad
        w_i = \min\!\Big(\frac{\pi_i}{\max(\mu_i, f)},\ c\Big)

    (:math:`f` = ``floor``, :math:`c` = ``cap``; without them :math:`w_i = \pi_i/\mu_i`). Unbiased
    when the propensities are right and the target shows no item the logging policy could
    not show; ``cap`` and ``floor`` trade that for less variance (a downward bias).
    Example: (1.6·1 + 0.4·0 + 4·0 + 2/3·1) / 4 = 0.5666…; with ``cap=1``: (1 + 2/3) / 4 = 0.41666…

    >>> from receval.ope import evaluate
    >>> from receval.ope.estimators import EXAMPLE_LOG, EXAMPLE_TARGET
    >>> r = evaluate(EXAMPLE_LOG, EXAMPLE_TARGET, ["ips", "ips(cap=1)"])
    >>> round(r.value("ips"), 12), round(r.value("ips(cap=1)"), 12)
    (0.566666666667, 0.416666666667)
    """
    w, raw, changed = weights(d, o)
    return Parts(a=w * d.reward, w=w, raw_w=raw, changed=changed)


@_register("snips", options=(CAP, FLOOR), normalised=True, references="Swaminathan & Joachims 2015")
def snips(d: Any, o: dict[str, Any]) -> Parts:
    r"""Self-normalised IPS: the weighted rewards divided by the sum of the weights.

    Formula
    -------
    .. math::

        \hat V_{\mathrm{SNIPS}} = \frac{\sum_i w_i\, r_i}{\sum_i w_i}

    (:math:`w_i` as for ``ips``, with its ``cap`` and ``floor``). Biased (a ratio), but bounded
    by the rewards and usually far less noisy than IPS; obp's SNIPW. Its interval is the
    delta method's (or a bootstrap that recomputes the ratio). Example:
    (1.6 + 2/3) / (1.6 + 0.4 + 4 + 2/3) = 0.34.

    >>> from receval.ope import evaluate
    >>> from receval.ope.estimators import EXAMPLE_LOG, EXAMPLE_TARGET
    >>> round(evaluate(EXAMPLE_LOG, EXAMPLE_TARGET, ["snips"]).value("snips"), 12)
    0.34
    """
    w, raw, changed = weights(d, o)
    return Parts(a=np.zeros(d.n), b=w * d.reward, c=w, w=w, raw_w=raw, changed=changed)


@_register("dm", rewards=True, weight=None, references="Beygelzimer & Langford 2009")
def dm(d: Any, o: dict[str, Any]) -> Parts:
    r"""Direct method: the reward model's value of the target policy, averaged over the logged rounds.

    Formula
    -------
    .. math::

        \hat V_{\mathrm{DM}} = \frac1n \sum_i \sum_a \pi(a \mid x_i, k_i)\, \hat q(x_i, a, k_i)

    No weights, so little variance, but as biased as the reward model (the logged rewards are
    not read). The reward model must give an estimate for every item the target gives a
    probability > 0. obp divides by :math:`\sum_a \pi(a \mid x_i, k_i)`, the same number when
    the target's probabilities sum to 1 in every round. Example (q = 0.6 for a, 0.3 for b):
    (0.54 + 0.54 + 0.6 + 0.45) / 4 = 0.5325.

    >>> from receval.ope import evaluate
    >>> from receval.ope.estimators import EXAMPLE_LOG, EXAMPLE_TARGET, EXAMPLE_REWARDS
    >>> round(evaluate(EXAMPLE_LOG, EXAMPLE_TARGET, ["dm"], rewards=EXAMPLE_REWARDS).value("dm"), 12)
    0.5325
    """
    return Parts(a=d.qpi.copy())


@_register("dr", options=(CAP, FLOOR), rewards=True, references="Dudík, Langford & Li 2011")
def dr(d: Any, o: dict[str, Any]) -> Parts:
    r"""Doubly robust: the direct method plus the weighted error of the reward model on the logged item.

    Formula
    -------
    .. math::

        \hat V_{\mathrm{DR}} = \frac1n \sum_i \Big(\hat V_i + w_i\,(r_i - \hat q_i)\Big)

    (:math:`w_i` as for ``ips``, with its ``cap`` and ``floor``: obp's DR with ``lambda_``).
    Unbiased when either the propensities or the reward model are right; less noisy than IPS
    when the model is good. Example: 0.5325 + (1.6·0.4 + 0.4·(−0.3) + 4·(−0.6) + 2/3·0.7) / 4 = 0.17916…

    >>> from receval.ope import evaluate
    >>> from receval.ope.estimators import EXAMPLE_LOG, EXAMPLE_TARGET, EXAMPLE_REWARDS
    >>> round(evaluate(EXAMPLE_LOG, EXAMPLE_TARGET, ["dr"], rewards=EXAMPLE_REWARDS).value("dr"), 12)
    0.179166666667
    """
    w, raw, changed = weights(d, o)
    return Parts(a=d.qpi + w * (d.reward - d.q), w=w, raw_w=raw, changed=changed)


@_register("switch_dr", options=(TAU,), rewards=True, references="Wang, Agarwal & Dudík 2017; obp 0.4 SwitchDoublyRobust")
def switch_dr(d: Any, o: dict[str, Any]) -> Parts:
    r"""Switch doubly robust: DR, whose correction term is dropped in the rounds with a weight above ``tau``.

    Formula
    -------
    .. math::

        \hat V_{\mathrm{SwitchDR}} = \frac1n \sum_i \Big(\hat V_i + \mathbb 1[w_i \le \tau]\; w_i\,(r_i - \hat q_i)\Big)

    with :math:`w_i = \pi_i / \mu_i` (no cap, no floor) and :math:`\tau` = ``tau`` (default 1,
    obp 0.4.1's; obp 0.5 defaults to infinity, which is ``dr``). Those rounds keep the direct
    method's term only: less variance, the reward model's bias there. Example with tau=1:
    rounds 2 and 4 keep their correction: 0.5325 + (0.4·(−0.3) + 2/3·0.7) / 4 = 0.61916…

    >>> from receval.ope import evaluate
    >>> from receval.ope.estimators import EXAMPLE_LOG, EXAMPLE_TARGET, EXAMPLE_REWARDS
    >>> round(evaluate(EXAMPLE_LOG, EXAMPLE_TARGET, ["switch_dr"], rewards=EXAMPLE_REWARDS).value("switch_dr"), 12)
    0.619166666667
    """
    raw = d.pi / d.mu
    keep = raw <= o["tau"]
    w = np.where(keep, raw, 0.0)
    return Parts(a=d.qpi + w * (d.reward - d.q), w=w, raw_w=raw, changed=~keep)


@_register("sndr", rewards=True, normalised=True, references="obp 0.4 SelfNormalizedDoublyRobust")
def sndr(d: Any, o: dict[str, Any]) -> Parts:
    r"""Self-normalised doubly robust: DR whose correction term is divided by the sum of the weights, not by n.

    Formula
    -------
    .. math::

        \hat V_{\mathrm{SNDR}} = \frac1n \sum_i \hat V_i + \frac{\sum_i w_i\,(r_i - \hat q_i)}{\sum_i w_i}

    (:math:`w_i = \pi_i/\mu_i`). As obp's SelfNormalizedDoublyRobust. Example:
    0.5325 + (0.64 − 0.12 − 2.4 + 0.4666…) / 6.6666… = 0.3205.

    >>> from receval.ope import evaluate
    >>> from receval.ope.estimators import EXAMPLE_LOG, EXAMPLE_TARGET, EXAMPLE_REWARDS
    >>> round(evaluate(EXAMPLE_LOG, EXAMPLE_TARGET, ["sndr"], rewards=EXAMPLE_REWARDS).value("sndr"), 12)
    0.3205
    """
    w = d.pi / d.mu
    return Parts(a=d.qpi.copy(), b=w * (d.reward - d.q), c=w, w=w, raw_w=w, changed=np.zeros(d.n, dtype=bool))


# ---- the slate estimators: a term per slate (the rows of one context) --------------------------


def _per_slate(d: Any, w: np.ndarray, raw: np.ndarray) -> Parts:
    """Per-slate sums of ``w * reward`` (rows in slate then position order: the sums do not depend on the row order)."""
    o = d.slate_order
    a = np.bincount(d.slate[o], weights=(w * d.reward)[o], minlength=d.n_slates)
    return Parts(a=a, w=w, raw_w=raw, changed=np.zeros(len(w), dtype=bool))


@_register("iips", level="slate", weight="pi_k/mu_k", references="Li et al. 2018 (item-position model); obp SlateIndependentIPS")
def iips(d: Any, o: dict[str, Any]) -> Parts:
    r"""Independent IPS for slates: each position weighted by its own item's weight.

    Formula
    -------
    .. math::

        \hat V_{\mathrm{IIPS}} = \frac1S \sum_s \sum_k \frac{\pi(a_{s,k} \mid x_s, k)}{\mu(a_{s,k} \mid x_s, k)}\, r_{s,k}

    over the :math:`S` slates (the rows of a context) and their positions :math:`k`, with the
    per-position propensities. Unbiased when a position's reward depends only on its own item
    (the item-position model); the least noisy of the three. Example: the slate a, b with
    per-position propensities 0.5, the target ranks a, b (probability 1): 1/0.5 + 1/0.5 = 4.

    >>> from receval.examples import slated
    >>> slated("iips")    # (1/0.5)*1 + (1/0.5)*1
    4.0
    """
    w = d.pi / d.mu
    return _per_slate(d, w, w)


@_register("rips", level="slate", weight="pi_1:k/mu_1:k", references="McInerney et al. 2020 (cascade); obp SlateRewardInteractionIPS")
def rips(d: Any, o: dict[str, Any]) -> Parts:
    r"""Reward-interaction (cascade) IPS for slates: each position weighted by the weight of the slate down to it.

    Formula
    -------
    .. math::

        \hat V_{\mathrm{RIPS}} = \frac1S \sum_s \sum_k
        \frac{\pi(a_{s,1..k} \mid x_s)}{\mu(a_{s,1..k} \mid x_s)}\, r_{s,k}

    :math:`\mu(a_{s,1..k} \mid x_s)` is the log's ``cascade_propensity`` (the logging policy's
    probability of the slate's first k items); :math:`\pi(a_{s,1..k} \mid x_s)` the target's
    ``cascade_propensity`` column when it has one (its rows of the logged items), else the
    product of its per-position probabilities of the logged items down to k (``pislate:product``
    in the signature; exact for a deterministic ranking). Unbiased when a position's reward
    depends only on the items above it and itself (the cascade model). Example: the slate a, b,
    the target a, b (probability 1), cascade propensities 0.5 and 0.25: 1/0.5 + 1/0.25 = 6.

    >>> from receval.examples import slated
    >>> slated("rips")
    6.0
    """
    w = d.pi_cascade / d.mu_cascade
    return _per_slate(d, w, w)


@_register("sips", level="slate", weight="pi_slate/mu_slate", references="Swaminathan et al. 2017; McInerney et al. 2020; obp SlateStandardIPS")
def sips(d: Any, o: dict[str, Any]) -> Parts:
    r"""Standard slate IPS: every position weighted by the weight of the whole slate.

    Formula
    -------
    .. math::

        \hat V_{\mathrm{SIPS}} = \frac1S \sum_s \frac{\pi(a_{s,1..K} \mid x_s)}{\mu(a_{s,1..K} \mid x_s)} \sum_k r_{s,k}

    :math:`\mu(a_{s,1..K} \mid x_s)` is the log's ``joint_propensity`` (one value per slate),
    :math:`\pi` the target's ``joint_propensity`` column or the product of its per-position
    probabilities of the logged items (``pislate:product``). Unbiased with no model of the
    user at all, and the noisiest: the joint weights of long slates are huge. Example: the
    slate a, b as the target ranks it, joint propensity 0.25: (1 + 1)/0.25 = 8.

    >>> from receval.examples import slated
    >>> slated("sips")
    8.0
    """
    w = d.pi_joint / d.mu_joint
    return _per_slate(d, w, w)


# ---- specs -------------------------------------------------------------------------------------------

import re  # noqa: E402

_SPEC = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*(?:\(([^()]*)\))?\s*$")


@dataclass(frozen=True)
class EstimatorSpec:
    """An estimator with every option resolved (defaults filled in)."""

    name: str
    options: tuple[tuple[str, float | None], ...] = ()

    @property
    def estimator(self) -> Estimator:
        return ESTIMATORS[self.name]

    @property
    def opts(self) -> dict[str, float | None]:
        return dict(self.options)

    def canonical(self) -> str:
        """The name with the options that differ from their defaults, sorted: ``ips(cap=10)``."""
        est = self.estimator
        shown = [f"{k}={render(v)}" for k, v in sorted(self.options) if v != est.option(k).default]
        return self.name + (f"({','.join(shown)})" if shown else "")

    def __str__(self) -> str:
        return self.canonical()


def parse_estimator(text: Any) -> EstimatorSpec:
    """Parse ``name`` or ``name(option=value, ...)``.

    >>> str(parse_estimator("IPS( cap = 10.0 )")), parse_estimator("snips").opts
    ('ips(cap=10)', {'cap': None, 'floor': None})
    >>> parse_estimator("ipw")
    Traceback (most recent call last):
    receval.errors.SpecError: unknown estimator 'ipw'; did you mean 'ips'?
    """
    if isinstance(text, EstimatorSpec):
        return text
    if not isinstance(text, str):
        raise SpecError(f"write an estimator as a string like 'ips' or 'ips(cap=10)', got {text!r}")
    m = _SPEC.match(text.lower())
    if not m:
        raise SpecError(f"write the estimator as name or name(option=value,...), e.g. 'ips(cap=10)'; got '{text}'")
    name = m[1]
    if name not in ESTIMATORS:
        raise SpecError(f"unknown estimator '{name}'{did_you_mean(name, ESTIMATORS)}")
    est = ESTIMATORS[name]
    given: dict[str, float | None] = {}
    for part in (m[2] or "").split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise SpecError(f"write option '{part.strip()}' in '{text}' as key=value")
        key, raw = (s.strip() for s in part.split("=", 1))
        if key in given:
            raise SpecError(f"give option `{key}` once in '{text}'")
        given[key] = est.option(key).parse(raw)
    return EstimatorSpec(name, tuple((o.name, given.get(o.name, o.default)) for o in est.options))


__all__ = ["ESTIMATORS", "Estimator", "EstimatorSpec", "Option", "Parts", "parse_estimator", "render", "weights"]
