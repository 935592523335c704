"""Bio-VQA: the runtime of a biological VQA benchmark (task registry, prompts, parsers, scorers, runner).

Importing this package is cheap: torch, transformers, datasets and evaluate are imported lazily by the
code paths that need them.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
