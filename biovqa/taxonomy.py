"""The C1 taxonomy tree and GBIF synonym map (Contract 5): build, query, save and load.

Tree conventions (§C.3, §M.2, checked against the treefrog example in calibration.md):

* Depth: kingdom 0, phylum 1, class 2, order 3, family 4, genus 5, species 6. Every kingdom hangs under
  one implicit root (depth 0, id ``""``), so two answers that share only the kingdom (or nothing) get
  Wu–Palmer 0, and the worked example's 0.83 / 0.50 / 0.17 come out.
* Skip edges: a missing rank (reptiles have no order) attaches the node to its nearest populated
  ancestor and the node keeps its rank's depth (a reptile family is at depth 4, under its class).
* Node ids are the lineage names joined with ``|`` from the kingdom down, missing ranks left out; the
  species segment is the epithet, the species node's ``name`` is the binomial.
* ``subtree_count`` counts the tree nodes in a node's subtree, the node included (a species covers 1);
  ``N`` (:attr:`Taxonomy.total`) is the total node count, the root included, so IC(root) = 0. This is the
  paper's "|subtree(c)|" and "N is the total node count" (eq. 10); with its round numbers (N = 900 000,
  Chordata 450 000, Anura 7 500, Dryophytes 30, a species 1) Lin gives 0.752, 0.349, 0.051. ``N`` is kept
  in the parquet metadata (``biovqa.total_nodes``); without it, N = 1 + the top-level subtree counts.

The synonym map is set-valued and one-way (§C.2): ``S(name)`` is every accepted name the name resolves
to; an accepted name resolves to itself. A dataset without ``resources/synonyms.parquet`` makes EM-soft
raise :class:`MissingSynonymMapError` (the paper's code silently fell back to strict matching, §L.5).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from biovqa.parse.text import normalize_name

__all__ = [
    "RANKS",
    "RANK_DEPTH",
    "ROOT_ID",
    "MissingSynonymMapError",
    "Resources",
    "SynonymMap",
    "Taxonomy",
    "build_vernacular_index",
    "load_resources",
    "normalize_name",
    "save_resources",
]

RANKS = ("kingdom", "phylum", "class", "order", "family", "genus", "species")
RANK_DEPTH = {rank: i for i, rank in enumerate(RANKS)}
ROOT_ID = ""

TAXONOMY_FILE = "taxonomy.parquet"
SYNONYMS_FILE = "synonyms.parquet"
VERNACULAR_FILE = "vernacular.parquet"
_TOTAL_KEY = b"biovqa.total_nodes"
_LCA_CACHE_MAX = 1 << 20

TAXONOMY_SCHEMA = pa.schema(
    [
        ("node", pa.string()),
        ("name", pa.string()),
        ("name_norm", pa.string()),
        ("rank", pa.string()),
        ("parent", pa.string()),
        ("depth", pa.int32()),
        ("subtree_count", pa.int64()),
    ]
)
SYNONYMS_SCHEMA = pa.schema([("name_norm", pa.string()), ("accepted_norm", pa.string())])
VERNACULAR_SCHEMA = pa.schema([("name_norm", pa.string()), ("node", pa.string())])


class MissingSynonymMapError(FileNotFoundError):
    """EM-soft was requested but no synonym map is available (never fall back to strict matching)."""


# ------------------------------------------------------------------------------------------ the tree


def _epithet(species: str, genus: str | None) -> str:
    """The epithet of a catalog ``species`` value that may hold the epithet or the binomial."""
    parts = species.split()
    if len(parts) >= 2 and (genus and parts[0] == genus or parts[0][:1].isupper()):
        return " ".join(parts[1:])
    return species


def lineage_path(lineage: Mapping, rank: str = "species") -> list[tuple[str, str, str]]:
    """``[(rank, id segment, display name), …]`` from the kingdom down to ``rank``, missing ranks skipped."""
    out = []
    genus = None
    for r in RANKS[: RANK_DEPTH[rank] + 1]:
        value = lineage.get(r)
        if value is None or not isinstance(value, str) or not value.strip():
            continue
        value = " ".join(value.split())
        if r == "genus":
            genus = value
        if r == "species":
            epithet = _epithet(value, genus)
            out.append((r, epithet, f"{genus} {epithet}" if genus else value))
        else:
            out.append((r, value, value))
    return out


def lineage_node_id(lineage: Mapping, rank: str = "species") -> str | None:
    """The node id of ``lineage`` at ``rank`` (None when that rank is missing from the lineage)."""
    if not lineage.get(rank):
        return None
    return "|".join(seg for _, seg, _ in lineage_path(lineage, rank))


class Taxonomy:
    """The C1 tree: nodes with rank, parent, depth, subtree count; name lookup; LCA, Wu–Palmer, Lin.

    Nodes are addressed by integer index (``index(node_id)``); :attr:`root` is the implicit root's index.
    """

    def __init__(
        self,
        ids: list[str],
        names: list[str],
        ranks: list[str],
        parents: list[str],
        depths: list[int],
        subtree_counts: list[int],
        name_norms: list[str] | None = None,
        total: int | None = None,
        source: str = "<memory>",
    ) -> None:
        n = len(ids)
        if not all(len(col) == n for col in (names, ranks, parents, depths, subtree_counts)):
            raise ValueError(f"{source}: taxonomy columns have different lengths")
        self.ids = list(ids)
        self.names = list(names)
        self.ranks = list(ranks)
        if name_norms is None:
            name_norms = [None] * n
        self.name_norms = [
            x if x is not None else normalize_name(nm) for x, nm in zip(name_norms, names, strict=True)
        ]
        self.subtree_counts = [int(c) for c in subtree_counts]
        self._index: dict[str, int] = {}
        problems = []
        for i, node_id in enumerate(self.ids):
            if not node_id:
                problems.append(f"row {i}: empty node id")
            elif node_id in self._index:
                problems.append(f"row {i}: duplicate node id {node_id!r}")
            else:
                self._index[node_id] = i
        self.root = n
        self.parent_index = [0] * (n + 1)
        for i, p in enumerate(parents):
            j = self.root if not p else self._index.get(p)
            if j is None:
                problems.append(f"row {i} ({self.ids[i]!r}): parent {p!r} is not a node")
                j = self.root
            self.parent_index[i] = j
        self.parent_index[self.root] = self.root
        self.depths = [int(d) for d in depths] + [0]
        for i in range(n):
            p = self.parent_index[i]
            if p != self.root and self.depths[p] >= self.depths[i]:
                problems.append(f"row {i} ({self.ids[i]!r}): depth {self.depths[i]} not below its parent's")
            if self.subtree_counts[i] < 1:
                problems.append(f"row {i} ({self.ids[i]!r}): subtree_count {self.subtree_counts[i]} < 1")
        if problems:
            more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
            raise ValueError(f"{source}: invalid taxonomy: " + "; ".join(problems[:10]) + more)
        top = sum(c for i, c in enumerate(self.subtree_counts) if self.parent_index[i] == self.root)
        self.total = int(total) if total else top + 1
        log_n = math.log(self.total)
        self.ic = [log_n - math.log(c) for c in self.subtree_counts] + [0.0]
        self._by_name: dict[str, tuple[int, ...]] = {}
        self._by_rank_name: dict[tuple[str, str], tuple[int, ...]] = {}
        for i in range(n):
            key = self.name_norms[i]
            self._by_name[key] = self._by_name.get(key, ()) + (i,)
            rkey = (self.ranks[i], key)
            self._by_rank_name[rkey] = self._by_rank_name.get(rkey, ()) + (i,)
        self._lca_cache: dict[tuple[int, int], int] = {}
        self.problems: list[str] = []  # rows from_lineages could not place (reported, never dropped silently)

    # --------------------------------------------------------------------------------- constructors

    @classmethod
    def from_nodes(
        cls, rows: Iterable[Mapping], total: int | None = None, source: str = "<memory>"
    ) -> Taxonomy:
        """From node dicts with ``node, name, rank, parent, depth, subtree_count`` (``name_norm`` optional)."""
        rows = list(rows)
        return cls(
            [r["node"] for r in rows],
            [r["name"] for r in rows],
            [r["rank"] for r in rows],
            [r.get("parent") or "" for r in rows],
            [r["depth"] for r in rows],
            [r["subtree_count"] for r in rows],
            name_norms=[r.get("name_norm") for r in rows],
            total=total,
            source=source,
        )

    @classmethod
    def from_lineages(cls, rows: Iterable[Mapping]) -> Taxonomy:
        """Build the tree from per-image lineage dicts (``kingdom`` … ``species``, ``scientific_name``).

        Missing ranks become skip edges; subtree counts count nodes (see the module docstring). A row
        whose node id reappears under another rank is a conflict: the first row wins and the conflict is
        listed in :attr:`problems` (nothing is dropped silently).
        """
        nodes: dict[str, tuple[str, str, str, int]] = {}  # id -> (name, rank, parent, depth)
        problems: list[str] = []
        for row_no, row in enumerate(rows):
            path = lineage_path(row)
            if not path:
                problems.append(f"row {row_no}: no taxon names")
                continue
            parent = ROOT_ID
            for rank, segment, display in path:
                node_id = f"{parent}|{segment}" if parent else segment
                known = nodes.get(node_id)
                if known is None:
                    nodes[node_id] = (display, rank, parent, RANK_DEPTH[rank])
                elif known[1] != rank:
                    problems.append(f"row {row_no}: {node_id!r} is a {rank} here but a {known[1]} before")
                    break
                parent = node_id
        ids = sorted(nodes)
        counts = dict.fromkeys(ids, 1)
        for node_id in sorted(ids, key=lambda x: -nodes[x][3]):  # deepest first
            parent = nodes[node_id][2]
            if parent:
                counts[parent] += counts[node_id]
        tax = cls(
            ids,
            [nodes[i][0] for i in ids],
            [nodes[i][1] for i in ids],
            [nodes[i][2] for i in ids],
            [nodes[i][3] for i in ids],
            [counts[i] for i in ids],
        )
        tax.problems = problems
        return tax

    @classmethod
    def from_table(cls, table: pa.Table, source: str = "<table>") -> Taxonomy:
        """From a table in the Contract 5 layout (``N`` from the ``biovqa.total_nodes`` metadata if present)."""
        missing = [c for c in TAXONOMY_SCHEMA.names if c not in table.column_names and c != "name_norm"]
        if missing:
            raise ValueError(f"{source}: missing columns {missing}")
        meta = table.schema.metadata or {}
        total = int(meta[_TOTAL_KEY]) if _TOTAL_KEY in meta else None
        cols = {c: table.column(c).to_pylist() for c in table.column_names}
        nulls = [
            f"row {i}: null {c}"
            for c in ("node", "name", "rank", "depth", "subtree_count")
            for i, v in enumerate(cols[c])
            if v is None
        ]
        if nulls:
            raise ValueError(f"{source}: " + "; ".join(nulls[:10]))
        return cls(
            cols["node"],
            cols["name"],
            cols["rank"],
            [p or "" for p in cols["parent"]],
            cols["depth"],
            cols["subtree_count"],
            name_norms=cols.get("name_norm"),
            total=total,
            source=source,
        )

    def to_table(self) -> pa.Table:
        """The Contract 5 table (rows in id order), ``N`` in the schema metadata."""
        n = len(self.ids)
        order = sorted(range(n), key=self.ids.__getitem__)
        parent_ids = [self.ids[p] if p != self.root else ROOT_ID for p in self.parent_index[:n]]
        data = {
            "node": [self.ids[i] for i in order],
            "name": [self.names[i] for i in order],
            "name_norm": [self.name_norms[i] for i in order],
            "rank": [self.ranks[i] for i in order],
            "parent": [parent_ids[i] for i in order],
            "depth": [self.depths[i] for i in order],
            "subtree_count": [self.subtree_counts[i] for i in order],
        }
        schema = TAXONOMY_SCHEMA.with_metadata({_TOTAL_KEY: str(self.total).encode()})
        return pa.Table.from_pydict(data, schema=schema)

    # --------------------------------------------------------------------------------------- queries

    def __len__(self) -> int:
        return len(self.ids)

    def index(self, node_id: str) -> int | None:
        """Index of a node id (``""`` is the root), None when absent."""
        if node_id == ROOT_ID:
            return self.root
        return self._index.get(node_id)

    def find(self, name_norm: str, rank: str | None = None) -> tuple[int, ...]:
        """Indices of the nodes with this normalized name (at ``rank`` when given)."""
        if rank is None:
            return self._by_name.get(name_norm, ())
        return self._by_rank_name.get((rank, name_norm), ())

    def node(self, i: int) -> dict:
        """One node as a dict (id, name, name_norm, rank, parent, depth, subtree_count)."""
        if i == self.root:
            return {"node": ROOT_ID, "name": "", "name_norm": "", "rank": "root", "parent": ROOT_ID,
                    "depth": 0, "subtree_count": self.total}  # fmt: skip
        p = self.parent_index[i]
        return {
            "node": self.ids[i],
            "name": self.names[i],
            "name_norm": self.name_norms[i],
            "rank": self.ranks[i],
            "parent": self.ids[p] if p != self.root else ROOT_ID,
            "depth": self.depths[i],
            "subtree_count": self.subtree_counts[i],
        }

    def lineage_index(self, lineage: Mapping, rank: str = "species") -> int | None:
        """Index of the node a row's lineage names at ``rank`` (None when missing from the tree)."""
        node_id = lineage_node_id(lineage, rank)
        return None if node_id is None else self._index.get(node_id)

    def ancestors(self, i: int) -> list[int]:
        """``i`` and its ancestors up to (and including) the root."""
        out = [i]
        while i != self.root:
            i = self.parent_index[i]
            out.append(i)
        return out

    def lca(self, a: int, b: int) -> int:
        """Lowest common ancestor of two node indices (skip edges handled through the depths)."""
        key = (a, b) if a <= b else (b, a)
        hit = self._lca_cache.get(key)
        if hit is not None:
            return hit
        depth, parent = self.depths, self.parent_index
        x, y = key
        while x != y:
            dx, dy = depth[x], depth[y]
            if dx > dy:
                x = parent[x]
            elif dy > dx:
                y = parent[y]
            else:
                x, y = parent[x], parent[y]
        if len(self._lca_cache) >= _LCA_CACHE_MAX:  # bounded: a long scoring run must not grow it forever
            self._lca_cache.clear()
        self._lca_cache[key] = x
        return x

    def height(self, pred: int, gold: int) -> int:
        """Mistake severity of one item (eq. 8 summand): ranks climbed from the truth to the LCA."""
        return self.depths[gold] - self.depths[self.lca(pred, gold)]

    def wu_palmer(self, pred: int, gold: int) -> float:
        """Eq. 9: 2 d(LCA) / (d(ŷ) + d(y)); identical nodes score 1."""
        if pred == gold:
            return 1.0
        denom = self.depths[pred] + self.depths[gold]
        return 2.0 * self.depths[self.lca(pred, gold)] / denom if denom else 0.0

    def lin(self, pred: int, gold: int) -> float:
        """Eq. 10: 2 IC(LCA) / (IC(ŷ) + IC(y)), IC(c) = −log(|subtree(c)| / N); identical nodes score 1."""
        if pred == gold:
            return 1.0
        denom = self.ic[pred] + self.ic[gold]
        return 2.0 * self.ic[self.lca(pred, gold)] / denom if denom > 0 else 0.0

    def closest(self, candidates: Iterable[int], gold: int) -> int:
        """The candidate whose LCA with ``gold`` is deepest (ties: the smaller node id, deterministic)."""
        return min(
            candidates, key=lambda c: (-self.depths[self.lca(c, gold)], self.ids[c] if c != self.root else "")
        )


