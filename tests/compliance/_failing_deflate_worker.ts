// A deflate worker that fails on the first piece it gets (tests/compliance/off_thread_deflate_test.ts).
(globalThis as unknown as { onmessage: () => void }).onmessage = () => {
  throw new Error("deflate worker broke");
};
