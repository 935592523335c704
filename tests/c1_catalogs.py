"""Small TreeOfLife-layout catalogs for the C1 selection tests."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def dense_bird_catalog(path: Path, n: int = 6000, no_common_name: float = 0.0) -> None:
    """Many images of few bird species (abundant species, so the species cap binds)."""
    import random

    rng = random.Random(7)
    rows = []
    for _ in range(n):
        k = min(int(rng.paretovariate(1.2)), 12)
        rows.append(
            {
                "uuid": f"{rng.getrandbits(128):032x}",
                "kingdom": "Animalia",
                "phylum": "Chordata",
                "class": "Aves",
                "order": "Passeriformes",
                "family": f"Fam{k % 3}",
                "genus": f"Genus{k}",
                "species": f"Genus{k} sp{k}",
                "scientific_name": f"Genus{k} sp{k}",
                "common_name": "" if rng.random() < no_common_name else f"Bird {k}",
                "resized_size": [300, 400],
            }
        )
    pq.write_table(pa.Table.from_pylist(rows), path)
