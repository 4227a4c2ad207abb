"""GraphRAG-shaped tables at any size: what an LLM entity extraction over music-video descriptions makes.

Microsoft GraphRAG's ``entities.parquet`` (``id`` UUID, ``human_readable_id``, ``title`` in upper
case, ``type``, ``description``, ``text_unit_ids``, ``frequency``, ``degree``) and
``relationships.parquet`` (``id`` UUID, ``human_readable_id``, ``source``/``target`` as entity
*titles*, ``description``, ``weight``, ``combined_degree``, ``text_unit_ids``), with about three
relationships per entity whose targets follow a heavy-tailed (preferential) degree distribution, as
LLM-extracted graphs have: a few hub entities, most entities with one to three links.

``questions`` makes retrieval questions with a known answer: each names (in lower case, paraphrased)
the two ends of one relationship, whose id is the truth (recall@k = the edge is among the top k).

Deterministic: the same ``entities`` and ``seed`` give byte-identical tables.

    .venv/bin/python benchmarks/graphrag_synth.py --entities 30000 --out WORK/graphrag30k
"""

from __future__ import annotations

import argparse
import random
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_NS = uuid.UUID("0b6a5e52-7a7e-4f3c-8d1b-4b6172676d31")

ADJECTIVES = [
    "flickering",
    "bright",
    "dim",
    "hazy",
    "glowing",
    "shadowy",
    "pulsing",
    "slow",
    "rapid",
    "soaring",
    "heavy",
    "soft",
    "distorted",
    "warm",
    "cold",
    "neon",
    "muted",
    "vivid",
    "grainy",
    "blurred",
    "sharp",
    "swirling",
    "steady",
    "frantic",
    "gentle",
    "roaring",
    "whispered",
    "echoing",
    "broken",
    "golden",
    "silver",
    "crimson",
    "azure",
    "emerald",
    "violet",
    "amber",
    "ashen",
    "velvet",
    "electric",
    "acoustic",
    "lunar",
    "solar",
    "stormy",
    "misty",
    "frozen",
    "burning",
    "hollow",
    "distant",
    "restless",
    "tender",
    "jagged",
    "smooth",
    "dusty",
    "radiant",
    "gloomy",
    "playful",
    "solemn",
    "fierce",
    "quiet",
]
MODIFIERS = [
    "strobe",
    "spotlight",
    "crowd",
    "chorus",
    "bassline",
    "synth",
    "drum",
    "guitar",
    "piano",
    "violin",
    "skyline",
    "rooftop",
    "alley",
    "desert",
    "ocean",
    "forest",
    "highway",
    "stage",
    "mirror",
    "window",
    "curtain",
    "smoke",
    "rain",
    "snow",
    "fire",
    "wave",
    "tunnel",
    "bridge",
    "tower",
    "garden",
    "ballroom",
    "subway",
    "train",
    "car",
    "bicycle",
    "camera",
    "lens",
    "frame",
    "shadow",
    "silhouette",
]
NOUNS = [
    "sequence",
    "montage",
    "shot",
    "scene",
    "riff",
    "drop",
    "bridge",
    "verse",
    "hook",
    "loop",
    "break",
    "fade",
    "cut",
    "pan",
    "zoom",
    "flash",
    "glow",
    "motif",
    "theme",
    "beat",
    "groove",
    "melody",
    "harmony",
    "crescendo",
    "pulse",
    "tempo",
    "rhythm",
    "swell",
    "burst",
    "echo",
    "reverb",
    "choreography",
    "dance",
    "performance",
    "entrance",
    "exit",
    "transition",
    "reveal",
    "closeup",
    "wideshot",
    "lyric",
    "refrain",
    "solo",
    "outro",
    "intro",
    "vocal",
    "chant",
    "sample",
    "glitch",
    "strobing",
]
FIRST = [
    "mara",
    "jonah",
    "elena",
    "tobias",
    "ines",
    "kofi",
    "yara",
    "lucas",
    "nadia",
    "omar",
    "priya",
    "felix",
    "sana",
    "dario",
    "leila",
    "hugo",
    "amara",
    "ravi",
    "zoe",
    "mateo",
]
LAST = [
    "kellan",
    "okafor",
    "varga",
    "lindqvist",
    "moreau",
    "tanaka",
    "reyes",
    "holloway",
    "brandt",
    "castillo",
    "nguyen",
    "petrov",
    "abara",
    "sorensen",
    "quinn",
    "delacroix",
]
TYPES = ("EVENT", "VISUAL ELEMENT", "MUSICAL ELEMENT", "LOCATION", "PERSON", "ORGANIZATION")
VERBS = (
    ("intensifies alongside", "as the energy builds"),
    ("is synchronised with", "matching the beat"),
    ("follows", "right after the cut"),
    ("contrasts with", "creating tension"),
    ("introduces", "at the start of the chorus"),
    ("fades into", "as the song slows down"),
    ("is triggered by", "when the drums enter"),
    ("accompanies", "throughout the second verse"),
    ("mirrors", "in colour and pace"),
    ("leads into", "at the climax of the video"),
)
WHERE = (
    "in the opening shots",
    "during the chorus",
    "in the bridge",
    "near the end of the video",
    "throughout the second verse",
    "at the climax",
)


@dataclass
class Tables:
    """The two GraphRAG tables as column lists (what parquet stores)."""

    entities: dict[str, list]
    """id, human_readable_id, title, type, description, text_unit_ids, frequency, degree."""
    relationships: dict[str, list]
    """id, human_readable_id, source, target, description, weight, combined_degree, text_unit_ids."""


