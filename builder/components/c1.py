"""C1 (taxonomy) component: TreeOfLife-200M + GBIF Backbone -> selection manifest -> questions + resources.

Manifest files written under ``out_dir`` by :func:`manifests` and read by :func:`questions`:
``c1_manifest.parquet`` (the pinned selection), ``c1_exclusions.parquet`` (per-row exclusions of the
examined rows), ``c1_exposure.parquet`` (catalog exposure per tree node, §E.3),
``c1_synonym_pairs.parquet`` (backbone synonym -> accepted canonical names) and ``c1_summary.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from builder.common import Report, SourceFormatError
from builder.manifests import c1_select
from builder.manifests.audit import AuditSpec, audit
from builder.sources import gbif_backbone, treeoflife

SOURCES: tuple[str, ...] = ("treeoflife", "gbif_backbone")
MANIFEST = "c1_manifest.parquet"
EXPOSURE = "c1_exposure.parquet"
SYNONYM_PAIRS = "c1_synonym_pairs.parquet"
SUMMARY = "c1_summary.json"
REQUIRED_FIELDS = ("kingdom", "phylum", "class", "order", "family", "genus", "species", "scientific_name",
                   "common_name", "image_path", "sha256")  # fmt: skip


def synth(out_root: Path, seed: int = 42) -> dict[str, str]:
    """Write the TreeOfLife + backbone miniature under ``out_root``; {source key: relative folder}."""
    from builder.synth import gbif_backbone as synth_backbone
    from builder.synth import treeoflife as synth_tol

    out_root = Path(out_root)
    tol = synth_tol.write(out_root, seed=seed)
    backbone = synth_backbone.write(out_root)
    return {
        "treeoflife": tol.relative_to(out_root).as_posix(),
        "gbif_backbone": backbone.relative_to(out_root).as_posix(),
    }


def make_verifier(root: Path, min_side: int) -> c1_select.Verifier:
    """Image checks for the selection walk: present, decodable (bounded), at least ``min_side`` px."""
    layout = treeoflife.image_layout(root)
    if layout == "shards":
        idx = treeoflife.shard_index(root)
        where = {
            u: (p, r)
            for u, p, r in zip(
                idx["uuid"].to_pylist(), idx["path"].to_pylist(), idx["row"].to_pylist(), strict=True
            )
        }
    elif layout == "files":
        where = {u: (p, -1) for u, p in treeoflife.file_index(root).items()}
    else:
        where = {}

    def verify(cands: list[dict]) -> dict[str, c1_select.Verified]:
        out: dict[str, c1_select.Verified] = {}
        by_shard: dict[str, list[tuple[str, int]]] = {}
        for c in cands:
            u = c["uuid"]
            loc = where.get(u)
            if loc is None:
                out[u] = c1_select.Verified(False, "image_missing", f"no image for uuid {u} under {root}")
            elif loc[1] >= 0:
                by_shard.setdefault(loc[0], []).append((u, loc[1]))
            else:
                try:
                    img = treeoflife.load_file(root, loc[0])
                except SourceFormatError as exc:
                    out[u] = c1_select.Verified(False, "image_corrupt", str(exc), loc[0])
                    continue
                out[u] = _sized(img, loc[0], -1, min_side)
        for rel, items in sorted(by_shard.items()):
            loaded = treeoflife.load_shard_rows(root, rel, sorted(r for _, r in items))
            for u, r in items:
                res = loaded[r]
                if isinstance(res, SourceFormatError):
                    out[u] = c1_select.Verified(False, "image_corrupt", str(res), rel, r)
                else:
                    out[u] = _sized(res, rel, r, min_side)
        return out

    return verify


def _sized(img: treeoflife.LoadedImage, path: str, row: int, min_side: int) -> c1_select.Verified:
    if min(img.width, img.height) < min_side:
        return c1_select.Verified(
            False, "below_resolution", f"{img.width}x{img.height} < {min_side} px", path, row
        )
    return c1_select.Verified(True, "", "", path, row, img.sha256, img.width, img.height)


def manifests(roots: dict[str, Path], out_dir: Path, *, strict: bool = False, scale: str = "full") -> dict:
    """Select the C1 images, pin them, audit the manifest (§L.2); return the summary dict."""
    from builder.taxonomy.synonyms import synonym_pairs
    from builder.taxonomy.vernacular import resolver_from_backbone

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary: dict = {"component": "c1", "messages": []}
    if "treeoflife" not in roots or not Path(roots["treeoflife"]).exists():
        summary["messages"].append("treeoflife source missing: C1 skipped")
        summary["skipped"] = True
        return summary
    report = Report(strict=strict)
    taxa = vern = None
    if "gbif_backbone" in roots and Path(roots["gbif_backbone"]).exists():
        taxa = gbif_backbone.read_taxa(roots["gbif_backbone"], report)
        vern = gbif_backbone.read_vernaculars(roots["gbif_backbone"], report)
        pairs = sorted(synonym_pairs(taxa, report))
        pq.write_table(
            pa.table({"name": [p[0] for p in pairs], "accepted": [p[1] for p in pairs]}),
            out_dir / SYNONYM_PAIRS,
        )
    else:
        summary["messages"].append(
            "gbif_backbone missing: no synonym map (EM-soft will refuse), English names from triage/overrides only"
        )
        (out_dir / SYNONYM_PAIRS).unlink(missing_ok=True)
    resolver = resolver_from_backbone(taxa, vern, cache_dir=out_dir / "vernacular-cache")

    def english(sci: str, name: str):
        res = resolver.resolve(sci, name)
        return res.english, res.mechanism, res.detail

    config = c1_select.SelectionConfig.mini() if scale == "mini" else c1_select.SelectionConfig.full()
    root = Path(roots["treeoflife"])
    result = c1_select.select_from_catalog(
        treeoflife.catalog_files(root),
        out_dir,
        config=config,
        verify=make_verifier(root, config.min_side),
        english=english,
    )
    check = audit_c1(out_dir / MANIFEST, root)
    summary.update(result)
    mech = pq.read_table(out_dir / MANIFEST, columns=["common_name_mechanism"])[
        "common_name_mechanism"
    ].to_pylist()
    per = {m: mech.count(m) for m in sorted(set(mech))}
    summary["vernacular"] = (
        "English common names (§D.10) of the selected images: "
        + ", ".join(f"{n} by {m}" for m, n in per.items())
        + f"; {result['exclusions'].get('no_english_common_name', 0)} images excluded with no English name"
    )
    summary["audit"] = check.summary()
    summary["bad_rows"] = [str(b) for b in report.bad]
    stable = {k: v for k, v in summary.items() if k != "timings_s"}  # the file stays byte-identical
    (out_dir / SUMMARY).write_text(json.dumps(stable, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    check.raise_if_failed()
    return summary


def audit_c1(manifest: Path, root: Path):
    """§L.2 on the C1 manifest: every needed rank non-null (reptiles' order exempt), image present."""
    shard_rows: dict[str, int] = {}

    def image_check(row: dict) -> str | None:
        path = root / row["image_path"]
        if not path.is_file():
            return f"{path} not found"
        if row["image_row"] >= 0:
            if row["image_path"] not in shard_rows:
                shard_rows[row["image_path"]] = pq.ParquetFile(path).metadata.num_rows
            if row["image_row"] >= shard_rows[row["image_path"]]:
                return f"{path}: row {row['image_row']} beyond the shard"
        return None

    spec = AuditSpec(
        id_column="id",
        required=REQUIRED_FIELDS,
        exempt={"order": lambda r: r.get("group") in c1_select.NO_ORDER_GROUPS},
        image_check=image_check,
    )
    return audit(manifest, spec)


def questions(manifest_dir: Path, roots: dict[str, Path], hub_dir: Path, *, seed: int = 42) -> Iterator[dict]:
    """Yield the C1 question records; write hub_dir/resources/ (taxonomy, synonyms, vernacular index)."""
    from biovqa.taxonomy import SynonymMap, save_resources
    from builder.questions import c1 as gen
    from builder.taxonomy.synonyms import synonym_table

    manifest_dir = Path(manifest_dir)
    path = manifest_dir / MANIFEST
    if not path.is_file():
        return
    rows = pq.read_table(path).to_pylist()
    if not rows:
        return
    exp = pq.read_table(manifest_dir / EXPOSURE)
    exposure = dict(zip(exp["node"].to_pylist(), exp["exposure"].to_pylist(), strict=True))
    records, tax, vern, _log = gen.generate(rows, exposure, seed=seed)
    synonyms = None
    pairs_path = manifest_dir / SYNONYM_PAIRS
    if pairs_path.is_file():
        pt = pq.read_table(pairs_path)
        keep = set(tax.name_norms) | set(vern)
        table = synonym_table(
            zip(pt["name"].to_pylist(), pt["accepted"].to_pylist(), strict=True), keep_accepted=keep
        )
        synonyms = SynonymMap(
            zip(table["name_norm"].to_pylist(), table["accepted_norm"].to_pylist(), strict=True)
        )
    save_resources(hub_dir, tax, synonyms, vern)
    yield from records
