"""SummaryWriter: TensorBoard event files (scalars, histograms, the model graph) from graphgrad.

The files are written with the ``tensorboard`` package's own ``EventFileWriter`` and protobuf
classes (the ``tensorboard`` extra: ``pip install 'graphgrad[tensorboard]'``), so TensorBoard reads
them as it reads TensorFlow's and PyTorch's. Open them with ``tensorboard --logdir runs``.

Examples:
    >>> with SummaryWriter("runs/exp1") as w:
    ...     for step in range(100):
    ...         w.add_scalar("loss", loss_value, step)
    ...     w.add_histogram("fc/weight", model.fc.weight, step)
    ...     w.add_graph(model, input_shape=(2,))
"""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import Any, Optional, Sequence

from graphgrad.backend import np
from graphgrad.core.tensor import Tensor, host_array

__all__ = ["SummaryWriter", "graph_def"]


def _tb():
    try:
        from tensorboard.compat.proto import (attr_value_pb2, event_pb2, graph_pb2, node_def_pb2, summary_pb2,
                                              tensor_shape_pb2, types_pb2, versions_pb2)
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError as exc:
        raise ImportError("SummaryWriter needs the tensorboard package: pip install 'graphgrad[tensorboard]'") from exc
    return {"attr_value_pb2": attr_value_pb2, "event_pb2": event_pb2, "graph_pb2": graph_pb2,
            "node_def_pb2": node_def_pb2, "summary_pb2": summary_pb2, "tensor_shape_pb2": tensor_shape_pb2,
            "types_pb2": types_pb2, "versions_pb2": versions_pb2, "EventFileWriter": EventFileWriter}


_host = host_array  # a Tensor, array or list as a NumPy array


class SummaryWriter:
    """Writes TensorBoard events to ``log_dir`` (default ``runs/<date>_<host>``), PyTorch-style.

    Args:
        log_dir: directory of the event file (created).
        flush_secs: how often pending events are written to disk.
        filename_suffix: appended to the event file's name.
    """

    def __init__(self, log_dir: Optional[str] = None, flush_secs: int = 120, max_queue: int = 10,
                 filename_suffix: str = "") -> None:
        self._pb = _tb()
        if log_dir is None:
            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname())
        self.log_dir = str(log_dir)
        os.makedirs(self.log_dir, exist_ok=True)
        self._writer = self._pb["EventFileWriter"](self.log_dir, max_queue, flush_secs, filename_suffix)

    # ---- events --------------------------------------------------------------------------------------
    def _event(self, step: Optional[int], walltime: Optional[float], **fields) -> None:
        if self._writer is None:
            raise RuntimeError("SummaryWriter is closed")
        event = self._pb["event_pb2"].Event(wall_time=time.time() if walltime is None else float(walltime),
                                            **fields)
        if step is not None:
            event.step = int(step)
        self._writer.add_event(event)

    def _summary(self, value, step, walltime) -> None:
        self._event(step, walltime, summary=self._pb["summary_pb2"].Summary(value=[value]))

    def add_scalar(self, tag: str, scalar_value: Any, global_step: Optional[int] = None,
                   walltime: Optional[float] = None) -> None:
        """Record one value of the curve ``tag`` at ``global_step``."""
        value = float(_host(scalar_value).reshape(()))
        self._summary(self._pb["summary_pb2"].Summary.Value(tag=tag, simple_value=value), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step: Optional[int] = None,
                    walltime: Optional[float] = None) -> None:
        """Record several curves under ``main_tag/`` (one tag each, same writer)."""
        for tag, value in tag_scalar_dict.items():
            self.add_scalar(f"{main_tag}/{tag}", value, global_step, walltime)

    def add_histogram(self, tag: str, values: Any, global_step: Optional[int] = None, bins: Any = 30,
                      walltime: Optional[float] = None) -> None:
        """Record the distribution of ``values`` (a Tensor or array), binned by ``numpy.histogram``
        (``bins``: a count, edges or a NumPy rule such as ``"auto"``)."""
        array = _host(values).astype(np.float64).reshape(-1)
        array = array[np.isfinite(array)]
        if array.size == 0:
            raise ValueError(f"add_histogram({tag!r}): no finite values")
        counts, edges = np.histogram(array, bins=bins)
        proto = self._pb["summary_pb2"].HistogramProto(
            min=float(array.min()), max=float(array.max()), num=int(array.size), sum=float(array.sum()),
            sum_squares=float((array * array).sum()), bucket_limit=[float(e) for e in edges[1:]],
            bucket=[float(c) for c in counts])
        self._summary(self._pb["summary_pb2"].Summary.Value(tag=tag, histo=proto), global_step, walltime)

    def add_text(self, tag: str, text: str, global_step: Optional[int] = None,
                 walltime: Optional[float] = None) -> None:
        """Record a string (shown in TensorBoard's text tab)."""
        pb = self._pb
        metadata = pb["summary_pb2"].SummaryMetadata(
            plugin_data=pb["summary_pb2"].SummaryMetadata.PluginData(plugin_name="text"))
        from tensorboard.compat.proto import tensor_pb2

        tensor = tensor_pb2.TensorProto(dtype=pb["types_pb2"].DT_STRING, string_val=[text.encode("utf-8")],
                                        tensor_shape=pb["tensor_shape_pb2"].TensorShapeProto(
                                            dim=[pb["tensor_shape_pb2"].TensorShapeProto.Dim(size=1)]))
        self._summary(pb["summary_pb2"].Summary.Value(tag=tag, metadata=metadata, tensor=tensor), global_step,
                      walltime)

    def add_graph(self, model: Any, input_to_model: Any = None, input_shape: Optional[Sequence] = None,
                  dtype: Any = None) -> None:
        """Record the graph of ``model`` (a Module or Model) traced on a placeholder batch: give an
        example input (``input_to_model``) or the shape of one sample (``input_shape``, no batch
        dimension). See :func:`graph_def`."""
        self._event(None, None, graph_def=graph_def(model, input_to_model, input_shape, dtype).SerializeToString())

    # ---- lifecycle -------------------------------------------------------------------------------------
    def flush(self) -> None:
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---- graph tracing -----------------------------------------------------------------------------------------
_DTYPES = {"float16": "DT_HALF", "float32": "DT_FLOAT", "float64": "DT_DOUBLE", "int8": "DT_INT8",
           "int16": "DT_INT16", "int32": "DT_INT32", "int64": "DT_INT64", "uint8": "DT_UINT8", "bool": "DT_BOOL"}


