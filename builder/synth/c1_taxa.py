"""Real taxa behind the C1 synthetic miniature (GBIF Backbone classification, ten groups of Table 5).

Each entry: group, kingdom, phylum, class, order ("" for reptiles: no order in the backbone),
family, genus, epithet, English vernacular, and the catalog's common name when TreeOfLife ships a
non-English one (with its GBIF language tag), else None.
Shared by ``builder.synth.gbif_backbone`` and ``builder.synth.treeoflife``.
"""

from __future__ import annotations

from typing import NamedTuple


class Taxon(NamedTuple):
    group: str
    kingdom: str
    phylum: str
    klass: str
    order: str
    family: str
    genus: str
    epithet: str
    english: str | None
    catalog_name: tuple[str, str] | None = None  # (name, language) shipped instead of the English one

    @property
    def binomial(self) -> str:
        return f"{self.genus} {self.epithet}"


_A, _P = "Animalia", "Plantae"
_CH, _AR, _TR, _BR = "Chordata", "Arthropoda", "Tracheophyta", "Bryophyta"

TAXA: tuple[Taxon, ...] = (
    # Amphibians
    Taxon("Amphibians", _A, _CH, "Amphibia", "Anura", "Hylidae", "Dryophytes", "cinereus", "Green treefrog"),
    Taxon("Amphibians", _A, _CH, "Amphibia", "Anura", "Hylidae", "Dryophytes", "gratiosus", "Barking treefrog"),
    Taxon("Amphibians", _A, _CH, "Amphibia", "Anura", "Hylidae", "Dryophytes", "versicolor", "Gray treefrog"),
    Taxon("Amphibians", _A, _CH, "Amphibia", "Anura", "Ranidae", "Rana", "arvalis", "Moor frog", ("åkergroda", "sv")),
    Taxon("Amphibians", _A, _CH, "Amphibia", "Anura", "Ranidae", "Rana", "temporaria", "Common frog"),
    Taxon(
        "Amphibians", _A, _CH, "Amphibia", "Anura", "Bufonidae", "Bufotes", "viridis", "European green toad",
        ("grönfläckig padda", "sv"),
    ),
    Taxon("Amphibians", _A, _CH, "Amphibia", "Anura", "Bufonidae", "Anaxyrus", "americanus", "American toad"),
    Taxon("Amphibians", _A, _CH, "Amphibia", "Caudata", "Salamandridae", "Salamandra", "salamandra", "Fire salamander"),
    # Angiosperms (two classes)
    Taxon("Angiosperms", _P, _TR, "Magnoliopsida", "Fagales", "Fagaceae", "Quercus", "alba", "White oak"),
    Taxon("Angiosperms", _P, _TR, "Magnoliopsida", "Fagales", "Fagaceae", "Quercus", "robur", "Pedunculate oak"),
    Taxon("Angiosperms", _P, _TR, "Magnoliopsida", "Fagales", "Betulaceae", "Betula", "pendula", "Silver birch"),
    Taxon("Angiosperms", _P, _TR, "Magnoliopsida", "Asterales", "Asteraceae", "Bellis", "perennis", "Common daisy"),
    Taxon("Angiosperms", _P, _TR, "Magnoliopsida", "Rosales", "Rosaceae", "Rosa", "canina", "Dog rose"),
    Taxon("Angiosperms", _P, _TR, "Liliopsida", "Liliales", "Liliaceae", "Lilium", "martagon", "Martagon lily"),
    Taxon("Angiosperms", _P, _TR, "Liliopsida", "Poales", "Poaceae", "Zea", "mays", "Maize"),
    # Arachnids: family- and order-level vernaculars (§E.7)
    Taxon("Arachnids", _A, _AR, "Arachnida", "Araneae", "Araneidae", "Argiope", "aurantia", "Yellow garden spider"),
    Taxon("Arachnids", _A, _AR, "Arachnida", "Araneae", "Araneidae", "Araneus", "diadematus", "Orb weavers"),
    Taxon("Arachnids", _A, _AR, "Arachnida", "Araneae", "Araneidae", "Argiope", "bruennichi", "Orb weavers"),
    Taxon(
        "Arachnids", _A, _AR, "Arachnida", "Araneae", "Tetragnathidae", "Tetragnatha", "extensa", "Long-jawed orb weavers"
    ),
    Taxon("Arachnids", _A, _AR, "Arachnida", "Araneae", "Salticidae", "Phidippus", "audax", "Bold jumping spider"),
    Taxon("Arachnids", _A, _AR, "Arachnida", "Opiliones", "Phalangiidae", "Phalangium", "opilio", "Daddy longlegs"),
    Taxon("Arachnids", _A, _AR, "Arachnida", "Opiliones", "Sclerosomatidae", "Leiobunum", "rotundum", "Daddy longlegs"),
    Taxon(
        "Arachnids", _A, _AR, "Arachnida", "Scorpiones", "Buthidae", "Centruroides", "sculpturatus", "Arizona bark scorpion"
    ),
    # Birds
    Taxon("Birds", _A, _CH, "Aves", "Passeriformes", "Cardinalidae", "Cardinalis", "cardinalis", "Northern cardinal"),
    Taxon("Birds", _A, _CH, "Aves", "Passeriformes", "Cardinalidae", "Passerina", "cyanea", "Indigo bunting"),
    Taxon("Birds", _A, _CH, "Aves", "Passeriformes", "Corvidae", "Corvus", "brachyrhynchos", "American crow"),
    Taxon("Birds", _A, _CH, "Aves", "Passeriformes", "Passerellidae", "Melospiza", "melodia", "Song sparrow"),
    Taxon("Birds", _A, _CH, "Aves", "Passeriformes", "Passerellidae", "Melospiza", "georgiana", "Swamp sparrow"),
    Taxon("Birds", _A, _CH, "Aves", "Accipitriformes", "Accipitridae", "Haliaeetus", "leucocephalus", "Bald eagle"),
    Taxon("Birds", _A, _CH, "Aves", "Anseriformes", "Anatidae", "Anas", "platyrhynchos", "Mallard"),
    Taxon("Birds", _A, _CH, "Aves", "Strigiformes", "Strigidae", "Bubo", "virginianus", "Great horned owl"),
    # Bryophytes
    Taxon("Bryophytes", _P, _BR, "Bryopsida", "Hypnales", "Hylocomiaceae", "Hylocomium", "splendens", "Glittering wood-moss"),
    Taxon("Bryophytes", _P, _BR, "Bryopsida", "Polytrichales", "Polytrichaceae", "Polytrichum", "commune", "Common haircap"),
    Taxon(
        "Bryophytes", _P, _BR, "Sphagnopsida", "Sphagnales", "Sphagnaceae", "Sphagnum", "palustre", None,
        ("sumpvitmossa", "sv"),
    ),
    Taxon("Bryophytes", _P, _BR, "Bryopsida", "Dicranales", "Dicranaceae", "Dicranum", "scoparium", "Broom forkmoss"),
    Taxon("Bryophytes", _P, _BR, "Bryopsida", "Bryales", "Bryaceae", "Bryum", "argenteum", "Silver moss"),
    Taxon("Bryophytes", _P, _BR, "Bryopsida", "Funariales", "Funariaceae", "Funaria", "hygrometrica", "Bonfire moss"),
    # Fish (six classes; Teleostei is not used by these records)
    Taxon("Fish", _A, _CH, "Actinopterygii", "Perciformes", "Centrarchidae", "Micropterus", "salmoides", "Largemouth bass"),
    Taxon("Fish", _A, _CH, "Actinopterygii", "Perciformes", "Centrarchidae", "Lepomis", "macrochirus", "Bluegill"),
    Taxon("Fish", _A, _CH, "Actinopterygii", "Salmoniformes", "Salmonidae", "Salmo", "trutta", "Brown trout"),
    Taxon("Fish", _A, _CH, "Actinopterygii", "Cypriniformes", "Cyprinidae", "Cyprinus", "carpio", "Common carp"),
    Taxon("Fish", _A, _CH, "Elasmobranchii", "Lamniformes", "Lamnidae", "Carcharodon", "carcharias", "Great white shark"),
    Taxon("Fish", _A, _CH, "Elasmobranchii", "Orectolobiformes", "Rhincodontidae", "Rhincodon", "typus", "Whale shark"),
    Taxon("Fish", _A, _CH, "Holocephali", "Chimaeriformes", "Chimaeridae", "Hydrolagus", "colliei", "Spotted ratfish"),
    Taxon("Fish", _A, _CH, "Holocephali", "Chimaeriformes", "Chimaeridae", "Chimaera", "monstrosa", None, ("havmus", "da")),
    Taxon(
        "Fish", _A, _CH, "Coelacanthi", "Coelacanthiformes", "Latimeriidae", "Latimeria", "chalumnae",
        "West Indian Ocean coelacanth",
    ),
    Taxon("Fish", _A, _CH, "Dipneusti", "Ceratodontiformes", "Ceratodontidae", "Neoceratodus", "forsteri", "Australian lungfish"),
    # Gymnosperms
    Taxon("Gymnosperms", _P, _TR, "Pinopsida", "Pinales", "Pinaceae", "Pinus", "sylvestris", "Scots pine", ("tall", "sv")),
    Taxon("Gymnosperms", _P, _TR, "Pinopsida", "Pinales", "Pinaceae", "Picea", "abies", "Norway spruce", ("gran", "sv")),
    Taxon("Gymnosperms", _P, _TR, "Pinopsida", "Pinales", "Pinaceae", "Pinus", "strobus", "Eastern white pine"),
    Taxon("Gymnosperms", _P, _TR, "Pinopsida", "Pinales", "Cupressaceae", "Juniperus", "communis", "Common juniper", ("en", "sv")),
    Taxon("Gymnosperms", _P, _TR, "Pinopsida", "Pinales", "Cupressaceae", "Sequoia", "sempervirens", "Coast redwood"),
    Taxon("Gymnosperms", _P, _TR, "Pinopsida", "Pinales", "Taxaceae", "Taxus", "baccata", "English yew"),
    # Insects
    Taxon("Insects", _A, _AR, "Insecta", "Lepidoptera", "Nymphalidae", "Danaus", "plexippus", "Monarch"),
    Taxon("Insects", _A, _AR, "Insecta", "Lepidoptera", "Nymphalidae", "Vanessa", "atalanta", "Red admiral"),
    Taxon("Insects", _A, _AR, "Insecta", "Hymenoptera", "Apidae", "Apis", "mellifera", "Western honey bee"),
    Taxon("Insects", _A, _AR, "Insecta", "Hymenoptera", "Apidae", "Bombus", "terrestris", "Buff-tailed bumblebee"),
    Taxon("Insects", _A, _AR, "Insecta", "Coleoptera", "Coccinellidae", "Coccinella", "septempunctata", "Seven-spot ladybird"),
    Taxon("Insects", _A, _AR, "Insecta", "Odonata", "Libellulidae", "Libellula", "pulchella", "Twelve-spotted skimmer"),
    # Mammals
    Taxon("Mammals", _A, _CH, "Mammalia", "Carnivora", "Felidae", "Puma", "concolor", "Cougar"),
    Taxon("Mammals", _A, _CH, "Mammalia", "Carnivora", "Felidae", "Lynx", "rufus", "Bobcat"),
    Taxon("Mammals", _A, _CH, "Mammalia", "Carnivora", "Canidae", "Vulpes", "vulpes", "Red fox"),
    Taxon("Mammals", _A, _CH, "Mammalia", "Carnivora", "Canidae", "Canis", "lupus", "Gray wolf"),
    Taxon("Mammals", _A, _CH, "Mammalia", "Rodentia", "Muridae", "Mus", "musculus", "House mouse"),
    Taxon("Mammals", _A, _CH, "Mammalia", "Artiodactyla", "Cervidae", "Odocoileus", "virginianus", "White-tailed deer"),
    Taxon("Mammals", _A, _CH, "Mammalia", "Lagomorpha", "Leporidae", "Oryctolagus", "cuniculus", "European rabbit"),
    # Reptiles: four classes, no order (skip edge class -> family)
    Taxon("Reptiles", _A, _CH, "Squamata", "", "Lacertidae", "Zootoca", "vivipara", "Viviparous lizard"),
    Taxon("Reptiles", _A, _CH, "Squamata", "", "Lacertidae", "Lacerta", "agilis", "Sand lizard"),
    Taxon("Reptiles", _A, _CH, "Squamata", "", "Anguidae", "Anguis", "fragilis", "Slow worm", ("kopparödla", "sv")),
    Taxon("Reptiles", _A, _CH, "Squamata", "", "Colubridae", "Natrix", "natrix", "Grass snake"),
    Taxon("Reptiles", _A, _CH, "Testudines", "", "Emydidae", "Trachemys", "scripta", "Pond slider"),
    Taxon("Reptiles", _A, _CH, "Testudines", "", "Cheloniidae", "Chelonia", "mydas", "Green sea turtle"),
    Taxon("Reptiles", _A, _CH, "Crocodylia", "", "Alligatoridae", "Alligator", "mississippiensis", "American alligator"),
    Taxon("Reptiles", _A, _CH, "Sphenodontia", "", "Sphenodontidae", "Sphenodon", "punctatus", "Tuatara"),
)

#: Backbone synonyms of the miniature: (synonym canonical name, rank, status, accepted canonical names).
SYNONYMS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("Hyla cinerea", "species", "synonym", ("Dryophytes cinereus",)),
    ("Hyla versicolor", "species", "synonym", ("Dryophytes versicolor",)),
    ("Hyla gratiosa", "species", "homotypic synonym", ("Dryophytes gratiosus",)),
    ("Felis concolor", "species", "synonym", ("Puma concolor",)),
    ("Bufo viridis", "species", "synonym", ("Bufotes viridis",)),
    ("Lacerta vivipara", "species", "homotypic synonym", ("Zootoca vivipara",)),
    ("Magnoliophyta", "phylum", "synonym", ("Tracheophyta",)),
    ("Reptilia", "class", "proparte synonym", ("Squamata", "Testudines", "Crocodylia", "Sphenodontia")),
)

#: Supplementary vernaculars (name, language) beyond each taxon's English and catalog name (Table 25).
EXTRA_VERNACULARS: dict[str, tuple[tuple[str, str], ...]] = {
    "Rana arvalis": (("Spidssnudet frø", "da"),),
    "Juniperus communis": (("ene", "da"),),
    "Picea abies": (("rødgran", "da"),),
}
