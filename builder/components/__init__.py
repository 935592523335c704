"""One module per benchmark component; each exposes SOURCES, synth(), manifests() and questions()."""

COMPONENTS = ("c1", "c2", "c3", "c4")
