// A gate worker that dies on its first batch (tests the pool's fallback to the main thread).
(globalThis as unknown as { onmessage: (e: MessageEvent) => void }).onmessage = (e) => {
  if ((e.data as { type: string }).type === "batch") throw new Error("worker died on purpose");
};
