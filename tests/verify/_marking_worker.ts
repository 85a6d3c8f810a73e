// The real gate worker, with one extra issue in each reply: a test sees which batches a
// worker checked (the pool merges whatever issues come back).
import "../../src/verify/_gate_worker.ts";

const scope = globalThis as unknown as { postMessage(message: unknown): void };
const post = scope.postMessage.bind(scope);
scope.postMessage = (message: unknown) => {
  const reply = message as { id: number; issues: { kind: string; message: string }[] };
  post({ ...reply, issues: [...reply.issues, { kind: "worker", message: "checked by a worker" }] });
};
