"""ONNX node patterns the importer converts as one node.

Exporters write a convolution followed by an inference-mode ``BatchNormalization`` (PyTorch's dynamo
exporter and most others keep them apart). Normalizing with fixed statistics is an affine map per
output channel, ``y = conv(x) * s + t`` with ``s = scale / sqrt(var + eps)`` and
``t = bias - mean * s``, so it folds into the convolution: ``conv(x, w * s) + (b * s + t)``. The
folded weights are computed from the initializers with graphgrad ops, so they are computed once at
import when the initializers are constants, and every gradient still reaches ``w``, ``b``, ``scale``,
``bias``, ``mean`` and ``var`` when they are trained (fine-tuning an imported model is unchanged);
the activation map is no longer normalized in four passes after each convolution.

:func:`fused_nodes` rewrites the node list (the model itself is never changed); the pair becomes a
node of op type ``ConvBatchNormalization`` in the :data:`DOMAIN` domain, carrying both nodes'
attributes (their names do not overlap), whose converter is below.
"""
from __future__ import annotations

import graphgrad.ops as G
from graphgrad.io.onnx.importer import converter, onnx_module
from graphgrad.io.onnx.ops_nn import batch_norm_affine, conv

#: the domain of the fused node types (a name no ONNX model uses)
DOMAIN = "graphgrad.fused"


def fused_nodes(graph_proto, opset: int) -> list:
    """The graph's nodes, with each Conv whose only use is an inference-mode BatchNormalization
    merged with it into one ``ConvBatchNormalization`` node (at the BatchNormalization's place)."""
    nodes = list(graph_proto.node)
    if opset < 9 or not any(n.op_type == "BatchNormalization" for n in nodes):
        return nodes
    uses = _uses(graph_proto)
    producer = {out: i for i, n in enumerate(nodes) for out in n.output if out}
    merged, dropped = {}, set()
    for i, bn in enumerate(nodes):
        if bn.op_type != "BatchNormalization" or bn.domain not in ("", "ai.onnx") or not _inference(bn, opset):
            continue
        j = producer.get(bn.input[0])
        if j is None:
            continue
        conv_node = nodes[j]
        if conv_node.op_type != "Conv" or conv_node.domain not in ("", "ai.onnx") or uses.get(bn.input[0], 0) != 1:
            continue
        merged[i] = _merge(conv_node, bn)
        dropped.add(j)
    return [merged.get(i, n) for i, n in enumerate(nodes) if i not in dropped]


def _inference(bn, opset: int) -> bool:
    """Whether a BatchNormalization normalizes with its given statistics and has one output."""
    outputs = [o for o in bn.output if o]
    training = any(a.name == "training_mode" and a.i for a in bn.attribute)
    return len(outputs) == 1 and bn.output[0] and not (opset >= 14 and training)


def _uses(graph_proto) -> dict:
    """{value name: how many times it is read} by the graph's nodes (an input listed twice counts
    twice) and outputs; a name a subgraph reads (it may read outer names) counts as two uses."""
    uses: dict = {}
    for n in graph_proto.node:
        for name in n.input:
            uses[name] = uses.get(name, 0) + 1
        for sub in _subgraphs(n):
            for name in _names_read(sub):
                uses[name] = uses.get(name, 0) + 2
    for out in graph_proto.output:
        uses[out.name] = uses.get(out.name, 0) + 2
    return uses


def _subgraphs(node) -> list:
    return [a.g for a in node.attribute if a.HasField("g")] + [g for a in node.attribute for g in a.graphs]


def _names_read(graph_proto) -> set:
    """Every value name the nodes of ``graph_proto`` and of its nested subgraphs read."""
    names = set()
    for n in graph_proto.node:
        names.update(n.input)
        for sub in _subgraphs(n):
            names |= _names_read(sub)
    return names


def _merge(conv_node, bn):
    helper = onnx_module().helper
    x, w = conv_node.input[0], conv_node.input[1]
    b = conv_node.input[2] if len(conv_node.input) > 2 else ""
    node = helper.make_node("ConvBatchNormalization", [x, w, b] + list(bn.input[1:5]), [bn.output[0]],
                            name=f"{conv_node.name or conv_node.output[0]}+{bn.name or bn.output[0]}",
                            domain=DOMAIN)
    node.attribute.extend(conv_node.attribute)
    node.attribute.extend(a for a in bn.attribute if a.name in ("epsilon",))
    return node


@converter("ConvBatchNormalization", domain=DOMAIN)
def conv_batch_normalization(node, x, w, b, scale, bias, mean, var):
    """Conv then inference BatchNormalization, as one convolution with folded weights and bias."""
    s, t = batch_norm_affine(scale, bias, mean, var, float(node.attr("epsilon", 1e-5)))
    w = w * G.reshape(s, (-1,) + (1,) * (len(w.shape) - 1))
    return conv(node, x, w, t if b is None else b * s + t)