def build_vernacular_index(pairs: Iterable[tuple[str, str]], taxonomy: Taxonomy) -> dict[str, str]:
    """§E.7 vernacular index: common name → node id; a name seen with several nodes maps to their LCA.

    ``pairs`` are ``(common name, node id)``, e.g. each image's common-name answer and its species node.
    Pairs whose node is not in the tree raise (the caller decides what to exclude).
    """
    seen: dict[str, int] = {}
    for name, node_id in pairs:
        key = normalize_name(name)
        if not key:
            continue
        i = taxonomy.index(node_id)
        if i is None:
            raise ValueError(f"vernacular {name!r}: node {node_id!r} is not in the taxonomy")
        seen[key] = i if key not in seen else taxonomy.lca(seen[key], i)
    return {k: (taxonomy.ids[i] if i != taxonomy.root else ROOT_ID) for k, i in sorted(seen.items())}


# ------------------------------------------------------------------------------------------ synonyms


class SynonymMap:
    """Set-valued, one-way synonym map over normalized names: ``resolve(name) -> S(name)`` (§C.2)."""

    def __init__(self, pairs: Iterable[tuple[str, str]] = (), normalize: bool = False) -> None:
        targets: dict[str, set[str]] = {}
        for name, accepted in pairs:
            if normalize:
                name, accepted = normalize_name(name), normalize_name(accepted)
            if not name or not accepted:
                continue
            targets.setdefault(name, set()).add(accepted)
        self.accepted = frozenset(a for ts in targets.values() for a in ts)
        self._targets = {
            k: frozenset(v | {k}) if k in self.accepted else frozenset(v) for k, v in targets.items()
        }

    def __len__(self) -> int:
        return len(self._targets)

    def resolve(self, name_norm: str) -> frozenset[str]:
        """S(name): the accepted names ``name_norm`` resolves to (itself when it is accepted or unmapped)."""
        hit = self._targets.get(name_norm)
        return hit if hit is not None else frozenset((name_norm,))

    def credits(self, pred_norm: str, gold_norm: str) -> bool:
        """Eq. 6 for one item: ŷ = y or y ∈ S(ŷ) (one way: the gold's own synonyms never count)."""
        if pred_norm == gold_norm:
            return True
        hit = self._targets.get(pred_norm)  # an unmapped name resolves only to itself (≠ gold here)
        return hit is not None and gold_norm in hit

    def pairs(self) -> list[tuple[str, str]]:
        """The explicit (synonym, accepted) pairs, sorted (self-targets of accepted names left implicit)."""
        return sorted((k, a) for k, ts in self._targets.items() for a in ts if a != k)

    @classmethod
    def from_table(cls, table: pa.Table, source: str = "<table>") -> SynonymMap:
        """From a ``name_norm, accepted_norm`` table."""
        missing = [c for c in SYNONYMS_SCHEMA.names if c not in table.column_names]
        if missing:
            raise ValueError(f"{source}: missing columns {missing}")
        names = table.column("name_norm").to_pylist()
        accepted = table.column("accepted_norm").to_pylist()
        bad = [i for i, (a, b) in enumerate(zip(names, accepted, strict=True)) if not a or not b]
        if bad:
            raise ValueError(f"{source}: rows {bad[:10]} have an empty name_norm or accepted_norm")
        return cls(zip(names, accepted, strict=True))

    def to_table(self) -> pa.Table:
        """The Contract 5 ``synonyms.parquet`` table (explicit pairs, sorted)."""
        pairs = self.pairs()
        return pa.Table.from_pydict(
            {"name_norm": [p[0] for p in pairs], "accepted_norm": [p[1] for p in pairs]},
            schema=SYNONYMS_SCHEMA,
        )


