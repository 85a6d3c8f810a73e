// The plan graph as a JSON document for `--json` output (absent optional values as `null`).

import type { JsonObject, JsonValue } from "../canonical/mod.ts";
import type { AttachmentDeclaration } from "./host_attachment.ts";
import type { CompletionSignal, PlanGraph, PlanStep } from "./types.ts";

/** A declared attachment as JSON: its path, or the held value as given. */
function declarationJson(d: AttachmentDeclaration): JsonValue {
  if (typeof d === "string") return d;
  if ("text" in d) return { name: d.name, text: d.text };
  return { name: d.name, image: { mime: d.image.mime, base64: d.image.base64 } };
}

function signalJson(signal: CompletionSignal): JsonObject {
  switch (signal.kind) {
    case "path_exists":
      return { kind: signal.kind, path: signal.path };
    case "glob_exists":
      return { kind: signal.kind, glob: signal.glob };
    case "file_contains":
      return "regex" in signal
        ? { kind: signal.kind, path: signal.path, regex: signal.regex }
        : { kind: signal.kind, path: signal.path, contains: signal.contains };
    case "test_passes":
      return { kind: signal.kind, command: [...signal.command], timeout_s: signal.timeout_s };
  }
}

function stepJson(step: PlanStep): JsonObject {
  return {
    id: step.id,
    stage: step.stage,
    title: step.title,
    description: step.description,
    role: step.role,
    priority: step.priority,
    scope: step.scope,
    complexity: step.complexity,
    cli: step.cli ?? null,
    model: step.model ?? null,
    effort: step.effort ?? null,
    files: [...step.files],
    completion_signals: step.completion_signals.map(signalJson),
    attachments: step.attachments.map(declarationJson),
    depends_on: [...step.depends_on],
    condition: step.condition === undefined ? null : {
      on: [...step.condition.on],
      stage: step.condition.stage,
      condition: step.condition.condition,
    },
    field: step.field,
    location: step.location,
  };
}

/** The graph as a JSON document (absent optional values as `null`), for `--json` output. */
export function planGraphJson(graph: PlanGraph): JsonObject {
  return {
    name: graph.name,
    description: graph.description,
    source: graph.source,
    cli: graph.cli ?? null,
    max_agents: graph.max_agents ?? null,
    stages: graph.stages.map((s) => ({
      name: s.name,
      depends_on: [...s.depends_on],
      condition: s.condition === undefined ? null : { ...s.condition },
      step_ids: [...s.step_ids],
    })),
    steps: graph.steps.map(stepJson),
  };
}