def _trace(model: Any, input_to_model: Any, input_shape: Optional[Sequence], dtype: Any):
    """Build ``model`` on a placeholder in a fresh Graph; returns the graph. Each submodule's nodes
    are made inside a name scope of its attribute name; parameter reads are named by their dotted
    names."""
    from graphgrad.core.autograd import no_grad
    from graphgrad.dtypes import as_dtype
    from graphgrad.graph.graph import Graph
    from graphgrad.graph.variables import placeholder

    if input_to_model is not None:
        example = _host(input_to_model)
        input_shape, dtype = tuple(example.shape[1:]), dtype or example.dtype
    if input_shape is None:
        raise ValueError("add_graph needs input_to_model (an example batch) or input_shape (one sample's shape)")
    root = getattr(model, "module", None)
    root = model if root is None else root
    params = list(root.named_parameters())
    if dtype is None:
        floats = [p.dtype for _, p in params if p.dtype.kind == "f"]
        dtype = floats[0] if floats else "float32"
    dtype = as_dtype(dtype)
    graph = Graph()
    saved_names = [(p, p.base_name) for _, p in params]
    patched = []
    was_training = root.training
    try:
        for name, p in params:
            p.base_name = name.replace(".", "/")
        for name, module in root.named_modules():
            if module is root or not name:
                continue
            patched.append(module)
            _scope_forward(module, name.rsplit(".", 1)[-1], graph)
        root.eval()
        with graph.as_default(), no_grad():
            x = placeholder(dtype, (None,) + tuple(input_shape), name="input")
            root(x)
    finally:
        for module in patched:
            if "forward" in module.__dict__:
                object.__delattr__(module, "forward")
        for p, base in saved_names:
            p.base_name = base
        root.train(was_training)
    return graph


def _scope_forward(module, scope: str, graph) -> None:
    forward = module.forward  # the bound class method

    def scoped(*args, **kwargs):
        with graph.name_scope(scope):
            return forward(*args, **kwargs)

    object.__setattr__(module, "forward", scoped)


def graph_def(model: Any, input_to_model: Any = None, input_shape: Optional[Sequence] = None, dtype: Any = None):
    """A TensorBoard ``GraphDef`` of ``model``: one ``NodeDef`` per graph node, with the op type,
    the names of its inputs (and ``^name`` control inputs), ``dtype``, ``_output_shapes`` (``-1``
    for unknown dimensions) and ``_site`` (where it was created)."""
    pb = _tb()
    attr_value, tensor_shape, types = pb["attr_value_pb2"], pb["tensor_shape_pb2"], pb["types_pb2"]
    from graphgrad.graph.graph import GraphNode

    graph = _trace(model, input_to_model, input_shape, dtype)
    nodes = []
    for node in graph.get_operations():
        inputs = [x._node.name for x in node.inputs if isinstance(x, Tensor) and isinstance(x._node, GraphNode)]
        inputs += [f"^{c.name}" for c in node.control_inputs]
        attrs = {"_site": attr_value.AttrValue(s=str(node.site).encode("utf-8"))}
        if node.out is not None:
            spec = node.out.spec
            shape = spec.shape
            if shape is not None:
                dims = [tensor_shape.TensorShapeProto.Dim(size=-1 if d is None else int(d)) for d in shape]
                proto = tensor_shape.TensorShapeProto(dim=dims)
            else:
                proto = tensor_shape.TensorShapeProto(unknown_rank=True)
            attrs["_output_shapes"] = attr_value.AttrValue(list=attr_value.AttrValue.ListValue(shape=[proto]))
            dt = _DTYPES.get(str(spec.dtype))
            if dt is not None:
                attrs["dtype"] = attr_value.AttrValue(type=getattr(types, dt))
        attrs["op"] = attr_value.AttrValue(s=repr(node.op).encode("utf-8")[:200])
        nodes.append(pb["node_def_pb2"].NodeDef(name=node.name, op=node.type, input=inputs, attr=attrs))
    return pb["graph_pb2"].GraphDef(node=nodes, versions=pb["versions_pb2"].VersionDef(producer=22))
