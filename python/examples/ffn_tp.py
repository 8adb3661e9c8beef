"""A tensor-parallel FFN block, written as the runtime's level-3 orchestration functions are, run on four
simulated chips.

Each layer: every rank multiplies the activations by its slice of the up-projection on its own chip
(a single per chip); then one group across the ranks multiplies by the down-projection slices and
all-reduces the partial sums (member r reads rank r's output, on chip r); after the last layer a SUB
step on the host reads the result. Only the imports differ from code written for the runtime.

    PYTHONPATH=python python3 python/examples/ffn_tp.py [OUT]    # default OUT: out/ffn_tp
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dirsched import Testbed  # noqa: E402
from dirsched.simpler import CallConfig, TaskArgs, TensorArgType, make_tensor_arg  # noqa: E402


class HostTensor:
    """Stands in for a framework tensor: the testbed needs only its identity and its size."""

    def __init__(self, *shape, itemsize=2):
        self.shape = shape
        self.nbytes = itemsize
        for d in shape:
            self.nbytes *= d


def ffn_tp(orch, args, cfg):
    ranks = args["ranks"]
    x = args["x"]
    for layer in range(args["layers"]):
        hidden = [orch.alloc((args["tokens"], args["ffn"] // len(ranks)), "float16") for _ in ranks]
        partial = [orch.alloc((args["tokens"], args["model"]), "float16") for _ in ranks]
        with orch.scope():
            for r, chip in enumerate(ranks):
                a = TaskArgs()
                a.add_tensor(make_tensor_arg(x), TensorArgType.INPUT)
                a.add_tensor(make_tensor_arg(args["w_up"][layer][r]), TensorArgType.INPUT)
                a.add_tensor(hidden[r], TensorArgType.OUTPUT)
                orch.submit_next_level(args["up"], a, cfg, worker=chip)

            args_list = []
            for r in range(len(ranks)):
                a = TaskArgs()
                a.add_tensor(hidden[r], TensorArgType.INPUT)
                a.add_tensor(make_tensor_arg(args["w_down"][layer][r]), TensorArgType.INPUT)
                a.add_tensor(partial[r], TensorArgType.OUTPUT)
                args_list.append(a)
            # Member 0 also writes the layer's output, which the next layer (and the SUB step) reads.
            args_list[0].add_tensor(make_tensor_arg(x), TensorArgType.INOUT)
            orch.submit_next_level_group(args["down_allreduce"], args_list, cfg, workers=list(ranks))

    s = TaskArgs()
    s.add_tensor(make_tensor_arg(x), TensorArgType.INPUT)
    s.add_scalar(args["layers"])
    orch.submit_sub(args["log"], s)


def main(out):
    chips = [0, 1, 2, 3]
    tb = Testbed([{"id": c, "kind": "local_chip"} for c in chips], sub=1, name="ffn-tp")
    tokens, model, ffn, layers = 512, 1024, 4096, 2
    args = {
        "ranks": chips,
        "layers": layers,
        "tokens": tokens,
        "model": model,
        "ffn": ffn,
        "x": HostTensor(tokens, model),
        "w_up": [[HostTensor(model, ffn // len(chips)) for _ in chips] for _ in range(layers)],
        "w_down": [[HostTensor(ffn // len(chips), model) for _ in chips] for _ in range(layers)],
        "up": tb.register("ffn_up", "LOCAL_CHIP", duration_s=0.004),
        "down_allreduce": tb.register("ffn_down_allreduce", "LOCAL_CHIP", duration_s=0.006),
        "log": tb.register("log_step", "LOCAL_PYTHON", duration_s=0.001),
    }
    result = tb.run(ffn_tp, out, args=args, cfg=CallConfig(block_dim=24))
    print("%-24s %6s %8s %10s" % ("task", "member", "worker", "t_s"))
    for d in result.dispatches:
        print("%-24s %6d %8s %10.6g" % (d["task"], d["member"], d.get("worker", d.get("sub_worker")), d["t_s"]))
    print("outcome %s, makespan %g s" % (result.outcome, result.makespan_s))
    print("report: %s" % result.report)
    return result


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join("out", "ffn_tp"))
