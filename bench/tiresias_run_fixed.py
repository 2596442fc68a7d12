"""Run the Tiresias authors' simulator with its node memory reset by ``empty_infra`` (Python 2.7).

    python2.7 bench/tiresias_run_fixed.py CHECKOUT/simulator/run_sim.py --scheme=yarn --schedule=shortest ...

Their preemptive loops (``shortest``, ``dlas``) empty the cluster and place every job again at
every event (run_sim.py lines 678-697). ``_Cluster.empty_infra`` (cluster.py lines 94-98) resets
each node's GPUs and CPUs but not its memory (``node.init_node(num_gpu, num_cpu)`` passes no
memory, so ``free_mem`` keeps its value), and each placement under ``--scheme=yarn`` takes memory
again (switch.py lines 167, 92, 123), released only at completion. After about 50 placements on a
node its free memory is below one worker's 5 GB and nothing is placed any more: on a 300-job Philly
window (2017-11-01, 8 x 8 GPUs) their ``shortest --scheme=yarn`` completes 37 jobs and then
stalls. This wrapper resets each node's memory in ``empty_infra`` as it resets GPUs and CPUs, and
stubs two imports their README's environment does not need (``numpy`` in jobs.py, used only inside
a string; ``lp``, which imports CPLEX, used only by ``--scheme=balance``). Nothing else changes;
under ``--scheme=count`` memory is never read, and ``fifo`` never calls ``empty_infra``.

It is our code (run with their Python 2.7), so that their checkout stays as published.
"""

from __future__ import print_function  # noqa: UP010 (run by Python 2.7)

import os
import runpy
import sys
import types


def main():
    run_sim = os.path.abspath(sys.argv[1])
    sim = os.path.dirname(run_sim)
    sys.path.insert(0, sim)
    for name in ("numpy", "lp"):
        try:
            __import__(name)
        except ImportError:
            sys.modules[name] = types.ModuleType(name)
    import cluster

    empty = cluster._Cluster.empty_infra

    def empty_infra(self):
        empty(self)
        for switch in self.switch_list:
            for node in switch.node_list:
                node.free_mem = node.mem

    cluster._Cluster.empty_infra = empty_infra
    sys.argv = [run_sim] + sys.argv[2:]  # noqa: RUF005 (Python 2.7 has no [a, *b])
    runpy.run_path(run_sim, run_name="__main__")


if __name__ == "__main__":
    main()
