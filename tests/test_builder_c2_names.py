"""The CUB class -> common / scientific name map (builder/data/cub_scientific_names.csv)."""

from __future__ import annotations

from collections import Counter

import pytest

from builder.taxonomy.cub_names import NAMES_CSV, load_cub_names


def test_map_covers_200_classes_with_consistent_entries():
    names = load_cub_names()
    assert len(names) == 200
    assert sorted(e.class_id for e in names.values()) == list(range(1, 201))
    assert all(folder.startswith(f"{e.class_id:03d}.") for folder, e in names.items())
    assert Counter(e.status for e in names.values()) == {"species": 198, "genus_only": 1, "mixed": 1}


def test_counts_implied_by_the_paper():
    """open_scientific_name skips two classes (11 668 = 11 788 - 120), open_genus one (11 728)."""
    names = load_cub_names()
    assert sum(not e.scientific_name for e in names.values()) == 2
    assert sum(not e.genus for e in names.values()) == 1
    single = sorted(e.common_name for e in names.values() if not e.category)
    # CUB's ten one-word classes (597 images, 11 788 - 11 191) plus the two hyphenated nightjars
    assert len(single) == 12 and {"Cardinal", "Mallard", "Chuck-will's-widow", "Whip-poor-will"} <= set(
        single
    )


@pytest.mark.parametrize(
    ("folder", "common", "category", "kind", "scientific", "genus"),
    [
        ("001.Black_footed_Albatross", "Black-footed Albatross", "Albatross", "Black-footed", "Phoebastria nigripes", "Phoebastria"),
        ("059.California_Gull", "California Gull", "Gull", "California", "Larus californicus", "Larus"),
        ("009.Brewer_Blackbird", "Brewer's Blackbird", "Blackbird", "Brewer's", "Euphagus cyanocephalus", "Euphagus"),
        ("141.Artic_Tern", "Arctic Tern", "Tern", "Arctic", "Sterna paradisaea", "Sterna"),
        ("023.Brandt_Cormorant", "Brandt's Cormorant", "Cormorant", "Brandt's", "Urile penicillatus", "Urile"),
        ("103.Sayornis", "Sayornis", "", "", "", "Sayornis"),
        ("130.Tree_Sparrow", "Tree Sparrow", "Sparrow", "Tree", "", ""),
        ("092.Nighthawk", "Nighthawk", "", "", "Chordeiles minor", "Chordeiles"),
    ],
)  # fmt: skip
def test_curated_entries(folder, common, category, kind, scientific, genus):
    e = load_cub_names()[folder]
    assert (e.common_name, e.category, e.kind, e.scientific_name, e.genus) == (
        common,
        category,
        kind,
        scientific,
        genus,
    )


def test_bad_map_rows_are_named(tmp_path):
    text = NAMES_CSV.read_text(encoding="utf-8").splitlines()
    text[3] = text[3].replace(",species,", ",subspecies,")
    bad = tmp_path / "names.csv"
    bad.write_text("\n".join(text) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"names.csv:4: status 'subspecies'"):
        load_cub_names(bad)


def test_map_matches_the_real_class_list(shared_sources):
    lines = (shared_sources / "cub-200-2011" / "CUB_200_2011" / "classes.txt").read_text().split("\n")
    real = {int(i): f for i, f in (ln.split(" ", 1) for ln in lines if ln.strip())}
    names = load_cub_names()
    assert {e.class_id: folder for folder, e in names.items()} == real
    source = (shared_sources / "cub-200-2011" / "scientific_names" / "classes_wikispecies.txt").read_text()
    wikispecies = {int(ln.split(" ", 1)[0]): ln.split(" ", 1)[1] for ln in source.splitlines() if ln.strip()}
    kept = sum(e.scientific_name == wikispecies[e.class_id] for e in names.values())
    assert kept >= 180  # curation changed only superseded names and resolved genus-only classes
