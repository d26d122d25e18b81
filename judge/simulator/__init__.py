"""The LLM simulator: a server of simulated judges speaking three providers' wire formats.

No provider is reachable from the machines this project is built on, so the demo, the tests
and the benchmark talk to this server through LiteLLM exactly as to a provider. It reads the
requested JSON schema, the conversation from the prompt, and answers per persona (see
:mod:`judge.simulator.personas`; real model names are aliased to personas). Every rationale
starts with ``[simulated ...]``. This package never imports litellm.

The contract is what litellm 1.110.2's own adapters send and parse with a custom
``api_base`` (read in its ``llms/anthropic/chat`` and ``llms/vertex_ai/gemini`` code) and the
providers' API references. Modelled fields, per format:

OpenAI chat completions (``openai/...``, ``api_base=<root>/v1``)
  Request: ``model``, ``messages`` (string or text-part content; ``developer`` read as
  ``system``), ``response_format`` ``{"type": "json_schema", "json_schema": {"schema"}}``,
  ``max_completion_tokens``/``max_tokens``; ``stream: true`` is refused. Reply: ``id``,
  ``object``, ``created``, ``model``, ``system_fingerprint``, ``choices[0].message``
  (``content``; ``refusal`` with ``content: null``; ``tool_calls``), ``finish_reason``
  (``stop``, ``length``, ``tool_calls``), ``usage`` (``prompt_tokens``, ``completion_tokens``,
  ``total_tokens``). Errors: ``{"error": {"message", "type", "param", "code"}}``; 429 with
  ``retry-after`` and ``retry-after-ms``; 503 overload; a blocked input is 400
  ``invalid_prompt`` ("Invalid prompt: ... violating our usage policy", which LiteLLM maps to
  ``ContentPolicyViolationError``).

Anthropic Messages (``anthropic/...``, ``api_base=<root>``; LiteLLM posts ``/v1/messages``)
  Request: headers ``x-api-key`` and ``anthropic-version`` (required, as by the API),
  ``model``, ``max_tokens`` (required), ``system`` (string or text blocks), ``messages``
  (text, ``tool_use`` and ``tool_result`` blocks), structured output either as LiteLLM's
  forced tool ``json_tool_call`` (``tools[].input_schema`` + ``tool_choice``: models without
  native structured output, e.g. claude-3-7-sonnet) or ``output_format``
  ``{"type": "json_schema", "schema"}`` (models the price map marks
  ``supports_native_structured_output``, e.g. claude-sonnet-4-5; LiteLLM adds the
  ``anthropic-beta: structured-outputs-...`` header). Reply: ``id``, ``type: message``,
  ``role``, ``model``, ``content`` (a ``tool_use`` block named ``json_tool_call`` whose
  ``input`` is the judgment, or a ``text`` block), ``stop_reason`` (``tool_use``,
  ``end_turn``, ``max_tokens``, ``refusal`` with ``stop_details.explanation``, which LiteLLM
  turns into ``message.refusal``), ``stop_sequence``, ``usage`` (``input_tokens``,
  ``output_tokens``, ``cache_creation_input_tokens``, ``cache_read_input_tokens``). A tool
  call cut at ``max_tokens`` carries an empty ``input``. Errors: ``{"type": "error",
  "error": {"type", "message"}, "request_id"}`` and a ``request-id`` header; 429
  ``rate_limit_error`` with ``retry-after`` (seconds); 529 ``overloaded_error``; 500
  ``api_error``; 404 ``not_found_error``.

Gemini generateContent (``gemini/...``, ``api_base=<root>/v1beta``)
  Request: path ``models/{model}:generateContent``, key in ``x-goog-api-key`` (or ``?key=``),
  ``contents`` (roles ``user``/``model``, ``parts[].text``, ``functionCall``),
  ``system_instruction``/``systemInstruction`` (LiteLLM folds the system prompt into the first
  user turn for Gemini models it does not know), ``generationConfig`` with ``response_mime_type``
  and ``response_json_schema`` (Gemini 2.0 and later) or ``response_schema`` (the OpenAPI subset
  of older models: upper-case types, string enums), ``max_output_tokens``; snake_case and
  camelCase alike; for a model LiteLLM's map does not mark as taking a schema, the schema it
  appends to the prompt ("Use this JSON schema: ..."). Reply: ``candidates[0]``
  (``content.parts[].text`` or ``functionCall``, ``finishReason``
  ``STOP``/``MAX_TOKENS``/``SAFETY``, ``safetyRatings``), ``promptFeedback.blockReason`` (a
  blocked prompt, no candidates), ``usageMetadata`` (``promptTokenCount``,
  ``candidatesTokenCount``, ``totalTokenCount``), ``modelVersion``, ``responseId``. Errors:
  ``{"error": {"code", "message", "status", "details"}}``; 429 ``RESOURCE_EXHAUSTED`` carries its
  delay as a ``google.rpc.RetryInfo`` ``retryDelay`` detail and in the message ("Please retry in
  1s."; no ``Retry-After`` header, as the API); 503 ``UNAVAILABLE`` overload; 500 ``INTERNAL``.

Prompt caching (:mod:`judge.simulator.prefix_cache`, on unless ``--no-prompt-cache``): OpenAI
reports ``usage.prompt_tokens_details.cached_tokens``; Anthropic reads ``cache_control`` on
``system`` and message blocks as breakpoints and reports ``cache_read_input_tokens`` and
``cache_creation_input_tokens`` apart from ``input_tokens``; Gemini reports
``usageMetadata.cachedContentTokenCount`` within ``promptTokenCount``.

OpenAI Files and Batch APIs (``/v1/files``, ``/v1/batches``): see :mod:`judge.simulator.batches`.

Not modelled: streaming, images, thinking blocks, explicit context caches, citations,
grounding, logprobs, ``n > 1``, Anthropic's and Gemini's batch APIs, token counting endpoints.
"""

from __future__ import annotations

from judge.simulator.app import SimulatorApp, create_app
from judge.simulator.formats import SimError
from judge.simulator.options import SimulatorOptions
from judge.simulator.process import SimulatorProcess, SimulatorStartError
from judge.simulator.replay import ReplayFileError
from judge.simulator.state import SimulatorState, build_state

__all__ = [
    "ReplayFileError",
    "SimError",
    "SimulatorApp",
    "SimulatorOptions",
    "SimulatorProcess",
    "SimulatorStartError",
    "SimulatorState",
    "build_state",
    "create_app",
]
