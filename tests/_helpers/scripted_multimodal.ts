// Registers the scripted test agent as multimodal for the length of one test (in-process tests;
// e2e tests run bernstein through tests/_helpers/multimodal_main.ts instead).
import {
  registerScriptedAsMultimodal,
  type ScriptedTestChannel,
} from "../../src/adapters/capabilities.ts";

/** Runs `fn` with the scripted agent taking images on `channel`, and undoes it after. */
export async function withScriptedMultimodal<T>(
  channel: ScriptedTestChannel,
  fn: () => T | Promise<T>,
): Promise<T> {
  registerScriptedAsMultimodal(channel);
  try {
    return await fn();
  } finally {
    registerScriptedAsMultimodal(undefined);
  }
}
