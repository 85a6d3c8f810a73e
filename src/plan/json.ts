// The plan graph as a JSON document for `--json` output (absent optional values as `null`).

import type { JsonObject, JsonValue } from "../canonical/mod.ts";
import type { AttachmentDeclaration } from "./host_attachment.ts";
import {
  type CompletionSignal,
  type PlanGraph,
  type PlanStep,
  STEP_FIELDS,
  type StepFields,
} from "./types.ts";

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

/** The step's {@linkcode STEP_FIELDS}, in their order; an absent optional one as `null`. */
function stepFieldsJson(step: StepFields): JsonObject {
  const out: JsonObject = {};
  for (const key of STEP_FIELDS) {
    switch (key) {
      case "completion_signals":
        out[key] = step.completion_signals.map(signalJson);
        break;
      case "attachments":
        out[key] = step.attachments.map(declarationJson);
        break;
      case "files":
        out[key] = [...step.files];
        break;
      case "connections":
        // Printed only when the step names some (older outputs stay as they were).
        if (step.connections !== undefined) {
          out[key] = step.connections.map((c) => ({ name: c.name, env: c.env }));
        }
        break;
      default:
        out[key] = step[key] ?? null;
    }
  }
  return out;
}

function stepJson(step: PlanStep): JsonObject {
  return {
    id: step.id,
    stage: step.stage,
    ...stepFieldsJson(step),
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
