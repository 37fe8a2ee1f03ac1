"""Static graphs, TensorFlow-1 style: Graph, placeholder, Variable, constant, Session, gradients."""
from graphgrad.graph.graph import (Graph, GraphNode, control_dependencies, get_default_graph, name_scope,
                                   reset_default_graph)
from graphgrad.graph.variables import (Variable, constant, global_variables, global_variables_initializer, group,
                                       no_op, placeholder, placeholder_with_default, trainable_variables,
                                       variables_initializer)
from graphgrad.graph.session import Session, get_default_session
from graphgrad.graph.gradients import gradients, hessians
from graphgrad.graph import control_flow  # noqa: F401  (gg.graph.control_flow: while_loop, cond, tensor lists)

__all__ = ["Graph", "GraphNode", "control_dependencies", "get_default_graph", "name_scope", "reset_default_graph",
           "Variable", "constant", "global_variables", "global_variables_initializer", "group", "no_op",
           "placeholder", "placeholder_with_default", "trainable_variables", "variables_initializer", "Session",
           "get_default_session", "gradients", "hessians"]