# ------------------------------------------------------------------------------------------ resources


@dataclass
class Resources:
    """What the C1 scorer needs beyond the rows: the tree, the synonym map, the vernacular index."""

    taxonomy: Taxonomy
    synonyms: SynonymMap | None = None
    vernacular: dict[str, str] | None = None  # name_norm -> node id (§E.7)
    folder: Path | None = None
    notes: dict[str, str] = field(default_factory=dict)  # why a part is missing

    def require_synonyms(self) -> SynonymMap:
        """The synonym map, or :class:`MissingSynonymMapError` naming what is missing."""
        if self.synonyms is None:
            where = self.folder / SYNONYMS_FILE if self.folder else "these resources"
            raise MissingSynonymMapError(
                f"EM-soft needs the GBIF synonym map, but {where} is missing; build it first "
                "(the builder's taxonomy stage writes resources/synonyms.parquet). Refusing to fall back "
                "to strict matching."
            )
        return self.synonyms


def _resources_dir(folder: Path) -> Path:
    folder = Path(folder)
    if (folder / "resources" / TAXONOMY_FILE).is_file():
        return folder / "resources"
    if (folder / TAXONOMY_FILE).is_file():
        return folder
    raise FileNotFoundError(
        f"no C1 taxonomy under {folder}: expected {folder / 'resources' / TAXONOMY_FILE} (Contract 5)"
    )


