"""An inspect_ai model that needs no network: ``--model acdb/empty_graph``.

inspect's own ``mockllm/model`` counts tokens with tiktoken, which downloads its encoding on
first use, so it fails on a machine with no network. This model answers every turn with one
``submit_graph`` call of the empty graph and reports its token usage itself (zero), so
``inspect eval acdb_gym/acdb --model acdb/empty_graph`` runs the whole task (episode, tool
call, scorer, log) offline: a smoke path, not an agent (its scores are the empty graph's).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

__all__ = ["EMPTY_GRAPH_MODEL", "EmptyGraphModel", "acdb_model"]

EMPTY_GRAPH_MODEL = "acdb/empty_graph"
"""The ``--model`` name of :class:`EmptyGraphModel`."""


class EmptyGraphModel(ModelAPI):
    """Submits the empty graph on its first turn; no network, no tokenizer."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (inspect's ModelAPI signature)
        **model_args: Any,
    ) -> None:
        if model_name != "empty_graph":
            raise ValueError(f"the acdb provider has one model, empty_graph; got {model_name!r}")
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        output = ModelOutput.for_tool_call(
            model=EMPTY_GRAPH_MODEL,
            tool_name="submit_graph",
            tool_arguments={"directed_edges": [], "undirected_edges": []},
        )
        output.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
        return output


@modelapi(name="acdb")
def acdb_model() -> type[ModelAPI]:
    """inspect's registration of the ``acdb/...`` provider."""
    return EmptyGraphModel
