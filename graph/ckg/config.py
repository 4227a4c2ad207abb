"""The builder's settings: one pydantic model with every default in one place."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator


class BuildConfig(BaseModel):
    """How the causal knowledge graph is built from transitions and scene features."""

    thresholds: dict[str, float] = Field(default_factory=dict)
    """Variable name (``brightness``, ``loudness``, ...) -> minimum absolute change across a
    transition that counts as an event. Variables not listed get a data-driven threshold: the
    ``threshold_quantile`` of the absolute changes seen in the build's transitions."""
    threshold_quantile: float = Field(default=0.5, ge=0.0, lt=1.0)
    """Quantile of |change| used for variables without an explicit threshold."""
    min_support: int = Field(default=5, ge=1)
    """Minimum number of transitions where cause and effect occur together."""
    min_lift: float = Field(default=1.2, ge=0.0)
    """Minimum lift (confidence over the effect's base rate) for an edge to be kept; read as the larger
    of the lift and the lift of the effect's absence (``graph.ckg.builder.effect_lift``), since a lift
    cannot exceed 1 / base rate and an effect present in most scenes could otherwise never pass."""
    min_association_z: float = 3.0
    """Every statistical edge needs its co-occurrence to be this many (exact-test) standard errors above
    the effect's base rate; without it, thousands of rare event pairs would yield chance edges."""
    min_reference_z: float = 3.0
    """Every statistical edge also needs its co-occurrence this many standard errors above the effect's
    rate in the cause's *reference* transitions, where the cause's own variable did not change (see
    ``graph.ckg.stats``): what is left when the cause's opposite no longer inflates the contrast."""
    family_wise_association: bool = True
    """For a *change* effect (``music:valence:down``, a mode flip), a cause whose variable has more than
    two events (the action's states and shifts, the objects' appearances) needs the association and
    reference z whose p is 2 / (its variable's events) times that of ``min_association_z`` /
    ``min_reference_z`` (Bonferroni over the variable's events, scaled so a numeric variable's two keep
    the bar; ``graph.ckg.stats.family_bar``): about 3.9 for 56 action events, 3.5 for 12 object events.
    A categorical variable tests many more pairs than a numeric one, so chance passes z 3 there as
    often as a weak real rule does. State effects keep the plain bar (``graph.ckg.builder.association_bars``
    says why), except where the other states of a state rule are retested without the stronger one
    (``graph.ckg.states``): that retest runs over every other state, so it reads the family-wise bar.
    Off: the plain bar for every pair (the behaviour before 2026-12-07)."""
    persistent_cause_bar: bool = True
    """For a *state* effect (``music:mode:is:major``) of a numeric change (``visual:saturation:down``)
    whose steps persist from cut to cut, the association and reference bars are raised by
    sqrt((1 + ra rb) / (1 - ra rb)), ra and rb the two events' lag-1 autocorrelations within videos
    (Bartlett's variance inflation for two persistent series; ``graph.ckg.builder._persistence_inflation``).
    A state and a regime-driven visual drift share long runs, so their co-occurrence count overstates
    the evidence: the planted hidden trend's ``saturation down -> key major`` passed z 3.04 on one fold
    of family dev world 212 (ra 0.36, rb 0.74, bar 3.94 with this). Numeric causes with independent
    steps (ra <= 0) keep the plain bar. Off: the behaviour before 2026-12-07."""
    state_onset_association: bool = True
    """A *state* effect (``music:mode:is:major``) is also tested at the cuts where it can begin (absent one
    transition before); the pair's association and reference tests read that pair of z instead of the
    plain pair when its smaller z is the larger (``graph.ckg.stats.state_onset_association``; the two
    readings are not mixed): a state lasts over cuts, and the cuts where it
    only carried over dilute the plain count towards its base rate. Family dev world 303 (templated,
    300 videos): the true ``contrast up -> key major`` read association z 3.4 and reference z 0.7 (no
    edge on any fold) against a key major in 86 % of the scenes, while among the cuts coming from a
    minor key it turned major after 69 % of the rises of contrast and 20 % of the others. Off: the
    behaviour before 2026-12-07."""
    min_precedence: float = 0.05
    """Minimum temporal precedence for an edge to be labelled ``causes``; an association below it fails
    the precedence test (the effect is about as likely one transition *before* the cause)."""
    min_precedence_z: float = 3.0
    """A ``causes`` edge of a *weak* association (below ``strong_association_z``) also needs its
    precedence to be this many standard errors above zero, so that small samples do not promote chance
    co-movement to a cause."""
    strong_association_z: float = 8.0
    """An association at least this many standard errors above both the effect's base rate and its
    reference rate is *strong*: chance co-movement is ruled out by the association itself, and what is
    left for the precedence test is to tell a cause from a shared trend. That is the job of the sign
    (``min_precedence``) and the share (``min_precedence_share``), whose estimates are precise when the
    association is; its precedence z then only needs ``min_strong_precedence_z``. Without it, a cause
    co-occurring with its effect in 80 % of 200 transitions (z > 10) was dropped whenever the videos were
    too short to show many previous transitions (issue 37). Each z is read as the larger of the exact z
    and the arcsine z (``graph.ckg.stats.arcsine_z``): the exact z is bounded by the effect's headroom,
    so an effect present in most scenes could otherwise never make a strong association."""
    min_strong_precedence_z: float = 1.645
    """The precedence z a *strong* association needs (one-sided p < 0.05): the music change is more
    often new at the cut than already there one transition earlier, at a level the few transitions with
    a previous one can show."""
    graded_entry_precedence_z: bool = True
    """For a state cause of a state effect (``visual:action:is:standing -> music:mode:is:major``), whose
    precedence is read at the cuts that enter the cause's state (``graph.ckg.stats.
    state_entry_precedence``), the precedence z it needs falls linearly with its association strength,
    from ``min_precedence_z`` at ``min_association_z`` to ``min_strong_precedence_z`` at
    ``strong_association_z``, instead of one step there. Why: an entry can show the effect beginning
    only where the effect was absent one transition before, so the z of the entries is bounded by the
    effect's headroom, as the exact association z is. Family dev world 305 (templated, 300 videos)
    plants ``action is standing -> key major`` with the key major in 88 % of the scenes: major in 206
    of 208 standing scenes (association z 6.0), precedence z 2.4-2.9 on the five folds, and the rule
    missed on every fold. Other pairs keep the step: graded for every pair, two false causes edges
    appeared on the lagging dev worlds (a planted trend at association z 6.0, a chance object edge).
    Off: the behaviour before 2026-12-07."""
    keep_undirected: bool = False
    """What becomes of an association (support, lift, association and reference tests passed) that fails
    the precedence test (``min_precedence``, the precedence z, ``min_precedence_share``): a shared
    trend, or too few transitions to tell the direction. Off (default): no edge; the pair, its
    statistics, the failed parts and the reason are listed in ``build_config["left_out_undirected"]``.
    On: a ``co_moves`` edge, weight discounted by ``co_moves_discount`` (the behaviour before issue 15)."""
    composites: dict[str, list[str]] = Field(
        default_factory=lambda: {"visual_intensity": ["motion", "contrast", "saturation"]}
    )
    """Composite variable -> the variables it is computed from with positive weights (karma's
    Total_Visual_Intensity combines motion, contrast and saturation). A composite's ``causes`` edge is
    relabelled ``co_moves`` (still emitted) when one of its inputs, moving the same way, has a ``causes``
    edge to the same effect: the composite moves with its input, it is a proxy rather than a cause."""
    read_from: dict[str, list[str]] = Field(default_factory=lambda: {"mood": ["valence", "arousal"]})
    """Music variable -> the music variables it is read from (mood taggers and karma's worlds read the
    mood from valence and arousal). An edge into such a variable is not a cause when its cause's
    association with one of the source variables failed the precedence test: a trend drifting arousal
    over several cuts enters a rare mood at one cut, which looks new at the cut (measured on the contrary
    world, 400 videos, mood states on: ``saturation:down -> mood:is:dull`` a ``causes`` edge on 4 of 5
    folds without this check, none with it)."""
    composite_trends: bool = True
    """An edge out of a composite variable (``composites``) is not a cause when one of its inputs, moving
    the same way, has an association with the same effect that failed the precedence test and none
    has a ``causes`` edge to it (that would make the composite's edge a ``co_moves`` proxy): the
    composite carries its input's trend, diluted by the other inputs into a weak association whose
    precedence estimates are noisy (``graph.ckg.builder._trend_through_input``). Off: the behaviour
    before 2026-12-07 (a planted trend on saturation became ``visual_intensity down -> arousal up`` on
    one fold of family dev world 327, templated, 300 videos)."""
    min_precedence_share: float = 0.5
    """A ``causes`` edge also needs precedence >= this share of its excess confidence (confidence - base
    rate): a cause's association is new at its own cut, while a persistent common trend already shows
    most of it one transition earlier (share near 0 even when the trend moves both at the same cut)."""
    support_shrinkage: float = Field(default=10.0, ge=0.0)
    """k in the weight's support factor support / (support + k)."""
    co_moves_discount: float = Field(default=0.25, ge=0.0, le=1.0)
    """Factor applied to the weight of ``co_moves`` edges (explained proxies, and with ``keep_undirected``
    the associations that fail the precedence test) so they rank below causes of equal strength."""
    max_evidence: int = Field(default=100, ge=0)
    """Most transition ids kept per edge as evidence (the first ones by id; support counts all)."""
    exclude_videos: list[str] = Field(default_factory=list)
    """Videos left out of the build (the ones an evaluation will answer questions about)."""
    features_only_videos: bool = True
    """Videos with scene features but no transitions (no QA file) contribute one transition per pair of
    consecutive scenes, so a graph can be built from ``karma extract`` output alone."""
    state_variables: list[str] = Field(default_factory=lambda: ["action", "mode"])
    """Categorical variables whose state after the cut is an event of its own (``music:mode:is:minor``,
    ``visual:action:is:running``), so rules with a state-valued effect are mined (action, mode, mood).
    Add ``mood`` (``--states action,mode,mood``) for rules whose effect is a mood state ("the performer
    dances -> the mood is calm"): without ``music:mood:is:calm`` such a rule splits into one rare
    ``X->calm`` shift per earlier mood and is mostly not a ``causes`` edge; with it the shift into the
    action (``visual:action:*->dancing -> music:mood:is:calm``) is. ``read_from`` keeps trends in valence
    and arousal from reaching mood states. Not on by default: on the contrary world (300 videos, seed
    0, ``benchmarks/bench_reader.py``) the graph reader stays at 98.7 % with the learned aliases but
    falls from 77.1 % to 72.9 % without them, as option texts then also read as mood states."""
    aggregate_variables: list[str] = Field(default_factory=lambda: ["action"])
    """Categorical variables whose ``X->Y`` changes are also pooled by target as ``*->Y`` (any shift to
    Y), so a rule "-> running" from any prior action is one well-supported edge (action, mood)."""

    @field_validator("state_variables", "aggregate_variables")
    @classmethod
    def _known_forms(cls, value: list[str], info) -> list[str]:  # type: ignore[no-untyped-def]
        from graph.ckg.detect import CATEGORICAL_SHIFTS, CATEGORICAL_STATES

        known = CATEGORICAL_STATES if info.field_name == "state_variables" else CATEGORICAL_SHIFTS
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise ValueError(f"unknown variables {unknown}; known: {list(known)}")
        return sorted(set(value))

    use_explanations: bool = True
    """Add ``text_relation`` edges from the questions' explanations when the data has them."""
    learn_aliases: bool = True
    """Learn the words the corpus's own right answers use for each event (``graph.ckg.aliases``) into
    ``build_config["event_aliases"]``; read by the graph reader, never shown to a model."""
    include_concepts: bool = True
    """Add one ``concept:<variable>`` node per variable with ``instance_of`` edges from its events."""