def load_resources(folder: str | Path) -> Resources:
    """Read ``folder/resources/{taxonomy,synonyms,vernacular}.parquet`` (or ``folder`` itself holding them).

    The taxonomy is required; a missing synonym map or vernacular index is recorded in ``notes`` and
    makes EM-soft raise / the common-name tree metrics unavailable.
    """
    res_dir = _resources_dir(Path(folder))
    tax_path = res_dir / TAXONOMY_FILE
    taxonomy = Taxonomy.from_table(pq.read_table(tax_path), source=str(tax_path))
    notes: dict[str, str] = {}
    synonyms = None
    syn_path = res_dir / SYNONYMS_FILE
    if syn_path.is_file():
        synonyms = SynonymMap.from_table(pq.read_table(syn_path), source=str(syn_path))
    else:
        notes["synonyms"] = f"unavailable: {syn_path} is missing"
    vernacular = None
    ver_path = res_dir / VERNACULAR_FILE
    if ver_path.is_file():
        table = pq.read_table(ver_path)
        missing = [c for c in VERNACULAR_SCHEMA.names if c not in table.column_names]
        if missing:
            raise ValueError(f"{ver_path}: missing columns {missing}")
        names, nodes = table.column("name_norm").to_pylist(), table.column("node").to_pylist()
        bad = [
            f"row {i}: node {n!r} not in the taxonomy"
            for i, n in enumerate(nodes)
            if taxonomy.index(n or "") is None
        ]
        if bad:
            raise ValueError(f"{ver_path}: " + "; ".join(bad[:10]))
        vernacular = dict(zip(names, nodes, strict=True))
    else:
        notes["vernacular"] = f"unavailable: {ver_path} is missing"
    return Resources(taxonomy, synonyms, vernacular, res_dir, notes)