def _titles(n: int, rng: random.Random) -> list[str]:
    """``n`` distinct upper-case titles: element names (adjective modifier noun) and some people."""
    people = [f"{a} {b}".upper() for a in FIRST for b in LAST]
    elements = [f"{a} {m} {n_}".upper() for a in ADJECTIVES for m in MODIFIERS for n_ in NOUNS]
    rng.shuffle(people)
    rng.shuffle(elements)
    n_people = min(len(people), n // 20)
    chosen = people[:n_people] + elements[: n - n_people]
    if len(chosen) < n:
        raise ValueError(f"at most {len(people) // 1 + len(elements)} distinct titles, asked for {n}")
    rng.shuffle(chosen)
    return chosen


def generate(entities: int, seed: int = 0, rels_per_entity: float = 3.0) -> Tables:
    """Entity and relationship tables for ``entities`` entities and about 3 relationships each."""
    rng = random.Random(seed)
    titles = _titles(entities, rng)
    types = [("PERSON" if len(t.split()) == 2 else rng.choice(TYPES)) for t in titles]
    descriptions = []
    for title, kind in zip(titles, types, strict=True):
        name = title.lower()
        if kind == "PERSON":
            text = (
                f"{title} is a performer featured in the music video, seen {rng.choice(WHERE)}, "
                f"whose movements set the mood of the scene."
            )
        else:
            text = (
                f"{title} is a {kind.lower()} that appears {rng.choice(WHERE)}; the {name} shapes "
                f"how the music and the images feel together."
            )
        descriptions.append(text)
    # Preferential targets: Zipf-like popularity over a random permutation of the entities.
    popularity = 1.0 / np.arange(1, entities + 1) ** 0.7
    order = np.random.default_rng(seed).permutation(entities)
    weights = np.empty(entities)
    weights[order] = popularity
    cumulative = np.cumsum(weights / weights.sum())
    n_rels = round(entities * rels_per_entity)
    np_rng = np.random.default_rng(seed + 1)
    sources = np_rng.integers(0, entities, size=n_rels)
    targets = np.searchsorted(cumulative, np_rng.random(n_rels), side="right").clip(0, entities - 1)
    seen: set[tuple[int, int]] = set()
    rel: dict[str, list] = {
        k: []
        for k in ("id", "human_readable_id", "source", "target", "description", "weight", "text_unit_ids")
    }
    degree = [0] * entities
    for s, t in zip(sources.tolist(), targets.tolist(), strict=True):
        if s == t or (s, t) in seen:
            continue
        seen.add((s, t))
        verb, context = VERBS[rng.randrange(len(VERBS))]
        rel["id"].append(str(uuid.uuid5(_NS, f"rel:{seed}:{s}:{t}")))
        rel["human_readable_id"].append(len(rel["human_readable_id"]))
        rel["source"].append(titles[s])
        rel["target"].append(titles[t])
        rel["description"].append(f"The {titles[s].lower()} {verb} the {titles[t].lower()} {context}.")
        rel["weight"].append(float(rng.randint(1, 10)))
        rel["text_unit_ids"].append([f"chunk-{rng.randrange(entities):06d}"])
        degree[s] += 1
        degree[t] += 1
    index = {title: i for i, title in enumerate(titles)}
    rel["combined_degree"] = [
        degree[index[a]] + degree[index[b]] for a, b in zip(rel["source"], rel["target"], strict=True)
    ]
    ent = {
        "id": [str(uuid.uuid5(_NS, f"ent:{seed}:{i}")) for i in range(entities)],
        "human_readable_id": list(range(entities)),
        "title": titles,
        "type": types,
        "description": descriptions,
        "text_unit_ids": [[f"chunk-{rng.randrange(entities):06d}"] for _ in range(entities)],
        "frequency": [rng.randint(1, 12) for _ in range(entities)],
        "degree": degree,
    }
    return Tables(entities=ent, relationships=rel)


def write(tables: Tables, folder: str | Path) -> Path:
    """``entities.parquet`` and ``relationships.parquet`` in ``folder`` (what `karma graph import` reads)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(tables.entities), out / "entities.parquet")
    pq.write_table(pa.table(tables.relationships), out / "relationships.parquet")
    return out


def load_graph(folder: str | Path):
    """The tables read through karma's GraphRAG importer (the path a user's graph takes)."""
    from graph.io.graphrag import read_graphrag

    root = Path(folder)
    return read_graphrag(root / "entities.parquet", root / "relationships.parquet")


def questions(graph, n: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` (question, true edge id) pairs, each naming both ends of one edge in lower case."""
    rng = random.Random(seed)
    edge_ids = sorted(graph.edges)
    picked = rng.sample(edge_ids, min(n, len(edge_ids)))
    templates = (
        "Why does the {a} change when the {b} comes in?",
        "How is the {a} connected to the {b} in this video?",
        "What links the {a} and the {b}?",
        "Does the {a} influence the {b}?",
    )
    out = []
    for edge_id in picked:
        edge = graph.edges[edge_id]
        a = graph.nodes[edge.source].title.lower()
        b = graph.nodes[edge.target].title.lower()
        out.append((rng.choice(templates).format(a=a, b=b), edge_id))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    tables = generate(args.entities, args.seed)
    folder = write(tables, args.out)
    print(f"{args.entities} entities, {len(tables.relationships['id'])} relationships -> {folder}")


if __name__ == "__main__":
    main()
