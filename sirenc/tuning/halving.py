"""Successive halving over the plans the analysis accepts: short pilot runs of every plan, then
longer ones of fewer, until the best is known well enough or the time budget is spent.

The references come first: the program as written under each symbolic method asked for, and
pf's one plan, which are what the user has without tune. They are screened before the other
plans, and the first of them that compiles is compiled before the others are screened, whatever
the budget says, so that every plan tune may choose has been raced against one of them; where the
budget allows nothing else, that reference is the choice.

Rung 1 compiles every plan, the references first and then the others in the cost model's order
(screening.cost_key), and runs it once untimed (that run pays for what a model's first run pays
once); then ``runs`` runs of each with one particle. A plan whose runs all give the same
estimate is exact, and done: one particle reaches any target. The others get ``runs`` runs at
the schedule's first particle count. The runs of a rung are interleaved across its plans (run k
of each, then run k + 1), so that a drift in the machine's speed falls on all of them alike.
After each rung every plan's particles and time to the target are estimated (accuracy.py), and
the plans still in the race are cut to the best fraction ``keep`` by that time (at least
``MIN_KEEP`` stay), less any predicted ``CLEARLY`` times slower than the best. At the next rung
a plan runs at the next count of the schedule, or at ``MARGIN`` times the particles it is
predicted to need where that is fewer. A plan that reached the target at a count it was run with
is run once more between that count and the last one that did not, where interpolating says
``REFINE`` times fewer particles may do; then it is settled and runs no more. So the budget goes
to the plans that may win, at the particle counts that decide.

With a time budget, each round's analysis stops at ``SCREEN_SHARE`` of its time and its
compiling at ``COMPILE_SHARE`` (the plans not compiled by then, the last in the cost model's
order, wait for the next round, or are not run), so that the pilot runs have the rest. A plan's
compiling goes on from where its screening stopped (after the analysis and tier 2's
specialisation), so that work is done once a plan.

A run is stopped, and its plan dropped, when it takes ``RUN_SLACK`` times longer than the best
time to the target predicted for another plan (and longer than ``RUN_FLOOR``): that one run
already costs more than the other plan's whole answer. With a time budget, the plans of a
rung whose runs' predicted time does not fit what is left are not run at it (the worst first),
a run still going at the deadline is stopped, and the race ends there.

A reference is never dropped, by the halving or by a run's limit: the choice is raced to the end
against what the user has without tune, so that tune does not pick a plan slower than it on the
strength of one early rung. A round of the race that settles with time left lets in the plans
the earlier rounds did not analyse or compile, until the budget is spent or every plan has run.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from sirenc import methods
from sirenc.diagnostics import SirenError, SirenPlanError, SirenUsageError
from sirenc.tuning import accuracy, choice
from sirenc.tuning.pilots import Group, Overtime, ragged, result_layout, run_once, run_seed
from sirenc.tuning.plans import Candidate, Program
from sirenc.tuning.result import CHOSEN, DROPPED, FAILED, NOT_RUN, RACING, REJECTED, TIED, Row, Tuning, target_text
from sirenc.tuning.screening import Options, Verdict, compile_model, cost_key, restore_source, screen

CLEARLY = 10.0
RUN_SLACK = 3.0
RUN_FLOOR = 0.01         # seconds: a shorter run is finished, and its group decides by its numbers
MARGIN = 1.2
REFINE = 1.5             # a count that reached the target is refined when this much fewer may do
MIN_KEEP = 2
RESERVE = 0.05           # of the budget, kept for the final choice
COMPILE_SHARE = 0.6      # of a round's time, at most, for the analysis and compiling: the rest is for runs
SCREEN_SHARE = 0.3       # of a round's time, at most, for the analysis: compiling has the rest of its share
PREFILTER = 100.0        # the pooled reference looks only at groups this close to the most accurate


@dataclass(frozen=True)
class Settings:
    target: float | tuple[float, ...] | None      # a tuple: one per part of the result
    budget: float | None
    seed: int
    schedule: tuple[int, ...]
    runs: int
    keep: float
    bootstrap: int
    memory_limit: Any
    rows: Any                      # rows for Filter.run, or None
    data: str | None               # a CSV replacing the program's data file, or None
    options: Options


@dataclass
class Trial:
    candidate: Candidate
    row: Row
    verdict: Verdict | None = None
    model: Any = None
    groups: list[Group] = field(default_factory=list)
    exact: bool = False
    prediction: accuracy.Prediction | None = None
    error: SirenError | None = None       # what stopped a run of it, if one failed

    @property
    def key(self) -> tuple:
        return cost_key(self.candidate, self.verdict)

    @property
    def index(self) -> int:
        return self.candidate.index

    @property
    def reference(self) -> bool:
        """What the user has without tune: the program as written under a symbolic method, and
        pf's one plan. These are compiled and run first."""
        return self.candidate.as_written or not methods.get(self.candidate.method).symbolic

    @property
    def racing(self) -> bool:
        return self.row.status == RACING

    @property
    def measured(self) -> int:
        return max(g.particles for g in self.groups)

    @property
    def seconds(self) -> float:
        return math.inf if self.prediction is None else float(self.prediction.seconds[0])


