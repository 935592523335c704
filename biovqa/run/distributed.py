"""Data parallelism through accelerate: one model replica per process, items split by rank, gathered on rank 0.

Start N processes with ``accelerate launch --multi_gpu --num_processes N -m biovqa.cli eval …`` (or
``torchrun --nproc_per_node N``; multi-node: ``accelerate launch --num_machines M --machine_rank …``).
A single process (no ``WORLD_SIZE`` in the environment) never imports accelerate. On a CPU-only host
the state is created with ``cpu=True``: without it every process believes it is rank 0 of 1 and does
all the work twice (ecosystem-probe §4).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any


@dataclass
class DistContext:
    """Where this process sits in the run."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: str | None = None  # None: let the backend choose
    _state: Any = None

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def barrier(self) -> None:
        """Wait for every process (no-op in a single process)."""
        if self._state is not None:
            self._state.wait_for_everyone()

    def gather(self, obj: Any) -> list[Any]:
        """Every process's ``obj`` in rank order (a one-element list in a single process)."""
        if self._state is None:
            return [obj]
        from accelerate.utils import gather_object

        return gather_object([obj])

    def shard(self, items: list) -> list:
        """This rank's share of ``items`` (strided, so length-sorted work stays balanced)."""
        return items[self.rank :: self.world_size]


def init_distributed(cpu: bool | None = None) -> DistContext:
    """The process's :class:`DistContext`; starts accelerate's state only under a multi-process launcher."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return DistContext()
    import torch
    from accelerate import PartialState

    if cpu is None:
        cpu = not torch.cuda.is_available()
    state = PartialState(cpu=cpu)
    if state.num_processes != world:
        raise RuntimeError(
            f"WORLD_SIZE={world} but accelerate started {state.num_processes} process(es) "
            f"({state.distributed_type}); on CPU launch with torchrun or `accelerate launch --multi_gpu`"
        )
    device = None if cpu else str(state.device)
    return DistContext(state.process_index, state.num_processes, state.local_process_index, device, state)