def save_resources(
    folder: str | Path,
    taxonomy: Taxonomy,
    synonyms: SynonymMap | None,
    vernacular: Mapping[str, str] | None = None,
) -> Path:
    """Write ``folder/resources/`` (Contract 5, deterministic bytes); returns the resources folder.

    ``synonyms=None`` writes no synonym map (and removes a stale one), so EM-soft on that folder raises.
    """
    out = Path(folder) / "resources"
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(taxonomy.to_table(), out / TAXONOMY_FILE)
    syn_path = out / SYNONYMS_FILE
    if synonyms is not None:
        pq.write_table(synonyms.to_table(), syn_path)
    elif syn_path.exists():
        syn_path.unlink()
    ver_path = out / VERNACULAR_FILE
    if vernacular is not None:
        unknown = [n for n in vernacular.values() if taxonomy.index(n) is None]
        if unknown:
            raise ValueError(f"vernacular index names nodes not in the taxonomy: {unknown[:10]}")
        items = sorted(vernacular.items())
        table = pa.Table.from_pydict(
            {"name_norm": [k for k, _ in items], "node": [v for _, v in items]}, schema=VERNACULAR_SCHEMA
        )
        pq.write_table(table, ver_path)
    elif ver_path.exists():
        ver_path.unlink()
    return out