class Search:
    def __init__(self, program: Program, candidates: list[Candidate], settings: Settings,
                 progress: Callable[[str], object] | None = None, cluster: Any = None):
        self.program = program
        self.cluster = cluster                  # a tuning.cluster.Cluster, or None: runs in this process
        self.settings = settings
        self.trials = [Trial(c, Row(c.index, c.method, dict(c.plan))) for c in candidates]
        self.progress = progress
        self.start = time.perf_counter()
        budget = settings.budget
        self.deadline = None if budget is None else self.start + budget * (1 - RESERVE)
        self.compile_time: float | None = None      # the longest compile so far
        # With a target per part, each part's error is measured in units of its target, and
        # the target is 1 (accuracy.error's weights, set once the result's parts are known).
        self.part_targets = settings.target if isinstance(settings.target, tuple) else None
        self.target = 1.0 if self.part_targets is not None else settings.target
        self.weights: np.ndarray | None = None
        self.exhausted = False        # the budget ran out: nothing more is started
        self.rungs = 0
        self.opened = self.start      # the start of the phase whose share of the time ``late`` keeps
        self.parts: np.ndarray | None = None      # each number's part of the result (pilots.parts)

    # ---------------------------------------------------------------- the three phases

    def run(self) -> Tuning:
        try:
            references = self.screen([t for t in self.trials if t.reference])
            for t in sorted(references, key=lambda t: t.key):
                if self.compile(t):      # the first that compiles: what tune measures the others against
                    break
            alive = self.race(references)
            if not alive and all(t.row.status == REJECTED for t in self.trials):
                raise SirenPlanError("the plan analysis rejects every plan tune tried under the methods asked for; "
                                     f"the first one's diagnostic:\n{self.trials[0].verdict.diagnostic}")
        finally:
            restore_source(self.program)
            for t in self.trials:
                if t.verdict is not None:
                    t.verdict.compilation = None       # the IR of a plan never compiled
        return self.finish(alive)

    def screen(self, trials: list[Trial]) -> list[Trial]:
        """The analysis' verdict on each of ``trials`` until its share of the round's time is
        spent; the accepted ones."""
        accepted, spent = [], 0.0
        for t in trials:
            if self.late(spent, SCREEN_SHARE):
                t.row.reason = "the time budget ran out before the analysis reached it"
                continue
            self.say(f"analysing plan {t.index + 1}/{len(self.trials)}")
            began = time.perf_counter()
            t.verdict = screen(self.program, t.candidate, self.settings.options)
            spent = time.perf_counter() - began
            t.row.tier, t.row.inferred, t.row.reason = t.verdict.tier, t.verdict.inferred, None
            if t.verdict.accepted:
                t.row.status = RACING
                accepted.append(t)
            else:
                t.row.status, t.row.reason, t.row.location = REJECTED, t.verdict.reason, t.verdict.location
        return accepted

    def race(self, accepted: list[Trial]) -> list[Trial]:
        """Rounds of successive halving. Each analyses as many of the plans not yet analysed,
        and compiles and pilots as many of those accepted and not yet compiled, as its share of
        the time left allows (``screen``, ``first_rung``), then halves the field until every
        plan in it is settled or the budget is spent. A round that ends with time left lets in
        the plans the ones before did not reach."""
        alive, waiting, rung = [], list(accepted), 0
        while not self.exhausted:
            self.opened = time.perf_counter()
            unread = [t for t in self.trials if t.verdict is None]
            waiting = sorted(waiting + self.screen(unread), key=lambda t: t.key)
            analysed = any(t.verdict is not None for t in unread)
            entered = self.first_rung(waiting, rung + 1) if waiting else []
            waiting = [t for t in waiting if t.racing and t.model is None]
            if not entered:
                if analysed:
                    continue             # the round's share went to the analysis: the next compiles
                break
            rung += 1
            alive = [t for t in alive + entered if t.racing and t.groups]
            self.estimate(self.piloted(), retarget=True)
            while not self.exhausted and any(self.next_particles(t) for t in alive):
                alive = self.halve(alive, rung)
                rung += 1
                self.lap([(t, self.next_particles(t)) for t in sorted(alive, key=lambda t: (t.seconds, t.key))
                          if self.next_particles(t) is not None], rung)
                alive = [t for t in alive if t.racing and t.groups]
                self.estimate(self.piloted(), retarget=True)
        return alive

    def finish(self, alive: list[Trial]) -> Tuning:
        s = self.settings
        for t in self.trials:
            if t.racing and t not in alive:      # accepted, never run: the budget ran out first
                t.row.status = NOT_RUN
                t.row.reason = t.row.reason or "the time budget ran out before it was run"
            t.model = None                       # the compiled code goes with its last reference
        if not alive:
            failed = next((t for t in self.trials if t.row.status == FAILED), None)
            if failed is not None:
                raise failed.error            # every plan that ran failed: say why the first did
            if any(t.row.status == NOT_RUN for t in self.trials):
                raise SirenUsageError("the time budget ran out before any plan could be run: give a larger one")
            first = next(t for t in self.trials if t.row.status == REJECTED)
            raise SirenPlanError(f"no plan the analysis accepts could be compiled; the first: {first.row.reason}")
        rng = np.random.default_rng([s.seed, 0x7E5A])
        piloted = self.piloted()
        picks = {(t.index, i): choice.resamplings(g.runs, s.bootstrap, rng)
                 for t in piloted for i, g in enumerate(t.groups)}
        # Every plan with runs is compared, the dropped ones too (a plan dropped on the noise of
        # a rung may be as fast); the choice is among those that stayed in the race to the end.
        compared = alive + [t for t in piloted if t.row.status == DROPPED]
        if s.target is not None and not any(math.isfinite(t.seconds) for t in compared):
            closest = min(compared, key=lambda t: (t.row.error, t.key))
            reached = (f"the closest, {closest.row.describe()}, reached {closest.row.error:.3g} with "
                       f"{closest.row.error_particles} particles")
            within = f"the target error {target_text(s.target)} with at most {max(s.schedule)} particles a run"
            if self.exhausted:
                raise SirenUsageError(f"the time budget ran out before a plan was seen to reach {within} ({reached}): "
                                      "give a larger budget")
            raise SirenUsageError(f"no plan reaches {within}; {reached}: give a larger target error, or allow more "
                                  "particles (--max-particles)")
        resampled = self.predictions(piloted, compared, picks)
        times = np.stack([resampled[t.index].seconds for t in compared])
        c = choice.choose(times, np.array([t.seconds for t in compared]), [(not t.exact, t.key) for t in compared],
                          len(alive))
        for j, t in enumerate(compared):
            t.row.wins = float(c.wins[j])
            if j == c.chosen:
                t.row.status = CHOSEN
            elif j in (c.leader, *c.ties):
                t.row.status = TIED
            elif t in alive:
                t.row.status, t.row.rung, t.row.reason = DROPPED, self.rungs, "slower than the chosen plan"
        target = self.target if self.part_targets is None else self.part_targets
        return Tuning(self.program, [t.row for t in self.trials], compared[c.chosen].row, target,
                      s.target is not None, "exact" if self.exact() else "pooled", c.win_share, c.regret,
                      s.bootstrap, self.rungs, time.perf_counter() - self.start, s.seed)

    # ---------------------------------------------------------------- the pilot runs

    def first_rung(self, waiting: list[Trial], rung: int) -> list[Trial]:
        """Plans of ``waiting`` compiled and run once untimed, the references first, then the
        others in the cost model's order, until compiling reaches its share of the time left;
        then a lap at one particle, and one at the schedule's first count for the plans that are
        not exact. The plans that ran."""
        ready = []
        order = sorted(waiting, key=lambda t: (not t.reference, t.key))
        for k, t in enumerate(order, 1):
            if not t.racing:
                continue                 # the compiler refused it
            if t.model is None:
                if self.late(self.compile_time or 0.0, COMPILE_SHARE):
                    break                # the rest of the time is the pilot runs'
                self.say(f"compiling {t.row.describe()} ({k}/{len(order)})")
                if not self.compile(t):
                    continue
            # A cluster's worker makes its own untimed first run of a plan (tuning/cluster.py).
            if self.cluster is not None or self.lap([(t, 1)], rung, runs=1, keep=False):
                ready.append(t)
        self.lap([(t, 1) for t in ready], rung)
        for t in ready:
            t.exact = bool(t.groups) and accuracy.same_answer(t.groups[0])
        self.estimate(self.piloted(), retarget=False)      # an exact plan's time bounds the next runs
        self.lap([(t, self.settings.schedule[0]) for t in ready if t.racing and t.groups and not t.exact], rung)
        return [t for t in ready if t.groups]

    def compile(self, t: Trial) -> bool:
        began = time.perf_counter()
        try:
            t.model = compile_model(self.program, t.candidate, self.settings.options, self.settings.data,
                                    t.verdict.compilation)
        except SirenUsageError:
            raise
        except SirenError as e:
            t.row.status, t.row.reason = REJECTED, f"the compiler: {e.message.splitlines()[0]}"
            t.row.location = None if e.span is None else str(e.span)
            return False
        finally:
            t.verdict.compilation = None
            restore_source(self.program)
        self.compile_time = max(self.compile_time or 0.0, time.perf_counter() - began)
        if self.parts is None:
            try:
                self.parts, count = result_layout(t.model, self.settings.rows, self.settings.memory_limit)
            except SirenError:
                pass                     # its pilot runs fail too, and say why
            else:
                self.weigh(count)
        if self.cluster is not None:
            s = self.settings
            self.cluster.ship(t.index, self.program, t.candidate, s.options, s.data)
        return True

    def weigh(self, count: int) -> None:
        """Each number's weight, one over its part's target, once the result's ``count`` parts
        are known; a target per part must give one for each."""
        if self.part_targets is None:
            return
        if len(self.part_targets) != count:
            raise SirenUsageError(
                f"the target error gives {len(self.part_targets)} number{'' if len(self.part_targets) == 1 else 's'}, "
                f"one per part of the result, and the result has {count} part{'' if count == 1 else 's'} (the "
                "elements of its tuple): give one target for each, or one number for all")
        self.weights = 1.0 / np.asarray(self.part_targets)[self.parts]

    def lap(self, work: list[tuple[Trial, int]], rung: int, runs: int | None = None, keep: bool = True) -> bool:
        """``runs`` runs of each (trial, particles) in ``work``, interleaved: run k of every trial,
        then run k + 1, each round in another order, so that a drift in the machine's speed (other
        work, its clock) falls on all of them alike. The work that does not fit in the time left is
        left out, the last first (``work`` comes best first), except the first while any time is
        left; when none fits, the budget is spent.
        ``keep=False``: one untimed run, not recorded. False when the budget ran out. On a cluster
        each trial's runs are a task (``there``), and the lap's work is shared by its workers."""
        runs = self.settings.runs if runs is None else runs
        fitting, expected = [], 0.0
        width = 1 if self.cluster is None else self.cluster.width
        for t, n in work:
            expected += runs * self.expected_time(t, n) / width
            # The first work is started while any time is left, whatever its prediction (which,
            # from runs with one particle, scales their fixed cost too): the deadline stops it.
            if self.late(expected) and (fitting or self.late(0.0)):
                self.exhausted = not fitting
                break
            fitting.append((t, n))
        if fitting and keep:
            self.rungs = rung
            self.say(f"rung {rung}: {len(fitting)} plan{'' if len(fitting) == 1 else 's'}, "
                     f"{'/'.join(str(n) for n in sorted({n for _, n in fitting}))} particles")
        limits = {t.index: self.run_limit(t) if keep else None for t, _ in fitting}
        done = (self.here if self.cluster is None else self.there)(fitting, runs, limits, rung)
        if keep:
            for t, n in fitting:
                if t.racing and len(done[t.index]) > 1:      # a group cut short by the budget still counts
                    self.record(t, n, done[t.index])
        return not self.exhausted

    def here(self, fitting: list[tuple[Trial, int]], runs: int, limits: dict, rung: int) -> dict[int, list]:
        """The lap's runs in this process, interleaved, until the budget is spent: per trial index,
        its (estimate, seconds) in the order of the runs."""
        s = self.settings
        done: dict[int, list[tuple[list[float], float]]] = {t.index: [] for t, _ in fitting}
        for k in range(runs):
            shift = k % len(fitting) if fitting else 0
            for t, n in fitting[shift:] + fitting[:shift]:
                if not t.racing or self.exhausted:
                    continue
                try:
                    done[t.index].append(run_once(t.model, n, run_seed(s.seed, t.index, n, k), s.rows,
                                                  s.memory_limit, self.deadline, limits[t.index]))
                except (Overtime, SirenError) as e:
                    self.stopped(t, n, rung, e)
        return done

    def there(self, fitting: list[tuple[Trial, int]], runs: int, limits: dict, rung: int) -> dict[int, list]:
        """The lap's runs on the cluster, a task per trial, with the seeds ``here`` gives them."""
        s = self.settings
        outcomes = self.cluster.runs([(t.index, n, [run_seed(s.seed, t.index, n, k) for k in range(runs)],
                                       limits[t.index]) for t, n in fitting], s.rows, s.memory_limit, self.deadline)
        for t, n in fitting:
            if outcomes[t.index][1] is not None:
                self.stopped(t, n, rung, outcomes[t.index][1])
        return {index: runs for index, (runs, _) in outcomes.items()}

    def stopped(self, t: Trial, n: int, rung: int, e: BaseException) -> None:
        """What a run of ``t`` with ``n`` particles that raised ``e`` means for the race."""
        if isinstance(e, Overtime):
            if e.budget:
                self.exhausted = True
            else:
                t.row.status, t.row.rung = DROPPED, rung
                t.row.reason = (f"a run with {n} particles took over {e.seconds:.3g} s, "
                                f"{RUN_SLACK:g}x another plan's time to the target")
        elif isinstance(e, SirenUsageError):
            raise e
        else:
            t.row.status, t.row.rung, t.row.reason = FAILED, rung, e.message.splitlines()[0]
            t.error = e

    def record(self, t: Trial, particles: int, runs: list[tuple[list[float], float]]) -> None:
        """``runs`` (estimate, seconds) as a group of ``t``; every run of every plan must give as
        many numbers as the first."""
        width = next((g.estimates.shape[1] for u in self.piloted() for g in u.groups), len(runs[0][0]))
        for estimate, _ in runs:
            if len(estimate) != width:
                raise ragged(width, len(estimate))
        t.groups.append(Group(particles, np.array([e for e, _ in runs], dtype=float), np.array([s for _, s in runs])))
        t.row.runs += len(runs)

    def expected_time(self, t: Trial, particles: int) -> float:
        if not t.groups:
            return 0.0
        return float(accuracy.time_at([accuracy.summarize(g) for g in t.groups], np.array([float(particles)]))[0])

    def run_limit(self, t: Trial) -> float | None:
        if t.reference:
            return None
        best = min((u.seconds for u in self.piloted() if u is not t and u.racing), default=math.inf)
        return max(RUN_SLACK * best, RUN_FLOOR) if math.isfinite(best) else None

    def next_particles(self, t: Trial) -> int | None:
        """The count ``t`` runs at in its next rung, or None: it is settled."""
        if t.exact or t.prediction is None:
            return None
        p = t.prediction
        needed = float(p.particles[0])
        if needed <= t.measured:         # reached at a count tried: refine it, or it is settled
            guess = accuracy.refinement(p.counts, p.errors[:, 0], self.target, needed)
            finer = None if guess is None else round_up(MARGIN * guess)
            return finer if finer is not None and finer * REFINE < needed and finer not in p.counts else None
        later = [n for n in self.settings.schedule if n > t.measured]
        if not later:
            return None                  # at the end of the schedule
        return min(later[0], round_up(MARGIN * needed)) if math.isfinite(needed) else later[0]

    def halve(self, alive: list[Trial], rung: int) -> list[Trial]:
        """The plans that go on: the best fraction ``keep`` by time to the target, and every
        settled one (it costs nothing to keep, and the final choice compares it), less those
        ``CLEARLY`` slower than the best; and every reference."""
        ranked = sorted(alive, key=lambda t: (t.seconds, t.key))
        keep = max(MIN_KEEP, math.ceil(len(ranked) * self.settings.keep))
        best = ranked[0].seconds
        kept = []
        for k, t in enumerate(ranked):
            if t.reference or (k < keep or self.next_particles(t) is None) and not t.seconds > CLEARLY * best:
                kept.append(t)
            else:
                t.row.status, t.row.rung = DROPPED, rung
        return kept

    # ---------------------------------------------------------------- the estimates

    def piloted(self) -> list[Trial]:
        return [t for t in self.trials if t.groups]

    def exact(self) -> Trial | None:
        """The plan whose answer is the reference: the first exact one in the cost model's order."""
        return min((t for t in self.piloted() if t.exact), key=lambda t: t.key, default=None)

    def estimate(self, trials: list[Trial], retarget: bool) -> None:
        """Point estimates for ``trials``. Where the user gave no target, ``retarget`` makes it
        the smallest positive error measured by a plan still in the race."""
        if retarget and self.settings.target is None:
            racing = [t for t in self.piloted() if t.racing]
            errors = [float(p.error[0]) for p in self.predictions(self.piloted(), racing).values()]
            self.target = min((e for e in errors if e > 0), default=0.0)
        predictions = self.predictions(self.piloted(), trials)
        for t in trials:
            p = t.prediction = predictions[t.index]
            r = t.row
            r.exact, r.error, r.error_particles = t.exact, float(p.error[0]), p.error_particles
            r.particles, r.seconds = float(p.particles[0]), float(p.seconds[0])

    def predictions(self, piloted: list[Trial], wanted: list[Trial],
                    picks: dict | None = None) -> dict[int, accuracy.Prediction]:
        """Each wanted trial's prediction, from the runs (``picks`` None) or from resamplings of
        them (``picks[(index, group)]``, the same for every trial that uses a group)."""
        def summaries(t: Trial, groups: list[int]) -> list[accuracy.Summary]:
            return [accuracy.summarize(t.groups[i], None if picks is None else picks[(t.index, i)]) for i in groups]

        own = {t.index: summaries(t, list(range(len(t.groups)))) for t in wanted}
        exact = self.exact()
        if exact is not None:
            reference = accuracy.exact_reference(summaries(exact, [0])[0])
        else:
            pool = self.pool(piloted)
            pooled = {t.index: summaries(t, groups) for t, groups in pool}
        target = self.target if self.target is not None else 0.0
        out = {}
        for t in wanted:
            if exact is None:
                others = [s for u, _ in pool if u is not t for s in pooled[u.index]]
                reference = accuracy.pooled_reference(others or own[t.index])
            out[t.index] = accuracy.predict(own[t.index], reference, target, t.exact, self.parts,
                                            max(self.settings.schedule), self.weights)
        return out

    @staticmethod
    def pool(piloted: list[Trial]) -> list[tuple[Trial, list[int]]]:
        """The groups that may enter the pooled reference: of two runs or more, with a mean no
        more than ``PREFILTER`` times noisier than the most accurate group's."""
        noise = {(t.index, i): float(np.mean(g.estimates.var(axis=0, ddof=1))) / g.runs
                 for t in piloted for i, g in enumerate(t.groups) if g.runs > 1}
        if not noise:
            return [(t, list(range(len(t.groups)))) for t in piloted]
        best = min(noise.values())
        return [(t, [i for i in range(len(t.groups)) if noise.get((t.index, i), math.inf) <= PREFILTER * best])
                for t in piloted]

    # ---------------------------------------------------------------- the clock

    def late(self, expected: float, share: float = 1.0) -> bool:
        """Whether work expected to take ``expected`` seconds would pass the deadline (or the
        point ``share`` of the way to it from the start of the phase: screening, or a round of
        the race)."""
        if self.deadline is None:
            return False
        return time.perf_counter() + expected > self.opened + share * (self.deadline - self.opened)

    def say(self, what: str) -> None:
        if self.progress is not None:
            self.progress(f"{what}  [{time.perf_counter() - self.start:.1f} s]")


def round_up(x: float) -> int:
    """``x`` rounded up to two significant digits: particle counts that read well."""
    if x <= 10:
        return max(1, math.ceil(x))
    scale = 10 ** (math.floor(math.log10(x)) - 1)
    return int(math.ceil(x / scale) * scale)
